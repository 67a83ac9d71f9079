#!/usr/bin/env bash
# Make sure Debian's Chromium is installed (the WebArena server drives it through Playwright; Playwright's
# own browser download is never used). Installs it with apt-get when missing and we are root.
# Default: Debian's headless shell (package chromium-headless-shell, /usr/bin/chromium-headless-shell),
# what the server prefers for headless runs (a step costs ~2x less CPU than with the full browser).
#   CHROMIUM=/usr/bin/chromium bash scripts/install_chromium.sh   the full browser (needed for --headful)
#   CHROMIUM=/path/to/chromium ...   any other binary (also WEBARENA_CHROMIUM): must already exist
set -euo pipefail
bin="${CHROMIUM:-${WEBARENA_CHROMIUM:-/usr/bin/chromium-headless-shell}}"
if [ -x "$bin" ]; then echo "chromium: $bin"; exit 0; fi
case "$bin" in
  /usr/bin/chromium-headless-shell) pkg=chromium-headless-shell ;;
  /usr/bin/chromium) pkg=chromium ;;
  *) echo "ERROR: $bin not found (set CHROMIUM/WEBARENA_CHROMIUM to an existing binary)" >&2; exit 1 ;;
esac
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ERROR: $bin not found; install it (Debian: apt-get install -y $pkg) or set WEBARENA_CHROMIUM" >&2
  exit 1
fi
echo "installing Debian's $pkg (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq "$pkg" >/dev/null
[ -x "$bin" ] || { echo "ERROR: apt-get installed no $bin" >&2; exit 1; }
echo "chromium: $bin"
