"""The installable package: `pip wheel .` builds the library into the wheel, and the installed
package finds it and runs a model with it."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_carries_the_library_and_works_installed(tmp_path):
    wheels = tmp_path / "wheels"
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="2")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-build-isolation", "--no-deps", "-q",
                    "-w", str(wheels)], check=True, env=env, cwd=tmp_path)
    (wheel,) = wheels.glob("opbridge-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "opbridge/lib/libopbridge_ort.so" in names and "opbridge/ops.toml" in names

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
(y,) = opbridge.create_session(model).run(None, {"x": np.ones((1, 1, 2, 2), np.float32), "g": np.zeros((1, 1, 1, 2), np.float32)})
print(float(y.ravel()[0]))
""" % str(target)
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop("OPBRIDGE_LIBRARY", None)
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.stdout.strip() == "1.0"
