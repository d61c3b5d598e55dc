#!/usr/bin/env bash
# opbridge's one entry point for developers and CI.
#
#   ./run.sh demo     set up, build, then export a small detector, run it in ORT and verify it
#   ./run.sh test     set up, build, then run every test (C++ kernels, library through ORT, export)
#   ./run.sh bench    set up, build, then benchmark against ORT built-ins and PyTorch eager
#   ./run.sh wheels   set up, then build the release wheels (x86-64 with CUDA, aarch64, win_amd64) into dist/
#   ./run.sh test-wheels  set up, build, then only the wheel steps of ./run.sh test
#   ./run.sh test-windows set up, build, then only the Windows steps of ./run.sh test (under Wine)
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
# qemu-user runs the C++ tests as older CPUs see them, and the aarch64 build (below);
# g++-aarch64-linux-gnu cross-compiles that build (with the aarch64 glibc and libstdc++ it runs on);
# libeigen3-dev is for the kernel benchmarks' GEMM comparison only.
# mingw-w64 cross-compiles the Windows build, which wine (wine64: 64-bit programs) runs.
APT_PACKAGES=(g++ libgtest-dev libbenchmark-dev libeigen3-dev qemu-user g++-aarch64-linux-gnu mingw-w64 wine wine64)

# Each message carries the seconds since run.sh started, so a slow CI run shows which step grew.
log() { printf '[run.sh %4ds] %s\n' "$SECONDS" "$*" >&2; }

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

# The machine's own Debian mirror (one-line or deb822 sources), else Debian's default one, for the
# private apt configurations below (and tools/aarch64_python.sh's).
debian_mirror() {
  local mirror
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
            | grep -oE 'https?://[^ ]+/debian/?( |$)' | head -n1 | tr -d ' ' || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"
  echo "${mirror%/}"
}

# PRIVATE_APT_OPTIONS: apt-get options that make DIR (with DIR/sources.list, DIR/lists/partial and
# DIR/archives/partial) apt's whole state, so that the system's sources, lists and caches are left
# alone (Dir::Cache too: with apt's default configuration, update rewrites /var/cache/apt/*.bin).
private_apt_options() {
  PRIVATE_APT_OPTIONS=(-o "Dir::Etc::SourceList=$1/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
                       -o "Dir::State::Lists=$1/lists" -o "Dir::Cache=$1" -o "Dir::Cache::Archives=$1/archives"
                       -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
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
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) trixie main" > "$apt_dir/sources.list"
  private_apt_options "$apt_dir"
  local opts=("${PRIVATE_APT_OPTIONS[@]}")
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

# setup_side_venv DIR WHAT PACKAGES...: a virtual environment at DIR with PACKAGES installed at
# requirements.lock's pins where it has them. A stamp file skips the install until the list or the
# lock changes.
setup_side_venv() {
  local dir="$1" what="$2"
  shift 2
  local stamp="$dir/.opbridge-requirements"
  local want
  want="$( (echo "$*"; cat "$ROOT/requirements.lock") | sha256sum | cut -d' ' -f1)"
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return
  log "creating $what $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" -c "$ROOT/requirements.lock"
  echo "$want" > "$stamp"
}

# The deployer's environment: onnxruntime, onnx and numpy at .venv's pins, plus pytest, and no
# torch. tests/python/test_deploy_without_torch.py runs the package in it to prove that deploying
# needs nothing else.
DEPLOY_VENV="$CACHE/venv-deploy"
setup_deploy_venv() { setup_side_venv "$DEPLOY_VENV" "the torch-free deploy environment" onnxruntime onnx numpy pytest; }

# The serving environment: the serve extra (ray[serve]) with onnxruntime, onnx and numpy, pytest,
# and no torch: tests/serve runs there (test_serve).
SERVE_VENV="$CACHE/venv-serve"
setup_serve_venv() {
  setup_side_venv "$SERVE_VENV" "the serving environment (ray[serve])" "ray[serve]==2.60.0" onnxruntime onnx numpy pytest
}

# The CUDA compiler comes with .venv (requirements.txt: cuda-toolkit[nvcc,...], the wheels of the
# CUDA release torch's pins name), never from the system. The wheels lay the toolkit out under
# site-packages/nvidia/cu13 with its libraries in lib/, where nvcc's link step looks in lib64/:
# a lib64 -> lib link (made once) is all nvcc needs.
setup_cuda_toolkit() {
  local site
  site="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  CUDA_HOME_DIR="$site/nvidia/cu13"
  NVCC="$CUDA_HOME_DIR/bin/nvcc"
  [ -x "$NVCC" ] || { echo "run.sh: $NVCC is missing: the cuda-toolkit wheels did not install" >&2; return 1; }
  [ -e "$CUDA_HOME_DIR/lib64" ] || ln -s lib "$CUDA_HOME_DIR/lib64"
}

# zig (the ziglang wheel in .venv, requirements.txt) links the library against glibc 2.28's symbols
# (CMakeLists.txt: OPBRIDGE_GLIBC_2_28), so that build/'s library is the one the wheels carry.
setup_zig() {
  ZIG="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ziglang/zig"
  [ -x "$ZIG" ] || { echo "run.sh: $ZIG is missing: the ziglang wheel did not install" >&2; return 1; }
}

# install_into_cache PACKAGE VERSION [DIR]: PACKAGE==VERSION pip-installed without its dependencies
# into DIR (default .cache/PACKAGE-VERSION), once: a stamp file marks a finished install.
install_into_cache() {
  local package="$1" version="$2" dir="${3:-$CACHE/$1-$2}"
  [ -f "$dir/.opbridge-installed" ] && return
  log "installing $package $version into $dir"
  rm -rf "$dir"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --target "$dir" "$package==$version"
  touch "$dir/.opbridge-installed"
}

# Triton's model configuration schema for the tests of `opbridge triton`: the tritonclient package
# carries model_config.proto compiled (tests/python/triton_config.py loads it from its file), without
# its dependencies (only its network clients need them), into .cache like the ORT runtimes.
TRITONCLIENT_VERSION="2.73.0"
setup_tritonclient() { install_into_cache tritonclient "$TRITONCLIENT_VERSION"; }

setup() {
  setup_debian_packages
  setup_ort_headers
  setup_venv
  setup_cuda_toolkit
  setup_zig
  setup_deploy_venv
  setup_ort_runtimes
  setup_tritonclient
  setup_serve_venv
}

# build/: the library with its CUDA kernels, linked as the wheels link it (glibc 2.28's symbols), the
# C++ tests and the kernel benchmarks. The CUDA
# kernels are compiled for the GPUs the project's test machines have (Hopper, sm_90: H100 and
# H200) unless OPBRIDGE_CUDA_ARCHITECTURES says otherwise (CMake's list, e.g. "75-real;90"; the
# default of CMakeLists.txt, what a release carries, is sm_75 to sm_90 plus PTX). The configure
# step reruns when its arguments change (they are kept in build/.opbridge-configure).
OPBRIDGE_CUDA_ARCHITECTURES="${OPBRIDGE_CUDA_ARCHITECTURES:-90}"
# build/'s CMake arguments (also those of the wheel ./run.sh test makes from build/).
build_args() {
  BUILD_ARGS=(-DCMAKE_BUILD_TYPE=Release -DONNXRUNTIME_ROOT="$ORT_ROOT" -DOPBRIDGE_BUILD_BENCHMARKS=ON
              -DOPBRIDGE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="$OPBRIDGE_CUDA_ARCHITECTURES"
              -DOPBRIDGE_GLIBC_2_28=ON -DOPBRIDGE_ZIG="$ZIG")
}
build() {
  setup
  export PATH="$VENV/bin:$PATH"
  build_args
  local args=(-G Ninja "${BUILD_ARGS[@]}")
  if [ ! -f "$BUILD/build.ninja" ] || [ "$(cat "$BUILD/.opbridge-configure" 2>/dev/null)" != "${args[*]}" ]; then
    cmake -S "$ROOT" -B "$BUILD" "${args[@]}" >/dev/null
    echo "${args[*]}" > "$BUILD/.opbridge-configure"
  fi
  cmake --build "$BUILD"
}

# ---- Wheels ----------------------------------------------------------------------------------------

# build_wheel BUILD_DIR OUT_DIR [CMAKE_ARGS...]: the wheel of the package (pyproject.toml:
# scikit-build-core) built in BUILD_DIR with CMAKE_ARGS (-DNAME=VALUE, as cmake takes them), a Linux
# wheel's library linked for glibc 2.28, then checked and tagged by auditwheel for the oldest glibc it
# can claim (auditwheel repair --plat auto: nothing is grafted, the library needs no other library)
# into OUT_DIR. A BUILD_DIR already built with the same arguments only relinks. A cross-built wheel
# (CMAKE_TOOLCHAIN_FILE) is tagged for its processor first (scikit-build-core tags the build
# machine's): aarch64, or win_amd64 (the mingw-w64 toolchain), which auditwheel leaves alone. Prints
# the wheel's path.
build_wheel() {
  local build_dir="$1" out_dir="$2"
  shift 2
  local defines=() arg processor=x86_64 raw status=0
  for arg in "$@"; do
    defines+=("--config-settings=cmake.define.${arg#-D}")
    [[ "$arg" == -DCMAKE_TOOLCHAIN_FILE=*aarch64* ]] && processor=aarch64
    [[ "$arg" == -DCMAKE_TOOLCHAIN_FILE=*mingw32* ]] && processor=win_amd64
  done
  # The DLL is stripped by its link (CMakeLists.txt): binutils' strip would write the time into its header.
  [ "$processor" = win_amd64 ] && defines+=("--config-settings=install.strip=false")
  raw="$(mktemp -d)"
  PATH="$VENV/bin:$PATH" "$VENV/bin/python" -m pip wheel "$ROOT" --no-build-isolation --no-deps -q \
    --disable-pip-version-check -w "$raw" "--config-settings=build-dir=$build_dir" "${defines[@]}" >&2 || status=1
  local tag="linux_$processor"
  [ "$processor" = win_amd64 ] && tag=win_amd64
  if [ "$status" -eq 0 ] && [ "$processor" != x86_64 ]; then
    "$VENV/bin/python" -m wheel tags --remove --platform-tag "$tag" "$raw"/opbridge-*.whl >/dev/null || status=1
  fi
  mkdir -p "$out_dir"
  if [ "$status" -eq 0 ] && [ "$processor" = win_amd64 ]; then
    cp "$raw"/opbridge-*.whl "$out_dir/"  # auditwheel is for Linux; check_wheel checks the DLL
  elif [ "$status" -eq 0 ]; then
    PATH="$VENV/bin:$PATH" "$VENV/bin/auditwheel" repair --plat auto --only-plat -w "$out_dir" "$raw"/opbridge-*.whl >&2 \
      || status=1
  fi
  rm -rf "$raw"
  [ "$status" -eq 0 ] || return 1
  ls -t "$out_dir"/opbridge-*"$processor".whl | head -n 1
}

# check_wheel WHEEL PROCESSOR: what auditwheel says of a Linux wheel, then tests/wheels/check_wheel.py's
# checks (PROCESSOR x86_64, aarch64 or win_amd64).
check_wheel() {
  [ "$2" = win_amd64 ] || PATH="$VENV/bin:$PATH" "$VENV/bin/auditwheel" show "$1"
  "$VENV/bin/python" "$ROOT/tests/wheels/check_wheel.py" "$1" "$2"
}

# What every wheel's CMake build takes: the ORT headers, and the link for glibc 2.28.
wheel_args() { WHEEL_ARGS=(-DONNXRUNTIME_ROOT="$ORT_ROOT" -DOPBRIDGE_GLIBC_2_28=ON -DOPBRIDGE_ZIG="$ZIG"); }

# ./run.sh wheels: the release wheels, into dist/ (each built in its own build-wheel-<processor>/):
# - x86-64: the CPU kernels and the CUDA kernels of every identity, for Turing to Hopper plus PTX
#   (CMakeLists.txt's release list; OPBRIDGE_WHEEL_CUDA_ARCHITECTURES replaces it), one wheel for CPU and
#   GPU users: without an NVIDIA driver for CUDA 13 the CUDA kernels are not registered;
# - aarch64: the CPU kernels, cross-compiled with Debian's aarch64 GCC
#   (cmake/toolchains/aarch64-linux-gnu.cmake);
# - win_amd64: the CPU kernels in opbridge_ort.dll, cross-compiled with Debian's mingw-w64 GCC
#   (cmake/toolchains/x86_64-w64-mingw32.cmake).
WHEEL_DIR="$ROOT/dist"
AARCH64_TOOLCHAIN="$ROOT/cmake/toolchains/aarch64-linux-gnu.cmake"
wheels() {
  setup
  # The same wheels, byte for byte, from the same commit: their files dated by it, not by the clock
  # (scikit-build-core and auditwheel both honour SOURCE_DATE_EPOCH).
  export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct)}"
  local cuda=(-DOPBRIDGE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC")
  [ -n "${OPBRIDGE_WHEEL_CUDA_ARCHITECTURES:-}" ] && cuda+=(-DCMAKE_CUDA_ARCHITECTURES="$OPBRIDGE_WHEEL_CUDA_ARCHITECTURES")
  wheel_args
  log "x86-64 wheel (CPU and CUDA kernels) in build-wheel-x86_64/"
  build_wheel "$ROOT/build-wheel-x86_64" "$WHEEL_DIR" "${WHEEL_ARGS[@]}" "${cuda[@]}"
  log "aarch64 wheel (CPU kernels) in build-wheel-aarch64/"
  build_wheel "$ROOT/build-wheel-aarch64" "$WHEEL_DIR" "${WHEEL_ARGS[@]}" -DCMAKE_TOOLCHAIN_FILE="$AARCH64_TOOLCHAIN"
  log "Windows x86-64 wheel (CPU kernels) in build-wheel-windows/"
  windows_wheel_args
  build_wheel "$ROOT/build-wheel-windows" "$WHEEL_DIR" "${WINDOWS_WHEEL_ARGS[@]}"
  local processor wheel status=0
  for processor in x86_64 aarch64 win_amd64; do
    wheel="$(ls -t "$WHEEL_DIR"/opbridge-*"$processor".whl | head -n 1)"
    check_wheel "$wheel" "$processor" || status=1
  done
  return "$status"
}

# ---- The library tests again: under the sanitizers, and in the oldest and newest ORT -------------

# The Python tests that load the library through ORT: test_library.py, the conformance suite, the
# float16 conversion of every identity (ORT's own converter, which changes with its version) and each
# op's tests/python/test_<op>.py (named from the manifest, so a new op's tests join). The export,
# detector, demo, wheel, deploy and manifest tests exercise PyTorch's exporters and the packaging
# more than the library; they run in the main pytest run only. test_cmake_package_builds_the_example
# is left out too: it compiles the whole library from source (a minute), and what it adds to
# test_cpp_application (the installed CMake package) depends on neither the sanitizers nor the
# runtime version.
# The sanitized run and the other runtimes take the subset --each-value-once selects
# (tests/python/conftest.py): every test function, and of a parametrized one the cases that bring a
# parameter value no earlier case had, so every identity, mode, dtype, shape and bad input of the
# main run still runs there, not every combination (1,842 of 3,961 tests). The full sweeps run in
# the main pytest run.
library_tests() {
  "$VENV/bin/python" -c 'from opbridge import manifest
print("tests/python/test_library.py")
print("tests/python/test_conformance.py")
print("tests/python/test_float16_conversion.py")
for op in sorted(manifest.load()):
    print(f"tests/python/test_{op}.py")'
}
LIBRARY_TESTS_DESELECT=(--deselect tests/python/test_library.py::test_cmake_package_builds_the_example)

# build-asan/: the library, the kernels and the C++ tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (OPBRIDGE_SANITIZE in CMakeLists.txt), configured once and built
# incrementally like build/. Without the CUDA kernels: nothing here runs them (no GPU), and the
# CUDA glue's host code is the CPU op's (Schema, Create) plus launches. -O1 -g1: reports name file and line (-g1 is the line tables, all they
# need; full -g took a quarter more compile time, 5m12 against 4m09 of CPU for a full build on the
# development VM). -O2 took a third more compile time and ran the sanitized C++ tests only 1 s
# faster; -O0 halved it but ran the sanitized tests 3.5x (C++) and 1.1x (Python) as long.
BUILD_ASAN="$ROOT/build-asan"
build_sanitized() {
  if [ ! -f "$BUILD_ASAN/build.ninja" ]; then
    cmake -S "$ROOT" -B "$BUILD_ASAN" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DOPBRIDGE_SANITIZE=ON -DONNXRUNTIME_ROOT="$ORT_ROOT" >/dev/null
  fi
  cmake --build "$BUILD_ASAN"
}

# Runs the sanitized C++ tests, then the library's Python tests in ORT with the sanitized library.
# Every report aborts its process (abort_on_error; pytest's faulthandler then names the test that
# was running). pytest captures Python's output only (--capture=sys) and the processes' stderr
# goes to a file: pytest's default capture would lose the report with the test that dies, and the
# file also holds the reports of child processes whose exit a test may not check. The step fails
# if a test fails or a report is found (ASan's also go to their own files, $reports/asan.<pid>:
# GCC's libubsan ignores log_path); on failure, the stderr is shown from the first report on.
SANITIZER_REPORT='runtime error:|ERROR: AddressSanitizer|ERROR: LeakSanitizer'
test_sanitized() {
  local reports
  reports="$(mktemp -d)"
  local asan="halt_on_error=1:abort_on_error=1:log_path=$reports/asan"
  local ubsan="print_stacktrace=1:halt_on_error=1:abort_on_error=1"
  local status=0
  log "C++ tests under AddressSanitizer and UndefinedBehaviorSanitizer (leaks included)"
  ASAN_OPTIONS="$asan:detect_leaks=1" UBSAN_OPTIONS="$ubsan" \
    "$BUILD_ASAN/opbridge_cpp_tests" --gtest_brief=1 || status=$?
  # Python is not sanitized: libasan must be loaded first (LD_PRELOAD), and libstdc++ with it,
  # since python does not link libstdc++ and ASan's __cxa_throw interceptor then aborts when torch
  # loads. Leaks are off: Python's and torch's own allocations kept until exit would be reported.
  # Left out, as they test memory limits the sanitizers change: resident memory per session
  # (ASan's quarantine keeps freed memory), ORT's allocator throwing for a 2 TB output (ASan's
  # reports it as a fatal error instead) and a failed allocation under an address-space limit
  # (RLIMIT_AS: ASan's shadow memory reserves terabytes of address space).
  local deselect=(
    --deselect tests/python/test_library.py::test_sessions_do_not_leak_memory
    --deselect tests/python/test_trt_batched_nms.py::test_output_that_cannot_be_allocated_is_a_clean_error
    --deselect tests/python/test_library.py::test_failed_scratch_allocation_is_an_error_not_an_abort
  )
  if [ "$status" -eq 0 ]; then
    log "Python library tests in ORT with the sanitized library"
    local list files
    list="$(library_tests)"
    mapfile -t files <<< "$list"
    OPBRIDGE_LIBRARY="$BUILD_ASAN/libopbridge_ort.so" \
    LD_PRELOAD="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libstdc++.so.6)" \
    ASAN_OPTIONS="$asan:detect_leaks=0" UBSAN_OPTIONS="$ubsan" \
      "$VENV/bin/python" -m pytest "${files[@]}" -q -p no:cacheprovider --capture=sys -n 2 --each-value-once \
        "${LIBRARY_TESTS_DESELECT[@]}" "${deselect[@]}" 2> "$reports/stderr" || status=$?
    local first
    first="$(grep -nE -m1 "$SANITIZER_REPORT" "$reports/stderr" | cut -d: -f1 || true)"
    if [ -n "$first" ]; then
      log "sanitizer report in the Python tests (their stderr from the first report on):"
      sed -n "$first,\$p" "$reports/stderr" >&2
      status=1
    elif [ "$status" -ne 0 ]; then
      log "the end of the Python tests' stderr:"
      tail -n 40 "$reports/stderr" >&2
    fi
  fi
  if compgen -G "$reports/asan.*" >/dev/null; then
    log "AddressSanitizer reports:"
    cat "$reports"/asan.* >&2
    status=1
  fi
  rm -rf "$reports"
  return "$status"
}

# ORT runtimes the library tests also run in: the oldest the library supports (library.cc refuses
# older ones) and the newest on the registry. Each is pip-installed without dependencies into
# .cache/ort-runtime-<version> and put first on PYTHONPATH in .venv, whose numpy, protobuf,
# flatbuffers, sympy and packaging both take (1.21 also lists coloredlogs, which only its tools
# import); torch stays available for the tests' references. A stamp file marks a finished install.
ORT_RUNTIME_VERSIONS=(1.21.0 1.32.0)
setup_ort_runtimes() {
  local version
  for version in "${ORT_RUNTIME_VERSIONS[@]}"; do
    install_into_cache onnxruntime "$version" "$CACHE/ort-runtime-$version"
  done
}

# OPBRIDGE_EXPECT_ORT_VERSION makes conftest.py fail the run unless `import onnxruntime` found that
# version, so a wrong path cannot quietly test .venv's onnxruntime again.
test_ort_runtime() {
  local version="$1" list files
  list="$(library_tests)"
  mapfile -t files <<< "$list"
  PYTHONPATH="$CACHE/ort-runtime-$version${PYTHONPATH:+:$PYTHONPATH}" OPBRIDGE_EXPECT_ORT_VERSION="$version" \
    "$VENV/bin/python" -m pytest "${files[@]}" -q -p no:cacheprovider -n 2 --each-value-once \
      "${LIBRARY_TESTS_DESELECT[@]}"
}

# ---- What users install: the wheels, tested as installed ------------------------------------------

# The x86-64 wheel made from build/ (its library relinked, nothing recompiled: the recipe of
# ./run.sh wheels with build/'s CUDA architectures), installed with pip and its cpu extra into a new
# virtual environment whose PATH has no compiler (onnxruntime, onnx, numpy and pytest at the lock's
# pins, no torch); there the package's torch-free library tests (the conformance suite: every
# identity's contract, errors and thread counts; opbridge check) run against the installed copy
# (OPBRIDGE_TEST_INSTALLED=1, conftest.py), and `opbridge ops` lists what the source build lists.
test_installed_wheel() {
  local dir status=0 wheel
  dir="$(mktemp -d)"
  build_args
  wheel="$(build_wheel "$BUILD" "$dir/wheels" "${BUILD_ARGS[@]}" -DOPBRIDGE_BUILD_TESTS=ON)" || return 1
  check_wheel "$wheel" x86_64 || status=1
  # A PATH of the few programs the tests start, and no compiler.
  mkdir -p "$dir/bin"
  local tool
  for tool in sh bash env readelf; do ln -s "$(command -v "$tool")" "$dir/bin/$tool"; done
  python3 -m venv "$dir/venv"
  local path="$dir/venv/bin:$dir/bin" compiler
  for compiler in cc gcc g++ c++ clang clang++ nvcc; do
    if PATH="$path" command -v "$compiler" >/dev/null; then
      log "$compiler is on the clean environment's PATH"; rm -rf "$dir"; return 1
    fi
  done
  # The wheel with its cpu extra (onnxruntime), as a CPU user installs it.
  PATH="$path" "$dir/venv/bin/python" -m pip install -q --disable-pip-version-check "$wheel[cpu]" pytest pytest-xdist \
    -c "$ROOT/requirements.lock" || status=1
  if [ "$status" -eq 0 ]; then
    (cd "$dir" && PATH="$path" OPBRIDGE_TEST_INSTALLED=1 "$dir/venv/bin/python" -m pytest \
       "$ROOT/tests/python/test_conformance.py" "$ROOT/tests/python/test_check.py" -q -p no:cacheprovider -n 2 \
       --each-value-once --rootdir "$ROOT/tests/python") || status=1
    # The listing of every identity, and the onnxruntime line, as the source build's.
    PATH="$path" "$dir/venv/bin/python" -m opbridge ops | head -n -1 > "$dir/installed.txt" || status=1
    "$VENV/bin/python" -m opbridge ops | head -n -1 > "$dir/source.txt"
    diff "$dir/source.txt" "$dir/installed.txt" || { log "opbridge ops differs from the source build's"; status=1; }
  fi
  rm -rf "$dir"
  return "$status"
}

# aarch64, under emulation (qemu-user; timings mean nothing there): build-aarch64/ is the aarch64
# wheel's build (Debian's cross GCC, linked for glibc 2.28) with the C++ tests, which run under
# qemu-aarch64 with Debian's aarch64 glibc; then the wheel, installed into an aarch64 CPython with the
# registry's aarch64 onnxruntime and numpy (tools/aarch64_python.sh), runs every identity on the
# conformance suite's inputs and must give the x86-64 library's outputs (tests/wheels).
BUILD_AARCH64="$ROOT/build-aarch64"
AARCH64_PYTHON_DIR="$CACHE/aarch64-python"
# shellcheck source=tools/aarch64_python.sh
source "$ROOT/tools/aarch64_python.sh"

build_aarch64_wheel() {
  wheel_args
  build_wheel "$BUILD_AARCH64" "$BUILD_AARCH64/dist" "${WHEEL_ARGS[@]}" -DOPBRIDGE_BUILD_TESTS=ON \
    -DCMAKE_TOOLCHAIN_FILE="$AARCH64_TOOLCHAIN" >/dev/null
}

# Left out under QEMU: the NMS device code on both sides of the mask budget (a billion box pairs of
# host-and-device code, 8 s natively), which the native run covers.
test_cpp_aarch64() {
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$BUILD_AARCH64/opbridge_cpp_tests" --gtest_brief=1 \
    --gtest_filter="-NmsDeviceCode.BothSidesOfTheMaskBudgetKeepTheCpuKernelsBoxes"
}

# wheel_and_cases BUILD_DIR PROCESSOR PLATFORM PYTHON_VERSION DIR: the newest wheel in BUILD_DIR/dist
# checked (check_wheel), installed into DIR/site as pip installs it for that platform's CPython, and
# the conformance cases with the x86-64 library's outputs saved into DIR/cases (save_cases.py).
wheel_and_cases() {
  local wheel status=0
  wheel="$(ls -t "$1"/dist/opbridge-*"$2".whl | head -n 1)"
  check_wheel "$wheel" "$2" || status=1
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps --target "$5/site" \
    --platform "$3" --python-version "$4" --implementation cp --only-binary=:all: "$wheel" || status=1
  "$VENV/bin/python" "$ROOT/tests/wheels/save_cases.py" "$5/cases" || status=1
  return "$status"
}

test_wheel_aarch64() {
  local dir status=0
  setup_aarch64_python "$AARCH64_PYTHON_DIR" || return 1
  dir="$(mktemp -d)"
  wheel_and_cases "$BUILD_AARCH64" aarch64 manylinux_2_27_aarch64 3.11 "$dir" || status=1
  if [ "$status" -eq 0 ]; then
    (cd "$dir" && PYTHONPATH="$dir/site" aarch64_python "$AARCH64_PYTHON_DIR" "$ROOT/tests/wheels/check_cases.py" \
       "$dir/cases") || status=1
  fi
  rm -rf "$dir"
  return "$status"
}

# Windows x86-64, under Wine (timings mean nothing there): build-windows/ is the win_amd64 wheel's
# build (Debian's mingw-w64 GCC, cmake/toolchains/x86_64-w64-mingw32.cmake) with the C++ tests, which
# run under Wine; then the wheel, installed into a Windows CPython with the registry's win_amd64
# onnxruntime, onnx and numpy (tools/windows_python.sh), runs every identity on the conformance
# suite's inputs and must give the Linux x86-64 library's outputs bit for bit (tests/wheels), runs the
# conformance suite and opbridge check's tests against the installed copy, and tests/windows (the
# platform, 2,000 load cycles, what it says to a runtime or a file it cannot use).
WINDOWS_TOOLCHAIN="$ROOT/cmake/toolchains/x86_64-w64-mingw32.cmake"
BUILD_WINDOWS="$ROOT/build-windows"
WINDOWS_PYTHON_DIR="$CACHE/windows-python"
# shellcheck source=tools/windows_python.sh
source "$ROOT/tools/windows_python.sh"

windows_wheel_args() { WINDOWS_WHEEL_ARGS=(-DONNXRUNTIME_ROOT="$ORT_ROOT" -DCMAKE_TOOLCHAIN_FILE="$WINDOWS_TOOLCHAIN"); }

build_windows_wheel() {
  windows_wheel_args
  build_wheel "$BUILD_WINDOWS" "$BUILD_WINDOWS/dist" "${WINDOWS_WHEEL_ARGS[@]}" -DOPBRIDGE_BUILD_TESTS=ON >/dev/null
}

# What the Windows tests need: build-windows/ and the Windows Python (made once, kept in .cache/).
windows_build() {
  build_windows_wheel && setup_windows_python "$WINDOWS_PYTHON_DIR"
}

# The Windows tests run after windows_build (the lane's step, or ./run.sh test-windows).
test_cpp_windows() {
  windows_wine "$WINDOWS_PYTHON_DIR" "$BUILD_WINDOWS/opbridge_cpp_tests.exe" --gtest_brief=1
}

test_wheel_windows() {
  local dir status=0
  dir="$(mktemp -d)"
  wheel_and_cases "$BUILD_WINDOWS" win_amd64 win_amd64 "$WINDOWS_PYTHON_VERSION" "$dir" || status=1
  if [ "$status" -eq 0 ]; then
    (cd "$dir" && windows_python "$WINDOWS_PYTHON_DIR" "$dir/site" "$ROOT/tests/wheels/check_cases.py" "$dir/cases") \
      || status=1
    (cd "$dir" && OPBRIDGE_TEST_INSTALLED=1 OPBRIDGE_OLD_ONNXRUNTIME="$WINDOWS_PYTHON_DIR/onnxruntime-1.20" \
       windows_python "$WINDOWS_PYTHON_DIR" "$dir/site" -m pytest "$ROOT/tests/windows" \
       "$ROOT/tests/python/test_conformance.py" "$ROOT/tests/python/test_check.py" -q -p no:cacheprovider \
       --each-value-once --rootdir "$ROOT/tests/python") || status=1
  fi
  rm -rf "$dir"
  return "$status"
}

# ---- ./run.sh test: the steps, on both cores ------------------------------------------------------

# step NAME COMMAND...: runs the command with its output in a log file of its own, says when it
# starts and how long it took; on failure it shows the whole log (a pytest run's failures, a
# sanitizer report). Each step's time goes into the table printed at the end.
STEP_DIR=""
step() {
  local name="$1"
  shift
  local file="$STEP_DIR/$(printf '%s' "$name" | tr -c 'A-Za-z0-9.\n-' '_').log" begin=$SECONDS status=0
  log "start: $name"
  "$@" > "$file" 2>&1 || status=$?
  local seconds=$((SECONDS - begin)) result="passed"
  [ "$status" -eq 0 ] || result="FAILED (exit $status)"
  printf '%s\t%s\t%s\t%s\n' "$begin" "$seconds" "$name" "$result" >> "$STEP_DIR/steps.tsv"
  if [ "$status" -eq 0 ]; then
    log "passed: $name in ${seconds} s: $(grep -v '^\s*$' "$file" | tail -n 1)"
  else
    log "FAILED: $name in ${seconds} s (exit $status); its output:"
    cat "$file" >&2
    log "(end of the output of: $name)"
  fi
  return "$status"
}

# The C++ tests again on emulated CPUs: the kernels pick their vector code at run time (AVX-512,
# AVX2 or SSE4.2), and glibc picks its libm variants (with or without FMA) by CPU too, so the tests
# run again without AVX-512 (Haswell: x86-64-v3) and without AVX (Nehalem: x86-64-v2, the oldest the
# library supports), whatever machine runs CI; OPBRIDGE_EXPECT_CPU_LEVEL makes the tests check that
# the emulated CPU got the variant meant for it. (Haswell without the features QEMU's emulator lacks,
# which it would warn about.) Left out there: the suites of kernels that are compiled once for
# x86-64-v2 and call nothing whose result depends on the CPU (no per-level code, no libm), NMSMatch
# and the greedy suppression engine (their random sweeps took 88 of the 189 s of the Haswell run:
# QEMU runs AVX2 code slowly), and the NMS and soft-NMS kernels' device code run on the host (45 s
# there); they would compute the same instructions as natively.
QEMU_HASWELL="Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"
EMULATED_GTEST_FILTER="-NmsMatch.*:GreedySuppress.*:NmsDeviceCode.*:MulticlassNmsDeviceCode.*:TrtBatchedNmsDeviceCode.*"
EMULATED_GTEST_FILTER+=":SoftNmsDeviceCode.*"
test_cpp_emulated() {
  local level="$1" cpu="$2"
  OPBRIDGE_EXPECT_CPU_LEVEL="$level" qemu-x86_64 -cpu "$cpu" "$BUILD/opbridge_cpp_tests" --gtest_brief=1 \
    --gtest_filter="$EMULATED_GTEST_FILTER"
}

# Ray Serve (tests/serve): .venv exports the demo detector and its requests, the serving
# environment (no torch) serves them from two replicas on a local Ray instance, then
# examples/serve_ray.py prints the deployment's throughput beside one in-process session's.
test_serve() {
  local dir status=0
  dir="$(mktemp -d)"
  "$VENV/bin/python" "$ROOT/tests/serve/make_model.py" "$dir" || { rm -rf "$dir"; return 1; }
  PYTHONPATH="$ROOT/python" OPBRIDGE_SERVE_MODEL="$dir" "$SERVE_VENV/bin/python" -m pytest "$ROOT/tests/serve" -q \
    -p no:cacheprovider -s -W ignore::DeprecationWarning || status=1
  PYTHONPATH="$ROOT/python" "$SERVE_VENV/bin/python" -W ignore::DeprecationWarning "$ROOT/examples/serve_ray.py" \
    "$dir" || status=1
  rm -rf "$dir"
  return "$status"
}

# The steps beside the main pytest run, one after another: the aarch64 and Windows builds (which the
# other lane tests once built), the emulated CPUs, the sanitizers, then Ray Serve (while the main
# lane's last steps run). Every step runs even after one fails, so one run
# shows every failure.
sanitizer_lane() {
  local status=0
  if [ "$(uname -m)" = x86_64 ]; then
    # First, so that the other lane finds them built when it gets to their tests (after_build).
    build_step aarch64 "aarch64 build and wheel (build-aarch64/, 2 jobs)" build_aarch64_wheel || status=1
    build_step windows "Windows build and wheel (build-windows/, 2 jobs), Windows Python" windows_build || status=1
    step "C++ tests on an emulated Haswell (x86-64-v3)" test_cpp_emulated x86-64-v3 "$QEMU_HASWELL" || status=1
    step "C++ tests on an emulated Nehalem (x86-64-v2)" test_cpp_emulated x86-64-v2 Nehalem || status=1
  fi
  if step "sanitized build (build-asan/)" build_sanitized; then
    step "sanitized C++ tests, then library tests (2 workers)" test_sanitized || status=1
  else
    status=1
  fi
  step "Ray Serve: two replicas of a detector (tests/serve)" test_serve || status=1
  return "$status"
}

# build_step PLATFORM NAME COMMAND: the step NAME (a build), its result written for after_build.
build_step() {
  local built=0
  step "$2" "$3" || built=1
  echo "$built" > "$STEP_DIR/$1-built"
  return "$built"
}

# after_build PLATFORM NAME COMMAND [NAME COMMAND...]: once the other lane has built PLATFORM (aarch64 or
# windows: the file it writes, on x86-64 only), each step NAME running COMMAND; none if the build failed.
after_build() {
  [ "$(uname -m)" = x86_64 ] || return 0
  local platform="$1" status=0
  shift
  while [ ! -f "$STEP_DIR/$platform-built" ]; do sleep 5; done
  if [ "$(cat "$STEP_DIR/$platform-built")" != 0 ]; then
    log "$platform tests not run: the $platform build failed"
    return 1
  fi
  while [ $# -gt 0 ]; do
    step "$1" "$2" || status=1
    shift 2
  done
  return "$status"
}

# Every test, on both cores, in two lanes: the main pytest run (pytest-xdist, two workers), then the
# library tests in the other runtimes (two workers each); beside them the emulated CPUs' C++ tests
# (one process each), the sanitized build (two compile jobs) and the sanitized tests (two workers).
# Each lane ends with two-worker steps, so that neither core idles while the other lane finishes.
# Measured on the development VM (2 cores): see README.md.
run_tests() {
  cd "$ROOT"
  STEP_DIR="$(mktemp -d)"
  local status=0 begin=$SECONDS version
  step "set-up and build (build/)" build || return 1
  step "C++ tests" "$BUILD/opbridge_cpp_tests" --gtest_brief=1 || status=1
  # One OpenMP thread per test process (PyTorch's and MKL's): up to four processes share the two
  # cores, and idle OpenMP threads spin (libgomp's default policy), taking CPU from the others.
  # No test depends on PyTorch's thread count.
  export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
  sanitizer_lane &
  local lane=$!
  step "main pytest (2 workers)" "$VENV/bin/python" -m pytest tests/python -q -p no:cacheprovider -n 2 --dist worksteal \
    "$@" || status=1
  for version in "${ORT_RUNTIME_VERSIONS[@]}"; do
    step "library tests in onnxruntime $version (2 workers)" test_ort_runtime "$version" || status=1
  done
  step "the x86-64 wheel, installed without a compiler (2 workers)" test_installed_wheel || status=1
  after_build aarch64 "aarch64 C++ tests under qemu-aarch64" test_cpp_aarch64 \
    "aarch64 wheel under qemu-aarch64: every identity against x86-64" test_wheel_aarch64 || status=1
  after_build windows "Windows C++ tests under Wine" test_cpp_windows \
    "Windows wheel under Wine: every identity against Linux, the installed copy's tests" test_wheel_windows || status=1
  wait "$lane" || status=1
  log "steps (start and length in seconds):"
  sort -n "$STEP_DIR/steps.tsv" | awk -F'\t' '{printf "  %5d %5d  %-52s %s\n", $1, $2, $3, $4}' >&2
  local total=$((SECONDS - begin))
  log "./run.sh test: $total s ($((total / 60)) min $((total % 60)) s) in all"
  rm -rf "$STEP_DIR"
  [ "$status" -eq 0 ] && log "every step passed" || log "FAILED: see the steps above"
  return "$status"
}

# ---- ./run.sh test-gpu: the GPU tests --------------------------------------------------------------

# Why the GPU tests cannot run with $1 (a Python), or nothing: a CUDA device (the NVIDIA driver's
# libcuda, asked directly: onnxruntime-gpu lists its CUDA provider on machines without a GPU too),
# onnxruntime-gpu in that Python, pytest.
gpu_tests_blocker() {
  "$1" - <<'PYTHON'
import ctypes
import importlib.util

try:
    driver = ctypes.CDLL("libcuda.so.1")
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        raise OSError("the driver reports no CUDA device")
except (OSError, AttributeError) as error:
    print(f"no CUDA GPU on this machine ({error})")
    raise SystemExit
try:
    import onnxruntime
except ImportError:
    print("onnxruntime is not installed")
    raise SystemExit
if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
    print(f"this onnxruntime ({onnxruntime.__version__}) has no CUDA execution provider: install onnxruntime-gpu "
          "(pip install onnxruntime-gpu==1.31.1, which replaces onnxruntime in that environment), or set "
          "OPBRIDGE_GPU_PYTHON to a Python that has it")
    raise SystemExit
if importlib.util.find_spec("pytest") is None:
    print("pytest is not installed")
PYTHON
}

# The op test files of every kernel with a CUDA kernel (tests/python/test_<kernel>.py), then the
# conformance suite: last, so that a sanitizer run stopped at a time limit has covered the kernels.
cuda_op_tests() {
  PYTHONPATH="$ROOT/python" "$1" -c '
from opbridge import manifest
print("\n".join([f"tests/python/test_{k}.py" for k, op in manifest.load().items() if op.cuda_identities] +
          ["tests/python/test_conformance.py"]))'
}

# ./run.sh test-gpu [pytest args]: wherever a CUDA GPU and onnxruntime-gpu are present, builds the
# library with its CUDA kernels (unless OPBRIDGE_NO_BUILD=1: build/ as it is, e.g. one built on
# another machine) and runs
#   1. the op tests of every kernel that has a CUDA kernel with OPBRIDGE_TEST_CUDA_TWINS=1: each of
#      their graphs also runs in a CUDA session and must give the CPU session's outputs and errors
#      (tests/python/cuda_twins.py), plus tests/gpu (torchvision's detectors in a CUDA session);
#   2. every CUDA workload of the bench once (opbridge bench --smoke --device cuda), then the same op
#      tests (each parameter value once), under each of compute-sanitizer's tools:
#      memcheck (out-of-bounds and misaligned accesses, in every kernel the tests run), then
#      racecheck (shared-memory hazards), initcheck (reads of device memory nothing wrote) and
#      synccheck (barriers some threads of a block do not reach) in opbridge's kernels only
#      (--kernel-name kns=opbridge: ORT's own kernels are not ours to fix), without the tests marked
#      sanitizer_heavy (a second of GPU work that instrumentation makes hours; smaller tests run the
#      same code paths).
# Every step runs with OPBRIDGE_CUDA_SYNC=1: each launch is followed by a synchronization and a check
# (kernels/cuda/launch.cuh), so a fault is reported against the kernel that made it, not as a generic
# error of whatever ORT runs next.
# OPBRIDGE_GPU_PYTHON: the Python to run them with (default .venv's); it needs onnxruntime-gpu,
# PyTorch, torchvision and pytest. OPBRIDGE_GPU_STEPS: some of "twins detectors memcheck racecheck
# initcheck synccheck" (default all; a machine lent for minutes may run them one call at a time).
# Without a GPU or onnxruntime-gpu it says why and exits 0.
run_gpu_tests() {
  cd "$ROOT"
  local python="${OPBRIDGE_GPU_PYTHON:-$VENV/bin/python}" blocker status=0 list files workers=()
  if [ "${OPBRIDGE_NO_BUILD:-0}" != 1 ]; then
    build || return 1
  fi
  blocker="$(gpu_tests_blocker "$python")"
  if [ -n "$blocker" ]; then
    log "GPU tests not run: $blocker"
    return 0
  fi
  # A GPU whose driver cannot run the kernels' CUDA runtime gets no CUDA twins (library.cc): every node
  # would run on the CPU and the twin checks would compare the CPU with itself.
  local twins
  twins="$(PYTHONPATH="$ROOT/python" "$python" -c 'import opbridge
info = opbridge.library_info()
print("" if info.get("cuda_twins") else info.get("cuda_twins_blocker", "unknown"))')"
  if [ -n "$twins" ]; then
    log "FAILED: the library registers no CUDA kernels on this machine: $twins"
    return 1
  fi
  list="$(cuda_op_tests "$python")"
  mapfile -t files <<< "$list"
  if "$python" -c "import xdist" 2>/dev/null; then
    workers=(-n "${OPBRIDGE_GPU_WORKERS:-4}")
  fi
  local steps="${OPBRIDGE_GPU_STEPS:-twins detectors memcheck racecheck initcheck synccheck}" tool
  export OPBRIDGE_CUDA_SYNC=1
  if [[ " $steps " == *" twins "* ]]; then
    log "GPU tests: the CUDA twins over the op tests of ${#files[@]} kernels"
    OPBRIDGE_TEST_CUDA_TWINS=1 PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$python" -m pytest \
      "${files[@]}" tests/python/test_cuda_twins.py -q -p no:cacheprovider "${workers[@]}" "$@" || status=1
  fi
  if [[ " $steps " == *" detectors "* ]]; then
    log "GPU tests: tests/gpu (the detectors in a CUDA session)"
    PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" "$python" -m pytest tests/gpu -q -p no:cacheprovider \
      "${workers[@]}" "$@" || status=1
  fi
  for tool in memcheck racecheck initcheck synccheck; do
    [[ " $steps " == *" $tool "* ]] || continue
    if ! command -v compute-sanitizer >/dev/null; then
      log "FAILED: compute-sanitizer is not on PATH (the CUDA toolkit's; OPBRIDGE_GPU_STEPS=\"twins detectors\" leaves the sanitizer runs out)"
      status=1
      break
    fi
    local only_ours=()
    [ "$tool" = memcheck ] || only_ours=(--kernel-name kns=opbridge)
    # First every CUDA kernel once on the bench's reduced inputs, in one process (one session per
    # model: a minute or two), then the op tests, where every test's sessions pay the tool's start-up
    # (on an H100 the op tests reached their 43rd test in 5 minutes).
    log "GPU tests under compute-sanitizer $tool: every CUDA workload of the bench once (opbridge's kernels)"
    PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" compute-sanitizer --tool "$tool" --kernel-name kns=opbridge \
      --error-exitcode 99 --print-limit 20 "$python" -m opbridge bench --smoke --device cuda || status=1
    log "GPU tests under compute-sanitizer $tool (the op tests, each parameter value once)"
    OPBRIDGE_TEST_CUDA_TWINS=1 PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}" compute-sanitizer \
      --tool "$tool" "${only_ours[@]}" --error-exitcode 99 --print-limit 20 "$python" -m pytest "${files[@]}" -q \
      -p no:cacheprovider -p no:xdist --each-value-once -m "not sanitizer_heavy" "$@" || status=1
  done
  [ "$status" -eq 0 ] && log "every GPU test passed" || log "FAILED: see above"
  return "$status"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  setup) setup ;;
  build) build ;;
  demo) build; "$VENV/bin/python" -m opbridge demo "$@" ;;
  test) run_tests "$@" ;;
  test-gpu) run_gpu_tests "$@" ;;
  test-wheels) build; test_installed_wheel && build_aarch64_wheel && test_cpp_aarch64 && test_wheel_aarch64 ;;
  test-windows) build; windows_build && test_cpp_windows && test_wheel_windows ;;
  bench) build; "$VENV/bin/python" -m opbridge bench "$@" ;;
  wheels) wheels ;;
  *) echo "usage: ./run.sh demo|test|test-gpu|bench|wheels|test-wheels|test-windows|setup|build" >&2; exit 2 ;;
esac
