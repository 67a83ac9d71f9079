#!/usr/bin/env bash
# Download into .whl/ the wheels the lent GPU machine lacks, for scripts/gpu_check.sh to install there
# (that machine reaches no package registry; .whl/ travels with the working tree, 64 MiB in all).
#   bash scripts/fetch_gpu_wheels.sh           Python 3.12, manylinux x86_64 wheels, no dependencies
# (antlr4-python3-runtime is an sdist only: its pure-Python wheel is built locally.)
# Versions are pinned to the ones installed in the project's venv (PYTHON, default .venv/bin/python)
# when it has them, so the GPU run uses what the CPU suite was tested with. Ray's wheel loses ray/jars/
# (Java workers) and ray/dashboard/client/ (the web UI's build), which nothing here uses; its RECORD is
# rewritten to match. Ends with the total size and any requirement of a downloaded wheel that is neither
# in .whl/ nor on the GPU machine already (MACHINE_HAS below), and fails if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
DEST=.whl

# What the project needs (setup.py's core requirements and theirs) that the machine does not have.
PKGS=(
  ray                                              # ray[default]: the dashboard extras are not needed
  hydra-core omegaconf                             # + antlr4-python3-runtime, built below
  fastapi starlette pydantic pydantic-core annotated-types typing-inspection annotated-doc opentelemetry-api
  uvicorn httptools orjson
  tensordict cloudpickle pyvers
  bm25s PyStemmer rapidfuzz
  jsonschema jsonschema-specifications referencing rpds-py   # ray's
  gguf                                             # reading SmolLM2's GGUF (scripts/gpu_learning.sh)
)
# Already on the GPU machine (Python 3.12, torch 2.11+cu130, transformers 5.x): never shipped.
MACHINE_HAS="torch transformers tokenizers safetensors numpy pandas pyarrow requests pyyaml jinja2 pytest
aiohttp psutil matplotlib tensorboard rich tqdm uvloop msgpack fsspec filelock huggingface-hub accelerate peft
regex h11 httpx anyio click typing-extensions packaging numba llvmlite pytest-timeout sympy mpmath protobuf
grpcio attrs markupsafe"

specs=()
for pkg in "${PKGS[@]}"; do
  ver=$("$PY" -c "import importlib.metadata as m; print(m.version('$pkg'))" 2>/dev/null || true)
  specs+=("${pkg}${ver:+==$ver}")
done

rm -rf "$DEST" && mkdir -p "$DEST"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  -d "$DEST" "${specs[@]}"
# omegaconf/hydra need antlr4-python3-runtime 4.9.*, published as an sdist only: build its (pure) wheel here.
ver=$("$PY" -c "import importlib.metadata as m; print(m.version('antlr4-python3-runtime'))" 2>/dev/null || echo 4.9.3)
"$PY" -m pip wheel -q --no-deps -w "$DEST" "antlr4-python3-runtime==$ver"

"$PY" - "$DEST" "$MACHINE_HAS" <<'EOF'
"""Strip Ray's wheel, then check that every requirement of the shipped wheels is met on the machine."""
import csv, glob, io, os, re, sys, zipfile

dest, machine_has = sys.argv[1], sys.argv[2].split()
norm = lambda name: re.sub(r"[-_.]+", "-", name).lower()

for path in glob.glob(os.path.join(dest, "ray-*.whl")):
    drop = ("ray/jars/", "ray/dashboard/client/")
    tmp = path + ".tmp"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            if info.filename.startswith(drop):
                continue
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                rows = [r for r in csv.reader(io.StringIO(data.decode())) if r and not r[0].startswith(drop)]
                buf = io.StringIO()
                csv.writer(buf, lineterminator="\n").writerows(rows)
                data = buf.getvalue().encode()
            out.writestr(info, data)
    before = os.path.getsize(path)
    os.replace(tmp, path)
    print(f"stripped {os.path.basename(path)}: {before / 2**20:.1f} -> {os.path.getsize(path) / 2**20:.1f} MiB")

shipped, missing = {}, []
for path in sorted(glob.glob(os.path.join(dest, "*.whl"))):
    shipped[norm(os.path.basename(path).split("-")[0])] = path
env = {"python_version": "3.12", "sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
       "platform_machine": "x86_64", "implementation_name": "cpython", "platform_python_implementation": "CPython",
       "extra": ""}
for name, path in shipped.items():
    with zipfile.ZipFile(path) as whl:
        meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        for line in whl.read(meta).decode().splitlines():
            if not line.startswith("Requires-Dist:"):
                continue
            req, _, marker = line.split(":", 1)[1].partition(";")
            if marker.strip():
                try:
                    from packaging.markers import Marker
                    if not Marker(marker).evaluate(env):
                        continue
                except ImportError:  # without packaging, only drop extras
                    if "extra" in marker:
                        continue
            dep = norm(re.match(r"\s*([A-Za-z0-9_.\-]+)", req).group(1))
            if dep not in shipped and dep not in map(norm, machine_has):
                missing.append(f"{name} needs {req.strip()}")
total = sum(os.path.getsize(p) for p in shipped.values())
print(f"{len(shipped)} wheels in {dest}/: {total / 2**20:.1f} MiB")
for m in missing:
    print("UNMET:", m)
sys.exit(1 if missing else 0)
EOF
