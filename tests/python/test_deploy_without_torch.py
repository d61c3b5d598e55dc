"""The deploy side without PyTorch: in .cache/venv-deploy (onnxruntime, onnx, numpy and pytest at
the pinned versions, no torch; made by ./run.sh setup) the package imports, finds the library, runs
a model, and its deploy commands work, while export, verify and the demo say what to install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import opbridge
from graphs import one_node_model

REPO = Path(__file__).resolve().parents[2]
INSTALL_HINT = 'pip install "opbridge[torch]"'


@pytest.fixture
def run_deploy(deploy_python, tmp_path):
    """Runs the deploy environment's python (conftest.py) with the source tree's package and the
    built library: run_deploy(args, check=True) -> CompletedProcess."""
    def run(args: list[str], check: bool = True) -> subprocess.CompletedProcess:
        env = dict(os.environ, PYTHONPATH=str(REPO / "python"), OPBRIDGE_LIBRARY=opbridge.library_path())
        out = subprocess.run([deploy_python, *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                             timeout=300)
        if check and out.returncode != 0:
            raise AssertionError(f"{args} exited {out.returncode}:\n{out.stdout}\n{out.stderr}")
        return out

    return run


def roi_align_model(path: Path) -> Path:
    model = one_node_model("opbridge::RoiAlign", dict(output_height=2, output_width=2, spatial_scale=1.0,
                                                      sampling_ratio=2, mode="avg", aligned=1),
                           ["input", "rois"], ["output"], input_shapes={"input": [1, 1, 4, 4], "rois": ["n", 5]})
    path.write_bytes(model.SerializeToString())
    return path


# The input is the ramp f(y, x) = 4y + x, on which bilinear sampling is exact, so each bin's average
# is the ramp at the bin's centre: the aligned box (0, 0)-(2.5, 2) has bins 1.25 wide and 1 high,
# centred at x = 0.625, 1.875 and y = 0.5, 1.5.
API_SCRIPT = """
import importlib.util, sys
import numpy as np
assert importlib.util.find_spec("torch") is None, "torch is importable in the deploy environment"
import opbridge
assert "torch" not in sys.modules
import onnxruntime
path = opbridge.library_path()
assert path == %(library)r, path
assert isinstance(opbridge.session_options(), onnxruntime.SessionOptions)
session = opbridge.create_session(%(model)r)
x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
rois = np.array([[0.0, 0.5, 0.5, 3.0, 2.5]], np.float32)
(out,) = session.run(None, {"input": x, "rois": rois})
np.testing.assert_allclose(out.ravel(), [2.625, 3.875, 6.625, 7.875], rtol=1e-6)
assert opbridge.tolerances.tolerance("same_precision", np.dtype("float32")).rtol > 0
assert "mmcv::MMCVRoiAlign" in opbridge.manifest.find("mmcv::MMCVRoiAlign").identities
for name in ("export", "verify"):
    try:
        getattr(opbridge, name)(None, ())
    except ImportError as e:
        print(name, "->", e)
    else:
        raise AssertionError(f"opbridge.{name} ran without torch")
for name in ("ops", "bench", "demo"):  # the torch-side submodules, as package attributes
    try:
        getattr(opbridge, name)
    except ImportError as e:
        print(name, "->", e)
    else:
        raise AssertionError(f"opbridge.{name} imported without torch")
# The torch-free submodules are package attributes too.
assert callable(opbridge.check.check) and callable(opbridge.placement.copies_next_to_opbridge_nodes)
assert "torch" not in sys.modules
print("deploy ok")
"""


def test_package_runs_a_model_without_torch(run_deploy, tmp_path):
    model = roi_align_model(tmp_path / "roi_align.onnx")
    out = run_deploy(["-c", API_SCRIPT % {"library": opbridge.library_path(), "model": str(model)}])
    lines = out.stdout.splitlines()
    assert lines[-1] == "deploy ok"
    for name in ("export", "verify", "ops", "bench", "demo"):
        (message,) = [line for line in lines if line.startswith(f"{name} -> ")]
        assert f"opbridge.{name} needs PyTorch" in message and "torch, torchvision, onnxscript are not installed" in message
        assert INSTALL_HINT in message


def test_deploy_commands_without_torch(run_deploy, tmp_path):
    out = run_deploy(["-m", "opbridge", "ops"])
    assert "mmcv::MMCVRoiAlign" in out.stdout and "mmdeploy::TRTBatchedNMS" in out.stdout
    out = run_deploy(["-m", "opbridge", "check", str(roi_align_model(tmp_path / "m.onnx"))])
    assert ["opbridge", "RoiAlign", "1", "opbridge", "GPU", "graph"] in [line.split() for line in out.stdout.splitlines()]
    assert out.stdout.rstrip().endswith("(exit 0)")
    out = run_deploy(["-m", "opbridge", "float16", str(tmp_path / "m.onnx"), str(tmp_path / "m16.onnx")])
    assert out.stdout.splitlines() == [f"wrote {tmp_path / 'm16.onnx'}", "  opbridge::RoiAlign: 1 node in float16"]
    out = run_deploy(["-m", "opbridge", "check", str(tmp_path / "m16.onnx")])
    assert ["input", "input", "tensor(float16)", "[1, 1, 4, 4]"] in [line.split(None, 3) for line in out.stdout.splitlines()]


def test_without_onnxruntime_the_package_says_which_extra_to_install(deploy_python, tmp_path):
    """The package depends on neither onnxruntime nor onnxruntime-gpu (they break each other): where
    neither is installed, sessions and `opbridge check` say to install opbridge[cpu] or opbridge[gpu],
    and `opbridge ops` still lists every identity. The deploy environment's packages but onnxruntime
    are linked into a folder that python -S (no site-packages) takes as its only path."""
    site = Path(subprocess.run([deploy_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    without = tmp_path / "site"
    without.mkdir()
    for entry in site.iterdir():
        if not entry.name.startswith("onnxruntime"):
            (without / entry.name).symlink_to(entry)
    script = """
import opbridge
from opbridge.cli import main
for call in (lambda: opbridge.create_session("m.onnx"), lambda: opbridge.check.check("m.onnx")):
    try:
        call()
    except ImportError as e:
        print(e)
main(["ops"])
"""
    env = dict(os.environ, PYTHONPATH=f"{without}{os.pathsep}{REPO / 'python'}", OPBRIDGE_LIBRARY=opbridge.library_path())
    out = subprocess.run([deploy_python, "-S", "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    hint = ('pip install "opbridge[cpu]" (onnxruntime), or "opbridge[gpu]" (onnxruntime-gpu, for the CUDA kernels); '
            "only one of the two: both provide the module onnxruntime")
    assert lines[0] == f"opbridge.create_session needs ONNX Runtime, which is not installed: {hint}."
    assert lines[1] == f"opbridge check needs ONNX Runtime, which is not installed: {hint}."
    assert f"ONNX Runtime here: not installed: {hint}" in lines
    assert sum("::" in line.split(" ", 1)[0] for line in lines) == len(list(opbridge.manifest.identities()))


@pytest.mark.parametrize("command", [["demo"], ["verify", "mymodels:make"], ["bench", "roi_align"]])
def test_torch_commands_say_what_to_install(run_deploy, command):
    out = run_deploy(["-m", "opbridge", *command], check=False)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(f"opbridge: opbridge {command[0]} needs PyTorch") and INSTALL_HINT in out.stderr
    assert "Traceback" not in out.stderr


def test_check_tests_pass_without_torch(run_deploy):
    """tests/python/test_check.py (opbridge check on mmcv, mmdeploy and opbridge files, its command
    line) needs no torch either: run it with the deploy environment's pytest."""
    out = run_deploy(["-m", "pytest", "-q", "-p", "no:cacheprovider", str(REPO / "tests/python/test_check.py")],
                     check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert " passed" in out.stdout.splitlines()[-1] and "failed" not in out.stdout.splitlines()[-1]


def test_submodules_are_package_attributes_in_a_fresh_interpreter(tmp_path):
    """With PyTorch installed, `import opbridge` still imports no torch, and opbridge.ops (every
    public op) and the other submodules are reachable as attributes, as the README uses them."""
    script = """
import sys
import opbridge
assert "torch" not in sys.modules
missing = [name for name in opbridge.ops.__all__ if not hasattr(opbridge.ops, name)]
assert not missing, missing
assert callable(opbridge.ops.nms_rotated) and callable(opbridge.ops.roi_align_rotated)
assert callable(opbridge.check.check) and opbridge.bench.WORKLOADS and callable(opbridge.fuzz.replay)
assert {"ops", "check", "bench"} <= set(dir(opbridge))
try:
    opbridge.no_such_thing
except AttributeError as e:
    assert "no attribute 'no_such_thing'" in str(e)
print(len(opbridge.ops.__all__), "ops ok")
"""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip().endswith("ops ok")
