"""opbridge: custom operators for deploying PyTorch vision models with ONNX Runtime.

    import opbridge
    opbridge.export(model, args, "model.onnx")           # opbridge's custom nodes in the graph
    session = opbridge.create_session("model.onnx")      # ORT session with the ops registered
    report = opbridge.verify(model, args)                # export + run + compare with eager
"""

from opbridge._library import create_session, library_path, session_options
from opbridge.export import export
from opbridge.verify import verify
from opbridge import tolerances

__version__ = "0.1.0"
__all__ = ["create_session", "export", "library_path", "session_options", "verify", "__version__"]
