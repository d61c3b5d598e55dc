"""Finding libopbridge_ort.so and creating ORT sessions that have it registered."""

from __future__ import annotations

import os
from pathlib import Path

LIBRARY_NAME = "libopbridge_ort.so"
_PACKAGE_DIR = Path(__file__).resolve().parent


def library_path() -> str:
    """Path of the opbridge custom-op library for ONNX Runtime.

    Looked up in this order: the OPBRIDGE_LIBRARY environment variable, the copy installed in the
    package (``opbridge/lib/``), and the development build (``build/`` at the repository root).
    """
    candidates = []
    if os.environ.get("OPBRIDGE_LIBRARY"):
        candidates.append(Path(os.environ["OPBRIDGE_LIBRARY"]))
    candidates.append(_PACKAGE_DIR / "lib" / LIBRARY_NAME)
    candidates.append(_PACKAGE_DIR.parent.parent / "build" / LIBRARY_NAME)
    for path in candidates:
        if path.is_file():
            return str(path)
    raise FileNotFoundError(
        f"{LIBRARY_NAME} not found (looked in: {', '.join(str(p) for p in candidates)}). "
        "Build it with ./run.sh build, or set OPBRIDGE_LIBRARY."
    )


def session_options(intra_op_threads: int | None = None):
    """ORT SessionOptions with the opbridge library registered."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.register_custom_ops_library(library_path())
    if intra_op_threads is not None:
        options.intra_op_num_threads = intra_op_threads
    return options


def create_session(model, intra_op_threads: int | None = None, options=None):
    """An ORT CPU InferenceSession for `model` (a path, bytes or onnx.ModelProto) with opbridge's ops.

    Pass `options` to start from your own SessionOptions (the library is registered into it).
    """
    import onnxruntime as ort

    if options is None:
        options = session_options(intra_op_threads)
    else:
        options.register_custom_ops_library(library_path())
        if intra_op_threads is not None:
            options.intra_op_num_threads = intra_op_threads
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    elif isinstance(model, Path):
        model = str(model)
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
