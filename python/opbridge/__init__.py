"""opbridge: custom operators for deploying PyTorch vision models with ONNX Runtime.

    import opbridge
    opbridge.export(model, args, "model.onnx")           # opbridge's custom nodes in the graph
    session = opbridge.create_session("model.onnx")      # ORT session with the ops registered
    report = opbridge.verify(model, args)                # export + run + compare with eager

Importing the package needs only onnxruntime, onnx and numpy (what a deployer has): export and
verify import PyTorch when they are called (pip install "opbridge[torch]"). The submodules are
attributes of the package, imported on first use: opbridge.ops (the PyTorch side of every op,
opbridge.ops.nms_rotated, ...), opbridge.detection (torchvision's detectors on a batch of images),
opbridge.bench and opbridge.demo need PyTorch and say what to install
without it; opbridge.check, opbridge.float16, opbridge.placement, opbridge.fuzz and opbridge.docs do not.
"""

import importlib
import sys
import types
import warnings

from opbridge import manifest, tolerances
from opbridge._library import create_session, library_info, library_path, platform_blocker, session_options
from opbridge._optional import require_torch

# A wheel installed where its library cannot run (another OS or architecture, an x86-64 CPU older
# than x86-64-v2) says so once, here, rather than failing later in ORT or stopping the process.
if _blocker := platform_blocker():
    warnings.warn(f"opbridge's operators cannot run here: {_blocker}", RuntimeWarning, stacklevel=2)

__version__ = "0.1.0"
__all__ = ["create_session", "export", "library_info", "library_path", "manifest", "session_options", "tolerances", "verify",
           "__version__"]


# Submodules reachable as package attributes, imported on first use (PEP 562), and whether they need
# PyTorch. (Importing one also binds it on the package, so __getattr__ runs once per name.)
_SUBMODULES = {"ops": True, "bench": True, "demo": True, "rewrites": True, "detection": True,
               "check": False, "float16": False, "placement": False, "fuzz": False, "docs": False, "cli": False}


def __getattr__(name: str):
    if name in _SUBMODULES:
        if _SUBMODULES[name]:
            require_torch(f"opbridge.{name}")
        return importlib.import_module(f"opbridge.{name}")
    raise AttributeError(f"module 'opbridge' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))


def _torch_side(name: str):
    """The submodule opbridge.<name> (export or verify), imported on first use because it imports torch."""
    require_torch(f"opbridge.{name}")
    return importlib.import_module(f"opbridge.{name}")


def export(*args, **kwargs):
    """Exports a PyTorch model to ONNX with opbridge's custom nodes: opbridge.export.export, whose
    docstring has the arguments. Needs PyTorch (pip install "opbridge[torch]")."""
    return _torch_side("export").export(*args, **kwargs)


def verify(*args, **kwargs):
    """Exports a PyTorch model, runs it in ORT with opbridge and compares with eager PyTorch:
    opbridge.verify.verify, whose docstring has the arguments. Needs PyTorch."""
    return _torch_side("verify").verify(*args, **kwargs)


class _Package(types.ModuleType):
    """The package's module type. Importing the submodule opbridge.export (or opbridge.verify) makes
    Python bind it as the package attribute of the same name, which would replace the function
    opbridge.export by a module that cannot be called; the functions are kept instead."""

    def __setattr__(self, name, value):
        if name in ("export", "verify") and isinstance(value, types.ModuleType):
            return  # the submodule stays reachable as sys.modules["opbridge.<name>"]
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
