#!/usr/bin/env bash
# Running the GPU checks on a lent device machine (../shared or the session's device tool): one that
# has python3 with PyTorch (CUDA), torchvision, onnx and numpy, the CUDA toolkit and
# compute-sanitizer, but no network, and takes at most 64 MiB of ignored files per call.
#
#   tools/gpu_device.sh prepare     here, after ./run.sh build: fills .cache/gpu-device/ with the
#                                   CUDA build of the library, onnxruntime-gpu 1.31.1 (its 185 MB CUDA
#                                   provider xz-compressed and split in parts under 63 MB) and the
#                                   pure-Python wheels of pytest and pytest-xdist; prints the parts
#   tools/gpu_device.sh stash PART  there, one call per part (carrying .cache/gpu-device/PART):
#                                   moves it out of the tree, to /tmp/gpu-device, where the next call
#                                   finds it (a machine idle 30 s is given back: call again at once)
#   tools/gpu_device.sh run [STEPS] there, the last call (carrying .cache/gpu-device/rest.tar.xz):
#                                   rebuilds onnxruntime-gpu under /tmp/gpu-device/site and runs
#                                   ./run.sh test-gpu (STEPS: some of "twins detectors memcheck racecheck
#                                   initcheck synccheck smoke bench", default all) with the carried
#                                   library; smoke runs every CUDA workload's engines once on reduced
#                                   inputs (opbridge bench --smoke --device cuda); the bench table goes to
#                                   $OUT/bench.txt when $OUT is set
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/.cache/gpu-device"
THERE=/tmp/gpu-device
ORT_GPU="onnxruntime-gpu==1.31.1"
# What the tests need beyond the machine's python3 (torch, torchvision, onnx, numpy), at the lock's
# versions (pip downloads them for the device's CPython 3.12): pytest and pytest-xdist, and onnxscript for opbridge.ops (ml_dtypes is its one binary).
PURE_WHEELS=(pytest==9.1.1 pluggy==1.7.0 iniconfig==2.3.1 packaging==26.3 pytest-xdist==3.8.0 execnet==2.1.2
             filelock==4.2.11 onnxscript==0.7.2 onnx-ir==1.1.0)
BINARY_WHEELS=(ml_dtypes==0.6.0)

prepare() {
  [ -f "$ROOT/build/libopbridge_ort.so" ] || { echo "build the library first: ./run.sh build" >&2; exit 1; }
  rm -rf "$HERE" && mkdir -p "$HERE/work/wheels"
  local pip=("$ROOT/.venv/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12
             --implementation cp --platform manylinux_2_28_x86_64 -d "$HERE/work")
  "${pip[@]}" "$ORT_GPU"
  "${pip[@]}" -d "$HERE/work/wheels" "${BINARY_WHEELS[@]}"
  "$ROOT/.venv/bin/python" -m pip download -q --no-deps --only-binary=:all: -d "$HERE/work/wheels" "${PURE_WHEELS[@]}"
  (cd "$HERE/work" && mkdir site && cd site && unzip -q ../onnxruntime_gpu-*.whl)
  local big
  big="$(find "$HERE/work/site" -name 'libonnxruntime_providers_cuda.so')"
  xz -T2 -6 -c "$big" | split -b 63000000 - "$HERE/part."
  rm "$big"
  cp "$ROOT/build/libopbridge_ort.so" "$HERE/work/"
  tar -C "$HERE/work" -cJf "$HERE/rest.tar.xz" site wheels libopbridge_ort.so
  rm -rf "$HERE/work"
  echo "carry one per call, then rest.tar.xz with 'run':"
  (cd "$ROOT" && ls -1 .cache/gpu-device/part.* .cache/gpu-device/rest.tar.xz)
}

stash() {
  mkdir -p "$THERE/parts"
  mv "$HERE/$1" "$THERE/parts/"
  ls -l "$THERE/parts"
}

run() {
  local steps="${1:-twins detectors memcheck racecheck initcheck synccheck smoke bench}" status=0
  mkdir -p "$THERE"
  tar -C "$THERE" -xJf "$HERE/rest.tar.xz"
  local capi
  capi="$(find "$THERE/site" -type d -name capi | head -n 1)"
  cat "$THERE"/parts/part.* | xz -dc > "$capi/libonnxruntime_providers_cuda.so"
  for wheel in "$THERE"/wheels/*.whl; do (cd "$THERE/site" && unzip -qo "$wheel"); done
  export PYTHONPATH="$THERE/site" OPBRIDGE_LIBRARY="$THERE/libopbridge_ort.so" OPBRIDGE_GPU_PYTHON=python3
  export OPBRIDGE_NO_BUILD=1 OPBRIDGE_GPU_WORKERS="${OPBRIDGE_GPU_WORKERS:-8}"
  nvidia-smi -L || true
  local tests="${steps//bench/}"
  tests="${tests//smoke/}"
  if [ -n "${tests// /}" ]; then
    OPBRIDGE_GPU_STEPS="$tests" "$ROOT/run.sh" test-gpu || status=1
  fi
  if [[ " $steps " == *" smoke "* ]]; then
    PYTHONPATH="$ROOT/python:$PYTHONPATH" OPBRIDGE_CUDA_SYNC=1 python3 -m opbridge bench --device cuda --smoke \
      | tee "${OUT:-$THERE}/smoke.txt" || status=1
  fi
  if [[ " $steps " == *" bench "* ]]; then
    PYTHONPATH="$ROOT/python:$PYTHONPATH" python3 -m opbridge bench --device cuda --runs 20 --threads 1 \
      | tee "${OUT:-$THERE}/bench.txt" || status=1
  fi
  return "$status"
}

case "${1:-}" in
  prepare) prepare ;;
  stash) stash "$2" ;;
  run) shift; run "$@" ;;
  *) echo "usage: tools/gpu_device.sh prepare | stash PART | run [STEPS]" >&2; exit 2 ;;
esac
