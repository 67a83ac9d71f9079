#!/usr/bin/env bash
# Make sure Debian's Chromium is installed (the WebArena server drives it through Playwright; Playwright's
# own browser download is never used). Installs it with apt-get when missing and we are root.
#   CHROMIUM=/path/to/chromium bash scripts/install_chromium.sh   use another binary (also WEBARENA_CHROMIUM)
set -euo pipefail
bin="${CHROMIUM:-${WEBARENA_CHROMIUM:-/usr/bin/chromium}}"
if [ -x "$bin" ]; then echo "chromium: $bin"; exit 0; fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ERROR: $bin not found; install Chromium (Debian: apt-get install -y chromium) or set WEBARENA_CHROMIUM" >&2
  exit 1
fi
echo "installing Debian's chromium (apt-get)"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq chromium >/dev/null
[ -x /usr/bin/chromium ] || { echo "ERROR: apt-get installed no /usr/bin/chromium" >&2; exit 1; }
echo "chromium: /usr/bin/chromium"
