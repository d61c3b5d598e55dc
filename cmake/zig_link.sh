#!/bin/sh
# The shared-library link of OPBRIDGE_GLIBC_2_28 (CMakeLists.txt):
#
#   zig_link.sh ZIG TARGET ARGS...     ARGS: the link's compiler-driver arguments (-o, objects, ...)
#
# zig's c++ driver links for TARGET (e.g. x86_64-linux-gnu.2.28) with its linker, lld, against
# glibc 2.28's symbols. lld, unlike GNU ld, merges GCC's .text.unlikely / .text.hot / .text.startup
# sections into .text in input order, so each function's cold blocks land between hot code: the
# soft-NMS loop ran 12-20% slower than the same objects linked by GNU ld (18.9 against 20.5-23.2 ms,
# 5,000 boxes, gaussian). lld groups them as GNU ld does with -z keep-text-section-prefix, which
# zig's driver refuses; so zig links once and prints its ld.lld command (ZIG_VERBOSE_LINK), and that
# command runs again with the option. zig prints the command unquoted: no argument may hold a space.
set -eu
zig="$1"
target="$2"
shift 2
for arg in "$@"; do
  case "$arg" in *" "*) echo "zig_link.sh: an argument holds a space, which zig's printed command loses: '$arg'" >&2; exit 1 ;; esac
done
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! ZIG_VERBOSE_LINK=1 "$zig" c++ -target "$target" -nostdlib++ "$@" 2> "$log"; then
  cat "$log" >&2
  exit 1
fi
command="$(grep '^ld.lld ' "$log" | tail -n 1)" || { cat "$log" >&2; echo "zig_link.sh: zig printed no ld.lld command" >&2; exit 1; }
set -f  # the words are paths and options: no globbing
# shellcheck disable=SC2086
set -- ${command#ld.lld }
exec "$zig" ld.lld -z keep-text-section-prefix "$@"
