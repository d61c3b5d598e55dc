"""The built libopbridge_ort.so as a product: what it exports and links, how it loads from
Python and from a C++ application, and that every manifest identity is registered."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch
import torchvision

import opbridge
from graphs import one_node_model, run
from opbridge import manifest

REPO = Path(__file__).resolve().parents[2]


def build_setting(name: str) -> str:
    """A value from the CMake cache of the build the tests run against."""
    cache = (Path(opbridge.library_path()).parent / "CMakeCache.txt").read_text()
    match = re.search(rf"^{name}:[A-Z]+=(.*)$", cache, re.M)
    assert match, f"{name} not in CMakeCache.txt"
    return match.group(1)


def test_exports_only_register_custom_ops():
    out = subprocess.run(["nm", "-D", "--defined-only", opbridge.library_path()], check=True,
                         capture_output=True, text=True).stdout
    assert [line.split()[-1] for line in out.splitlines() if line.strip()] == ["RegisterCustomOps"]


def test_does_not_link_onnxruntime():
    out = subprocess.run(["readelf", "-d", opbridge.library_path()], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", out)
    assert needed and not any("onnxruntime" in lib for lib in needed), needed


# A value for every required attribute, by type (the op's own checks may still refuse it: only
# whether ORT finds the op and its inputs is tested here).
SAMPLE_ATTRIBUTE = {"int": 2, "float": 0.5, "string": "avg", "ints": [1, 1], "floats": [0.25]}


@pytest.mark.parametrize("domain,name,op", manifest.identities(), ids=lambda v: str(v) if isinstance(v, str) else "")
def test_every_manifest_identity_is_registered(domain, name, op):
    """A one-node model per identity, with the manifest's inputs and outputs, loads in ORT."""
    identity = f"{domain}::{name}"
    signature = op.signature(identity)
    inputs = [t.name for t in signature.inputs]
    attrs = {a.name: SAMPLE_ATTRIBUTE[a.type] for a in signature.attributes if a.required}
    model = one_node_model(identity, attrs, inputs, [t.name for t in signature.outputs],
                           input_types={t.name: t.dtype for t in signature.inputs})
    session = opbridge.create_session(model)
    assert [i.name for i in session.get_inputs()] == inputs


def test_many_sessions_share_the_registration():
    model = one_node_model("opbridge::GridSample", {}, ["input", "grid"], ["output"])
    feeds = {"input": np.ones((1, 1, 2, 2), np.float32), "grid": np.zeros((1, 1, 1, 2), np.float32)}
    sessions = [opbridge.create_session(model) for _ in range(20)]
    for s in sessions:
        np.testing.assert_allclose(s.run(None, feeds)[0], 1.0)
    del sessions
    np.testing.assert_allclose(opbridge.create_session(model).run(None, feeds)[0], 1.0)


def test_unknown_op_in_a_known_domain_is_reported_by_ort():
    model = one_node_model("mmcv::NoSuchOp", {}, ["x"], ["y"])
    with pytest.raises(Exception, match="NoSuchOp"):
        opbridge.create_session(model)


def _compile_example(tmp_path: Path, linked: bool) -> Path:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.fail("g++ is needed to build the C++ example (./run.sh setup installs it)")
    ort_lib_dir = Path(ort.__file__).parent / "capi"
    (ort_lib,) = ort_lib_dir.glob("libonnxruntime.so.*")
    link_dir = tmp_path / "lib"
    link_dir.mkdir()
    # The wheel ships libonnxruntime.so.<version> whose SONAME is libonnxruntime.so.1.
    (link_dir / "libonnxruntime.so").symlink_to(ort_lib)
    (link_dir / "libonnxruntime.so.1").symlink_to(ort_lib)
    exe = tmp_path / ("example_linked" if linked else "example")
    cmd = [compiler, "-std=c++17", "-O1", str(REPO / "examples/cpp/roi_align_example.cc"), "-o", str(exe),
           f"-I{build_setting('ORT_INCLUDE_DIR')}", f"-I{REPO / 'include'}", f"-L{link_dir}", "-lonnxruntime",
           f"-Wl,-rpath,{link_dir}"]
    if linked:
        lib_dir = Path(opbridge.library_path()).parent
        cmd += ["-DOPBRIDGE_LINKED", f"-L{lib_dir}", "-lopbridge_ort", f"-Wl,-rpath,{lib_dir}"]
    subprocess.run(cmd, check=True)
    return exe


@pytest.mark.parametrize("linked", [False, True], ids=["RegisterCustomOpsLibrary", "RegisterCustomOps"])
def test_cpp_application(tmp_path, linked):
    """A C++ program built against the ORT 1.21 headers and the onnxruntime 1.30 runtime runs an
    opbridge model, loading the library by path or calling RegisterCustomOps itself."""
    exe = _compile_example(tmp_path, linked)
    model = one_node_model("mmcv::MMCVRoiAlign", dict(output_height=2, output_width=2, spatial_scale=1.0,
                                                      sampling_ratio=2, mode="avg", aligned=1), ["input", "rois"], ["output"])
    model_path = tmp_path / "roi_align.onnx"
    model_path.write_bytes(model.SerializeToString())
    out = subprocess.run([str(exe), str(model_path), "--linked" if linked else opbridge.library_path()],
                         check=True, capture_output=True, text=True).stdout
    values = np.array([float(v) for v in out.split()], np.float32)
    x = torch.arange(16, dtype=torch.float32).reshape(1, 1, 4, 4)
    rois = torch.tensor([[0.0, 0.5, 0.5, 3.0, 2.5]])
    expected = torchvision.ops.roi_align(x, rois, 2, 1.0, 2, True).flatten().numpy()
    np.testing.assert_allclose(values, expected, rtol=1e-5)


def test_library_path_override(monkeypatch, tmp_path):
    missing = tmp_path / "nope.so"
    monkeypatch.setenv("OPBRIDGE_LIBRARY", str(missing))
    assert opbridge.library_path() != str(missing)  # falls through to the next candidate
    monkeypatch.setenv("OPBRIDGE_LIBRARY", opbridge.library_path())
    assert Path(opbridge.library_path()).is_file()
