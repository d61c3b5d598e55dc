# shellcheck shell=bash
# An aarch64 CPython 3.11 with onnxruntime and numpy that runs on this x86-64 machine under
# qemu-user, so that the aarch64 library is tested in the ORT it ships for. Sourced by run.sh, whose
# log, debian_mirror, ROOT and VENV it uses.
#
#   setup_aarch64_python DIR      make it under DIR once: DIR/sysroot (Debian 12 arm64 packages,
#                                 unpacked, never installed) and DIR/site (the aarch64 wheels)
#   aarch64_python DIR ARGS...    run that python3.11 with ARGS under qemu-aarch64

# The interpreter and what it and the wheels load: glibc, libstdc++ and libgcc_s (onnxruntime's
# C++), zlib and expat (python3.11 itself), libssl (hashlib), libffi (ctypes), bz2/lzma/crypt/uuid
# (the stdlib's other C modules). readline, ncurses, sqlite, db and nsl serve only modules the tests
# never import, so libpython3.11-stdlib's dependencies on them are left out.
AARCH64_DEBS=(python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libc6 libstdc++6 libgcc-s1
              zlib1g libexpat1 libssl3 libffi8 libbz2-1.0 liblzma5 libcrypt1 libuuid1)
# `import onnxruntime` needs numpy only: its flatbuffers, protobuf and packaging requirements serve
# its tools (transformers/, quantization/), which the tests do not use.
AARCH64_WHEELS=(onnxruntime numpy)

# The body runs in a subshell with errexit on, so that a failed step stops it whatever the caller's
# shell options.
setup_aarch64_python() (
  set -euo pipefail
  mkdir -p "$1"
  dir="$(cd "$1" && pwd)"
  stamp="$dir/.opbridge-installed"
  # The wheels' versions are requirements.lock's (.venv's), so the stamp holds those pins.
  want="$( (echo "${AARCH64_DEBS[*]} ${AARCH64_WHEELS[*]}"
            grep -E "^($(IFS='|'; echo "${AARCH64_WHEELS[*]}"))==" "$ROOT/requirements.lock") | sha256sum | cut -d' ' -f1)"
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && exit 0
  log "making the aarch64 Python (Debian 12 arm64 packages, onnxruntime and numpy wheels) in $dir"
  rm -rf "$dir/sysroot" "$dir/site" "$dir/apt" "$stamp"

  # The .debs come with a private apt configuration for arm64 only, as run.sh's setup_ort_headers
  # fetches trixie's: the system's sources, lists, architectures and dpkg database are left alone.
  apt_dir="$dir/apt"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial"
  echo "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(debian_mirror) bookworm main" \
    > "$apt_dir/sources.list"
  private_apt_options "$apt_dir"
  opts=("${PRIVATE_APT_OPTIONS[@]}" -o "APT::Architecture=arm64" -o "APT::Architectures=arm64")
  apt-get "${opts[@]}" update -qq
  (cd "$apt_dir" && apt-get "${opts[@]}" download "${AARCH64_DEBS[@]/%/:arm64}" >/dev/null)
  for deb in "$apt_dir"/*.deb; do dpkg-deb -x "$deb" "$dir/sysroot"; done
  rm -rf "$apt_dir"

  # qemu looks every absolute path up in the sysroot first, then on the host: the few files below
  # keep the host's out. sitecustomize.py is a link to /etc/python3.11/, which the kernel (not qemu)
  # would resolve on the host; an empty ld.so.cache stops ld.so reading the host's x86 one.
  ln -sfn ../../../etc/python3.11/sitecustomize.py "$dir/sysroot/usr/lib/python3.11/sitecustomize.py"
  : > "$dir/sysroot/etc/ld.so.cache"
  # qemu-user 7.2 passes the host's x86 /proc/cpuinfo through, and onnxruntime's cpuinfo library
  # crashes (SIGSEGV at import) when it finds no ARM "CPU implementer"/"CPU part" lines in it. This
  # one describes the CPU aarch64_python emulates (Neoverse N1, MIDR 0x413fd0c1), one entry per host
  # CPU. A newer qemu that writes /proc/cpuinfo itself (from QEMU_CPU) never reads this file.
  mkdir -p "$dir/sysroot/proc"
  for ((i = 0; i < $(getconf _NPROCESSORS_CONF); i++)); do
    printf 'processor\t: %d\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n' "$i"
    printf 'CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n'
  done > "$dir/sysroot/proc/cpuinfo"

  # The aarch64 wheels, at requirements.lock's pins, installed by .venv's (x86) pip for the
  # sysroot's python3.11 and glibc 2.36.
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --target "$dir/site" --no-deps \
    --only-binary=:all: --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
    --python-version 3.11 --implementation cp -c "$ROOT/requirements.lock" "${AARCH64_WHEELS[@]}"
  # The stamp only after the result imports: errexit does not act where the caller tests the call
  # (`if setup_aarch64_python ...`), and this also catches a qemu that breaks the cpuinfo above.
  aarch64_python "$dir" -c "import numpy, onnxruntime" && echo "$want" > "$stamp"
)

# QEMU_CPU: a real core (Neoverse N1, as in AWS Graviton2 and Ampere Altra), not qemu's default
# "max", whose MIDR no cpuinfo library knows and whose SVE/SME ORT would pick kernels for.
# PYTHONNOUSERSITE and no PYTHONHOME keep the host's x86 Python packages off the path. QEMU_* are
# environment variables (not -L/-cpu) so that aarch64 children started through binfmt_misc, where
# it is registered, get them too.
aarch64_python() {
  local dir
  dir="$(cd "$1" && pwd)"
  shift
  env -u PYTHONHOME QEMU_CPU=neoverse-n1 QEMU_LD_PREFIX="$dir/sysroot" PYTHONNOUSERSITE=1 \
    PYTHONPATH="$dir/site${PYTHONPATH:+:$PYTHONPATH}" qemu-aarch64 "$dir/sysroot/usr/bin/python3.11" "$@"
}
