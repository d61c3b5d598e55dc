"""What the package says when a feature needs an optional dependency.

Deploying (library_path, session_options, create_session, `opbridge check`, `opbridge ops`) needs
only ONNX Runtime, onnx and numpy. ONNX Runtime comes in two packages that both provide the module
onnxruntime, onnxruntime (CPU) and onnxruntime-gpu (CPU and CUDA), and installing both breaks one:
the package depends on neither, and its extras "cpu" and "gpu" name one each. Exporting and verifying
need the "torch" extra. Each is checked before anything imports it, so that a user gets one clear
message instead of a ModuleNotFoundError from deep inside an import.
"""

from __future__ import annotations

import importlib.util

# pyproject.toml's [project.optional-dependencies] torch, by import name.
TORCH_EXTRA = ("torch", "torchvision", "onnxscript")
INSTALL_HINT = 'pip install "opbridge[torch]"'


def missing_torch_extra() -> list[str]:
    """The modules of the torch extra that cannot be imported here (none: all installed)."""
    return [name for name in TORCH_EXTRA if importlib.util.find_spec(name) is None]


def require_torch(feature: str) -> None:
    """Raises ImportError naming what `feature` needs and how to install it, if anything is missing."""
    missing = missing_torch_extra()
    if missing:
        raise ImportError(
            f"{feature} needs PyTorch, and {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
            f"installed. Install the export dependencies with: {INSTALL_HINT} (torch, torchvision, onnxscript). "
            "Running exported models needs only onnxruntime: opbridge.create_session(), session_options(), "
            "library_path() and `opbridge check model.onnx` work without PyTorch.",
            name=missing[0],
        )


# pyproject.toml's extras for ONNX Runtime.
ONNXRUNTIME_HINT = ('pip install "opbridge[cpu]" (onnxruntime), or "opbridge[gpu]" (onnxruntime-gpu, for the CUDA '
                    "kernels); only one of the two: both provide the module onnxruntime")


def require_onnxruntime(feature: str) -> None:
    """Raises ImportError naming what `feature` needs and how to install it, if ONNX Runtime is missing."""
    if importlib.util.find_spec("onnxruntime") is None:
        raise ImportError(f"{feature} needs ONNX Runtime, which is not installed: {ONNXRUNTIME_HINT}.",
                          name="onnxruntime")
