"""What the torch-free package says when a feature needs the optional PyTorch dependencies.

Deploying (library_path, session_options, create_session, `opbridge check`, `opbridge ops`) needs
only onnxruntime, onnx and numpy. Exporting and verifying need the "torch" extra of pyproject.toml;
they check for it before importing anything, so that a deployer gets one clear message instead of
a ModuleNotFoundError from deep inside an import.
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
