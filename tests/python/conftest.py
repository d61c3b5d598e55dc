import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The package is used from the source tree (./run.sh also puts it on .venv's path), except where
# ./run.sh tests an installed wheel (OPBRIDGE_TEST_INSTALLED=1: the package and library it installed).
if not os.environ.get("OPBRIDGE_TEST_INSTALLED"):
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
    if os.environ.get("OPBRIDGE_TEST_INSTALLED"):
        import opbridge

        package = Path(opbridge.__file__).parent
        if REPO in package.parents or library or Path(opbridge.library_path()).parent != package / "lib":
            raise pytest.UsageError(f"OPBRIDGE_TEST_INSTALLED=1, but the package is {package} and its library "
                                    f"{opbridge.library_path()}: not an installed wheel's")


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


@pytest.fixture
def cmake_build(tmp_path_factory) -> Path:
    """The library configured and built as a C++ user builds it (CMake, Ninja, Release, no tests) in
    a temporary folder, once per test run: the compile takes a minute, so the CMake package test
    installs from it and the wheel test builds its wheel in it (scikit-build-core's build-dir).
    With pytest-xdist each worker is a session: the folder is the one the workers share (the parent
    of a worker's base temp), and a file lock held for the whole test lets one test at a time use
    it (each reconfigures it) and the first build it."""
    from filelock import FileLock  # torch's dependency: the torch-free environment runs this conftest too

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    build, built = shared / "cmake-build", shared / "cmake-build.done"
    with FileLock(str(shared / "cmake-build.lock")):
        if not built.is_file():
            subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                            "-DOPBRIDGE_BUILD_TESTS=OFF"], check=True, env=cmake_env(), stdout=subprocess.DEVNULL)
            subprocess.run(["cmake", "--build", str(build)], check=True, env=cmake_env(), stdout=subprocess.DEVNULL)
            built.touch()
        yield build


# --- Collection: the slow tests first, and --each-value-once ---------------------------------------


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a test of 10 s or more; collected first, so that the two "
                                       "pytest-xdist workers of ./run.sh test finish together")
    config.addinivalue_line("markers", "sanitizer_heavy: GPU work of seconds that compute-sanitizer, which "
                                       "instruments every access, would stretch to hours; ./run.sh test-gpu "
                                       "leaves it out of the sanitizer runs (smaller tests run the same code)")


def pytest_addoption(parser):
    parser.addoption(
        "--each-value-once", action="store_true",
        help="of each parametrized test, run only the cases that bring a parameter value no earlier case "
             "of that test had (every identity, mode, shape, dtype and bad input still runs at least once, "
             "not every combination); tests without parameters all run")


def _value_key(value) -> str:
    return f"{type(value).__qualname__}:{value!r}"


def _each_value_once(items: list) -> tuple[list, list]:
    seen: set[tuple[str, str, str]] = set()
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None:
            kept.append(item)
            continue
        function = item.nodeid.split("[", 1)[0]
        values = {(function, name, _value_key(value)) for name, value in callspec.params.items()}
        if values - seen:
            seen |= values
            kept.append(item)
        else:
            dropped.append(item)
    return kept, dropped


def pytest_collection_modifyitems(config, items):
    if config.getoption("--each-value-once"):
        kept, dropped = _each_value_once(items)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: slow ones first
