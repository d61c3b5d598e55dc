"""The installable package: `pip wheel .` builds the library into the wheel, and the installed
package finds it and runs a model with it, also where only onnxruntime, onnx and numpy are
installed (the deploy environment)."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import cmake_env

REPO = Path(__file__).resolve().parents[2]


def test_wheel_carries_the_library_and_works_installed(tmp_path, cmake_build, deploy_python):
    wheels = tmp_path / "wheels"
    # Built in the session's CMake build folder: scikit-build-core reconfigures it for the wheel
    # (OPBRIDGE_INSTALL_LIBDIR=opbridge/lib) without compiling the library again.
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-build-isolation", "--no-deps", "-q",
                    "-w", str(wheels), f"--config-settings=build-dir={cmake_build}"],
                   check=True, env=cmake_env(), cwd=tmp_path)
    (wheel,) = wheels.glob("opbridge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "opbridge/lib/libopbridge_ort.so" in names and "opbridge/ops.toml" in names
    # The wheel takes the "runtime" install component only: no header or CMake package in it.
    assert all(n.startswith(("opbridge/", "opbridge-")) for n in names), names

    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True)
    script = """
import numpy as np, onnx, opbridge
from onnx import helper, TensorProto
assert opbridge.library_path().startswith(%r), opbridge.library_path()
node = helper.make_node("GridSample", ["x", "g"], ["y"], domain="opbridge")
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in "xg"],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("opbridge", 1)], ir_version=8)
onnx.save(model, "grid_sample.onnx")
(y,) = opbridge.create_session(model).run(None, {"x": np.ones((1, 1, 2, 2), np.float32), "g": np.zeros((1, 1, 1, 2), np.float32)})
print(float(y.ravel()[0]))
"""
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop("OPBRIDGE_LIBRARY", None)
    out = subprocess.run([sys.executable, "-c", script % str(target)], check=True, capture_output=True, text=True,
                         env=env, cwd=tmp_path)
    assert out.stdout.strip() == "1.0"

    # The same wheel installed by the torch-free environment's pip, run by its python.
    deploy_target = tmp_path / "deploy-site"
    subprocess.run([deploy_python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(deploy_target),
                    str(wheel)], check=True)
    env["PYTHONPATH"] = str(deploy_target)
    out = subprocess.run([deploy_python, "-c", script % str(deploy_target)], check=True, capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert out.stdout.strip() == "1.0"
    out = subprocess.run([deploy_python, "-m", "opbridge", "check", "grid_sample.onnx"], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ["opbridge", "GridSample", "1", "opbridge", "GPU", "graph"] in [line.split() for line in out.stdout.splitlines()]
    assert str(deploy_target / "opbridge" / "lib" / "libopbridge_ort.so") in out.stdout
