import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The package is used from the source tree (./run.sh also puts it on .venv's path).
sys.path.insert(0, str(REPO / "python"))


def pytest_sessionstart(session):
    """./run.sh runs the library tests again in other onnxruntime versions (OPBRIDGE_EXPECT_ORT_VERSION)
    and with the sanitized library (OPBRIDGE_LIBRARY): a wrong path must stop the run, not quietly
    test .venv's onnxruntime or build/'s library again (library_path() skips a missing file)."""
    expected = os.environ.get("OPBRIDGE_EXPECT_ORT_VERSION")
    if expected:
        import onnxruntime

        if onnxruntime.__version__ != expected:
            raise pytest.UsageError(f"OPBRIDGE_EXPECT_ORT_VERSION={expected}, but onnxruntime "
                                    f"{onnxruntime.__version__} was imported from {onnxruntime.__file__}")
    library = os.environ.get("OPBRIDGE_LIBRARY")
    if library and not Path(library).is_file():
        raise pytest.UsageError(f"OPBRIDGE_LIBRARY={library} is not a file")


# The torch-free environment ./run.sh setup makes (onnxruntime, onnx, numpy, pytest: a deployer's).
DEPLOY_PYTHON = REPO / ".cache" / "venv-deploy" / "bin" / "python"


@pytest.fixture(scope="session")
def deploy_python() -> str:
    if not DEPLOY_PYTHON.is_file():
        pytest.fail(f"the torch-free environment {DEPLOY_PYTHON.parent.parent} is missing: run ./run.sh setup")
    return str(DEPLOY_PYTHON)


def cmake_env() -> dict:
    """The environment for CMake: .venv's cmake and ninja first on PATH, two compile jobs."""
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                CMAKE_BUILD_PARALLEL_LEVEL="2")


@pytest.fixture(scope="session")
def cmake_build(tmp_path_factory) -> Path:
    """The library configured and built as a C++ user builds it (CMake, Ninja, Release, no tests) in
    a temporary folder, once per test session: the compile takes minutes, so the CMake package test
    installs from it and the wheel test builds its wheel in it (scikit-build-core's build-dir)."""
    build = tmp_path_factory.mktemp("cmake-build")
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                    "-DOPBRIDGE_BUILD_TESTS=OFF"], check=True, env=cmake_env(), stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build)], check=True, env=cmake_env(), stdout=subprocess.DEVNULL)
    return build
