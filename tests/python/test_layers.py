"""The C++ layers include only downward: src/core (params, validation, and the host-and-device rules
the kernels share) at the bottom; then kernels/shared (per-element math of both backends); then the
CPU and CUDA kernels; then the ORT glue. A kernel never sees ORT, and core sees no kernel."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# Layer -> the layers its files may include (their own included).
ALLOWED = {
    "core": {"core"},
    "kernels/shared": {"core", "kernels/shared"},
    "kernels/cpu": {"core", "kernels/shared", "kernels/cpu"},
    "kernels/cuda": {"core", "kernels/shared", "kernels/cuda"},
    "ort": {"core", "kernels/shared", "kernels/cpu", "kernels/cuda", "ort"},
}


def _layer(path: str) -> str | None:
    return next((layer for layer in sorted(ALLOWED, key=len, reverse=True) if path.startswith(layer + "/")), None)


def _includes(path: Path) -> list[str]:
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', path.read_text(), flags=re.M)


def test_every_source_file_is_in_a_layer():
    files = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*") if p.suffix in {".h", ".cc", ".cu", ".cuh", ".inc"}]
    assert files
    assert [f for f in files if _layer(f) is None] == []


def test_includes_run_only_downward():
    upward = []
    for path in SRC.rglob("*"):
        if path.suffix not in {".h", ".cc", ".cu", ".cuh", ".inc"}:
            continue
        own = _layer(path.relative_to(SRC).as_posix())
        for included in _includes(path):
            target = _layer(included)
            if target is not None and target not in ALLOWED[own]:
                upward.append(f"{path.relative_to(SRC)} ({own}) includes {included} ({target})")
    assert upward == []
