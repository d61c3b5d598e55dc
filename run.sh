#!/usr/bin/env bash
# opbridge's one entry point for developers and CI.
#
#   ./run.sh demo     set up, build, then export a small detector, run it in ORT and verify it
#   ./run.sh test     set up, build, then run every test (C++ kernels, library through ORT, export)
#   ./run.sh bench    set up, build, then benchmark against ORT built-ins and PyTorch eager
#   ./run.sh setup    only install what is missing (Debian packages, ORT headers, .venv)
#   ./run.sh build    setup, then build the C++ library and tests into build/
#
# Every step is skipped when its result is already there, so a second run only rebuilds what
# changed. ONNXRUNTIME_ROOT=<ORT release folder> uses those headers instead of fetching them.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="$ROOT/.cache"
VENV="$ROOT/.venv"
BUILD="$ROOT/build"
ORT_HEADERS_VERSION="1.21.0"
# qemu-user runs the C++ tests as older CPUs see them (below); libeigen3-dev is for the kernel
# benchmarks' GEMM comparison only.
APT_PACKAGES=(g++ libgtest-dev libbenchmark-dev libeigen3-dev qemu-user)

log() { printf '[run.sh] %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

setup_debian_packages() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return
  log "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The ORT C API headers 1.21 come from Debian 13's libonnxruntime-dev, fetched with a private
# apt configuration (the system's sources are left alone) and unpacked into .cache.
setup_ort_headers() {
  if [ -n "${ONNXRUNTIME_ROOT:-}" ]; then
    ORT_ROOT="$ONNXRUNTIME_ROOT"
    return
  fi
  ORT_ROOT="$CACHE/ort-$ORT_HEADERS_VERSION/usr"
  [ -f "$ORT_ROOT/include/onnxruntime/onnxruntime_c_api.h" ] && return
  log "fetching ORT $ORT_HEADERS_VERSION headers (Debian trixie libonnxruntime-dev)"
  local apt_dir="$CACHE/apt-trixie"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
  local mirror
  # The machine's own Debian mirror (one-line or deb822 sources), else Debian's default one.
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
            | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ' || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${mirror%/} trixie main" > "$apt_dir/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
              -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache::Archives=$apt_dir/archives"
              -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
  apt-get "${opts[@]}" update -qq
  (cd "$apt_dir" && apt-get "${opts[@]}" download "libonnxruntime-dev=$ORT_HEADERS_VERSION*" >/dev/null)
  rm -rf "$CACHE/ort-$ORT_HEADERS_VERSION"
  dpkg-deb -x "$apt_dir"/libonnxruntime-dev_*.deb "$CACHE/ort-$ORT_HEADERS_VERSION"
  rm -rf "$apt_dir"
}

setup_venv() {
  local stamp="$VENV/.opbridge-requirements"
  local want
  want="$(cat "$ROOT/requirements.txt" "$ROOT/requirements.lock" | sha256sum | cut -d' ' -f1)"
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV"
    python3 -m venv "$VENV"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing pinned Python packages into .venv (torch is large: a few minutes)"
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$ROOT/requirements.txt" -c "$ROOT/requirements.lock"
    echo "$want" > "$stamp"
  fi
  # The package is used from the source tree: a .pth file puts python/ on the path.
  local site
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$ROOT/python" > "$site/opbridge-dev.pth"
}

# The deployer's environment: onnxruntime, onnx and numpy at .venv's pins, plus pytest, and no
# torch. tests/python/test_deploy_without_torch.py runs the package in it to prove that deploying
# needs nothing else. A stamp file skips the install until requirements.lock changes.
DEPLOY_VENV="$CACHE/venv-deploy"
DEPLOY_PACKAGES=(onnxruntime onnx numpy pytest)
setup_deploy_venv() {
  local stamp="$DEPLOY_VENV/.opbridge-requirements"
  local want
  want="$( (echo "${DEPLOY_PACKAGES[*]}"; cat "$ROOT/requirements.lock") | sha256sum | cut -d' ' -f1)"
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return
  log "creating the torch-free deploy environment $DEPLOY_VENV"
  rm -rf "$DEPLOY_VENV"
  python3 -m venv "$DEPLOY_VENV"
  "$DEPLOY_VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "${DEPLOY_PACKAGES[@]}" -c "$ROOT/requirements.lock"
  echo "$want" > "$stamp"
}

setup() {
  setup_debian_packages
  setup_ort_headers
  setup_venv
  setup_deploy_venv
}

build() {
  setup
  export PATH="$VENV/bin:$PATH"
  if [ ! -f "$BUILD/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DONNXRUNTIME_ROOT="$ORT_ROOT" -DOPBRIDGE_BUILD_BENCHMARKS=ON >/dev/null
  fi
  cmake --build "$BUILD"
}

run_tests() {
  build
  "$BUILD/opbridge_cpp_tests" --gtest_brief=1
  # The kernels pick their vector code at run time (AVX-512, AVX2 or SSE4.2). On x86-64, run the
  # C++ tests again on emulated CPUs without AVX-512 (Haswell: x86-64-v3) and without AVX
  # (Nehalem: x86-64-v2, the oldest the library supports), so that every variant is tested
  # whatever machine runs CI; OPBRIDGE_EXPECT_CPU_LEVEL makes the tests check that the
  # emulated CPU got the variant meant for it.
  # (Haswell without the features QEMU's emulator lacks, which it would warn about.)
  local QEMU_HASWELL="Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"
  if [ "$(uname -m)" = x86_64 ]; then
    log "C++ tests on an emulated Haswell (x86-64-v3: AVX2, no AVX-512)"
    OPBRIDGE_EXPECT_CPU_LEVEL=x86-64-v3 qemu-x86_64 -cpu "$QEMU_HASWELL" "$BUILD/opbridge_cpp_tests" --gtest_brief=1
    log "C++ tests on an emulated Nehalem (x86-64-v2: SSE4.2, no AVX)"
    OPBRIDGE_EXPECT_CPU_LEVEL=x86-64-v2 qemu-x86_64 -cpu Nehalem "$BUILD/opbridge_cpp_tests" --gtest_brief=1
  fi
  cd "$ROOT"
  "$VENV/bin/python" -m pytest tests/python -q -p no:cacheprovider "$@"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  setup) setup ;;
  build) build ;;
  demo) build; "$VENV/bin/python" -m opbridge demo "$@" ;;
  test) run_tests "$@" ;;
  bench) build; "$VENV/bin/python" -m opbridge bench "$@" ;;
  *) echo "usage: ./run.sh demo|test|bench|setup|build" >&2; exit 2 ;;
esac
