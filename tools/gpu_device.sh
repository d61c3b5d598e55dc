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
#                                   rebuilds onnxruntime-gpu under /tmp/gpu-device/site and runs, with
#                                   the carried library, the steps of ./run.sh test-gpu at once (STEPS:
#                                   some of "twins detectors memcheck racecheck initcheck synccheck smoke
#                                   bench profile", default all but smoke), each stopped after
#                                   $OPBRIDGE_GPU_STEP_LIMIT s (280), then alone the timed bench
#                                   (opbridge bench --device cuda; smoke: every CUDA workload's engines
#                                   once on reduced inputs; profile: the kernels of the rows held to 1.0x
#                                   under ncu), each stopped after $OPBRIDGE_GPU_BENCH_LIMIT s (210);
#                                   one log per step goes to $OUT (else /tmp/gpu-device/logs)
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
  local steps="${1:-twins detectors memcheck racecheck initcheck synccheck bench profile}" status=0 step
  local logs="${OUT:-$THERE/logs}" limit="${OPBRIDGE_GPU_STEP_LIMIT:-280}" bench_limit="${OPBRIDGE_GPU_BENCH_LIMIT:-210}"
  mkdir -p "$THERE" "$logs"
  tar -C "$THERE" -xJf "$HERE/rest.tar.xz"
  local capi
  capi="$(find "$THERE/site" -type d -name capi | head -n 1)"
  cat "$THERE"/parts/part.* | xz -dc > "$capi/libonnxruntime_providers_cuda.so"
  # (the machine has no unzip: a wheel is a zip file that Python's zipfile extracts)
  for wheel in "$THERE"/wheels/*.whl; do python3 -m zipfile -e "$wheel" "$THERE/site"; done
  export PYTHONPATH="$THERE/site" OPBRIDGE_LIBRARY="$THERE/libopbridge_ort.so" OPBRIDGE_GPU_PYTHON=python3
  export OPBRIDGE_NO_BUILD=1 PYTHONUNBUFFERED=1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  PYTHONPATH="$ROOT/python:$PYTHONPATH" python3 -c 'import onnxruntime, torch, opbridge
print("onnxruntime", onnxruntime.__version__, onnxruntime.get_available_providers(), "torch", torch.__version__)
print(opbridge.library_info())' || true
  # The test steps at once, each its own process and log, each stopped after $limit seconds: on a
  # machine lent for minutes the sanitizers cannot run one after the other. The GPU is shared by
  # them, which changes no result; the timed bench runs afterwards, alone.
  local tests=() started per_test_limit=()
  python3 -c "import pytest_timeout" 2>/dev/null && per_test_limit=(--timeout "${OPBRIDGE_GPU_TEST_LIMIT:-120}")
  for step in $steps; do
    [[ "$step" == bench || "$step" == smoke || "$step" == profile ]] || tests+=("$step")
  done
  started=$SECONDS
  for step in "${tests[@]}"; do
    local workers=1
    [ "$step" = twins ] && workers=6
    [ "$step" = detectors ] && workers=4
    # -v names every test as it ends, so a log cut at the limit says how far the step got and which
    # test a crashed worker ran; --timeout (pytest-timeout, on the machine's image) names a test
    # that hangs instead of letting it take the step's whole time.
    ( timeout -k 5 "$limit" env OPBRIDGE_GPU_STEPS="$step" OPBRIDGE_GPU_WORKERS="$workers" "$ROOT/run.sh" test-gpu \
        -v "${per_test_limit[@]}" > "$logs/$step.log" 2>&1
      echo "[$step: exit $? after $((SECONDS - started)) s; 124 = stopped at the limit]" >> "$logs/$step.log" ) &
  done
  wait
  for step in "${tests[@]}"; do
    echo "=== $step"
    grep -E "passed|failed|error|ERROR|FAILED|crashed|exit [0-9]" "$logs/$step.log" | tail -n 12 || true
    tail -n 1 "$logs/$step.log" | grep -q "exit 0 " || status=1
  done
  if [[ " $steps " == *" smoke "* ]]; then
    PYTHONPATH="$ROOT/python:$PYTHONPATH" OPBRIDGE_CUDA_SYNC=1 timeout "$bench_limit" python3 -m opbridge bench \
      --device cuda --smoke > "$logs/smoke.txt" 2>&1 || status=1
  fi
  if [[ " $steps " == *" bench "* ]]; then
    PYTHONPATH="$ROOT/python:$PYTHONPATH" timeout "$bench_limit" python3 -m opbridge bench --device cuda --runs 20 \
      --threads 1 > "$logs/bench.txt" 2>&1 || status=1
    cat "$logs/bench.txt"
  fi
  if [[ " $steps " == *" profile "* ]]; then
    # Every kernel of the rows the GPU issue holds to 1.0x (ours and the competitors'), one run each,
    # under Nsight Compute: duration, registers, occupancy, memory throughput (the clocks as they are).
    PYTHONPATH="$ROOT/python:$PYTHONPATH" timeout "$bench_limit" ncu --clock-control none --launch-count 200 \
      --section SpeedOfLight --section Occupancy --section LaunchStats python3 -m opbridge bench roi_align.box \
      roi_align.mask grid_sample.warp grid_sample.batch grid_sample.volume norm.instance norm.group --device cuda \
      --runs 1 --threads 1 > "$logs/ncu.txt" 2>&1 || status=1
    grep -E "^  [a-zA-Z_:<]|Duration|Registers Per|Achieved Occupancy|DRAM Throughput" "$logs/ncu.txt" \
      | cut -c 1-150 | head -n 400 || true
  fi
  return "$status"
}

case "${1:-}" in
  prepare) prepare ;;
  stash) stash "$2" ;;
  run) shift; run "$@" ;;
  *) echo "usage: tools/gpu_device.sh prepare | stash PART | run [STEPS]" >&2; exit 2 ;;
esac
