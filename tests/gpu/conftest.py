"""The GPU tests (./run.sh test-gpu): they need a CUDA GPU, onnxruntime-gpu and a CUDA build of the
library, which ./run.sh test-gpu checks before it runs them; run by hand elsewhere they stop with
the reason instead of failing one by one."""

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "tests" / "python"))  # the op tests' helpers and the detector families


def pytest_sessionstart(session):
    import onnxruntime

    import opbridge

    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        raise pytest.UsageError(f"onnxruntime {onnxruntime.__version__} has no CUDA execution provider: the GPU "
                                "tests need onnxruntime-gpu (./run.sh test-gpu says how)")
    if not opbridge.library_info()["cuda"]:
        raise pytest.UsageError(f"{opbridge.library_path()} has no CUDA kernels: build it with ./run.sh build")
    if not opbridge.library_info()["cuda_twins"]:
        raise pytest.UsageError(f"{opbridge.library_path()} registers no CUDA kernels on this machine: "
                                f"{opbridge.library_info()['cuda_twins_blocker']}")
