"""The win_amd64 wheel in a Windows CPython, against the real onnxruntime.dll: ./run.sh test runs these
under Wine (tools/windows_python.sh) with the wheel installed, beside the conformance suite and
opbridge check's tests. What is Windows' own: the platform checks without /proc/cpuinfo, the DLL
found in the package, what a Windows library says it cannot do (CUDA), 2,000 load cycles in one
process (the DLL pins itself), and one sentence, naming the file and the rule, for an onnxruntime
older than 1.21 (OPBRIDGE_OLD_ONNXRUNTIME: a folder holding onnxruntime 1.20), a file that is not a
DLL, and a missing DLL."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from ctypes import wintypes
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import opbridge
from opbridge import _library

pytestmark = pytest.mark.skipif(sys.platform != "win32", reason="the Windows lane of ./run.sh test runs these")

IR_VERSION = 9  # what onnxruntime 1.20 reads too (onnx 1.23 writes 14 by default, beyond ORT 1.30's 13)
WINDOWS_NO_CUDA = "opbridge's Windows library has no CUDA kernels (they are built for Linux only)"


def roi_align_model() -> onnx.ModelProto:
    """One opbridge::RoiAlign node: 2 channels of 8 x 8, 3 RoIs (batch index, x1, y1, x2, y2), 2 x 2 bins."""
    node = helper.make_node("RoiAlign", ["input", "rois"], ["output"], domain="opbridge", output_height=2,
                            output_width=2, sampling_ratio=2)
    graph = helper.make_graph([node], "roi_align", [
        helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 2, 8, 8]),
        helper.make_tensor_value_info("rois", TensorProto.FLOAT, [3, 5])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [3, 2, 2, 2])])
    return helper.make_model(graph, ir_version=IR_VERSION,
                             opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("opbridge", 1)])


def roi_align_feeds() -> dict:
    rng = np.random.default_rng(0)
    return {"input": rng.random((1, 2, 8, 8), dtype=np.float32),
            "rois": np.array([[0, 0, 0, 4, 4], [0, 1, 2, 7, 6], [0, 3, 3, 5, 5]], np.float32)}


def test_the_platform_is_known_without_proc_cpuinfo():
    assert _library.platform_blocker() == ""
    missing, source = _library._missing_x86_64_v2_features("win32", "/proc/cpuinfo")
    assert (missing, source) == ([], "IsProcessorFeaturePresent")
    path = Path(opbridge.library_path())
    assert path.name == "opbridge_ort.dll" and path.parent == Path(opbridge.__file__).parent / "lib"


def test_the_library_says_it_has_no_cuda_kernels():
    info = opbridge.library_info()
    assert info["cuda"] is False and info["cuda_twins"] is False
    assert info["cuda_twins_blocker"] == WINDOWS_NO_CUDA


def test_ops_lists_every_identity_on_the_cpu():
    out = subprocess.run([sys.executable, "-m", "opbridge", "ops"], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines() if "::" in line.split(" ", 1)[0]]
    assert len(rows) == len(list(opbridge.manifest.identities())) and {row[2] for row in rows} == {"CPU"}
    assert out.strip().splitlines()[-1] == (f"CUDA kernels on this machine: not registered by {opbridge.library_path()}: "
                                            f"{WINDOWS_NO_CUDA}; every node runs on the CPU")


class ProcessMemory(ctypes.Structure):  # PROCESS_MEMORY_COUNTERS_EX
    _fields_ = [("cb", wintypes.DWORD), ("PageFaultCount", wintypes.DWORD)] + [
        (name, ctypes.c_size_t) for name in ("PeakWorkingSetSize", "WorkingSetSize", "QuotaPeakPagedPoolUsage",
                                             "QuotaPagedPoolUsage", "QuotaPeakNonPagedPoolUsage",
                                             "QuotaNonPagedPoolUsage", "PagefileUsage", "PeakPagefileUsage",
                                             "PrivateUsage")]


def private_bytes() -> int:
    """The process's committed private memory: PagefileUsage, which Windows counts as PrivateUsage and
    Wine 8.0 fills where it leaves PrivateUsage 0."""
    counters = ProcessMemory()
    counters.cb = ctypes.sizeof(counters)
    kernel32 = ctypes.windll.kernel32
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    ok = kernel32.K32GetProcessMemoryInfo(wintypes.HANDLE(kernel32.GetCurrentProcess()), ctypes.byref(counters),
                                          counters.cb)
    assert ok, "K32GetProcessMemoryInfo failed"
    return counters.PagefileUsage


CYCLES = 2000


def test_2000_register_session_run_cycles_in_one_process():
    """Each cycle registers the library into new SessionOptions, makes a session (ORT loads the DLL for
    it and unloads it when the session ends: the DLL stays pinned) and runs it. Without the pin a
    process died after about 1,050 cycles. The private bytes the cycles add are compared with the same
    cycles of a standard-ONNX model without the library (ORT's own growth): opbridge adds at most 4 MiB
    over 1,800 cycles (after 200 of warm-up)."""
    import onnxruntime as ort

    ours = roi_align_model().SerializeToString()
    feeds = roi_align_feeds()
    expected = opbridge.create_session(ours).run(None, feeds)[0]
    plain_node = helper.make_node("Relu", ["x"], ["y"])
    plain = helper.make_model(helper.make_graph([plain_node], "relu", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])]),
        ir_version=IR_VERSION, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()

    def cycles(model, with_library, count):
        for _ in range(count):
            options = ort.SessionOptions()
            if with_library:
                _library.register_library(options)
            session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            out = session.run(None, feeds if with_library else {"x": feeds["input"]})[0]
            del session, options
        return out

    before = private_bytes()
    block = np.ones(2**23)  # 64 MiB: the measure must see it, or the comparison below would say nothing
    assert private_bytes() - before >= 60 * 2**20
    del block
    growth = {}
    for name, model, with_library in (("ORT alone", plain, False), ("opbridge", ours, True)):
        cycles(model, with_library, 200)
        before = private_bytes()
        last = cycles(model, with_library, CYCLES - 200)
        growth[name] = private_bytes() - before
        if with_library:
            np.testing.assert_array_equal(last, expected)
    print(f"private bytes added over {CYCLES - 200} cycles: " +
          ", ".join(f"{name} {value / 2**20:.2f} MiB" for name, value in growth.items()))
    assert growth["opbridge"] - max(growth["ORT alone"], 0) <= 4 * 2**20, growth


def run_python(code: str, path: list[str], **env) -> subprocess.CompletedProcess:
    """`code` in a new Windows Python whose sys.path starts with `path`."""
    prelude = f"import sys; sys.path[:0] = {path!r}\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True,
                          env={**os.environ, **env})


SESSION = """
import opbridge, onnx
from onnx import helper, TensorProto
node = helper.make_node("Relu", ["x"], ["y"])
model = helper.make_model(helper.make_graph([node], "relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])]),
                          ir_version=9, opset_imports=[helper.make_opsetid("", 17)])
try:
    opbridge.create_session(model)
except Exception as error:
    print(type(error).__name__ + ": " + str(error))
"""


def test_an_onnxruntime_older_than_1_21_is_refused_in_one_sentence():
    old = os.environ.get("OPBRIDGE_OLD_ONNXRUNTIME")
    assert old, "OPBRIDGE_OLD_ONNXRUNTIME (a folder with onnxruntime 1.20) is not set: ./run.sh test sets it"
    result = run_python("import onnxruntime; print(onnxruntime.__version__)\n" + SESSION, [old])
    version, message = result.stdout.strip().splitlines()
    assert version.startswith("1.20.")
    assert message.startswith(f"RuntimeError: ONNX Runtime cannot load the opbridge library {opbridge.library_path()}: ")
    assert message.endswith(f"opbridge: needs ONNX Runtime >= 1.21, this process runs {version}"), message


def test_a_file_that_is_not_a_dll_is_named(tmp_path):
    fake = tmp_path / "opbridge_ort.dll"
    fake.write_text("not a DLL\n" * 64)
    result = run_python(SESSION + "\nopbridge.library_info()", [], OPBRIDGE_LIBRARY=str(fake))
    message = result.stdout.strip()
    assert message.startswith(f"RuntimeError: ONNX Runtime cannot load the opbridge library {fake}: "), message
    assert re.search(rf"^OSError: {re.escape(str(fake))} cannot be loaded on this AMD64 machine: .*193",
                     result.stderr, re.M), result.stderr


def test_a_missing_dll_is_named_with_what_to_do(tmp_path):
    """The package's own DLL gone (a partial install, an antivirus's quarantine): library_path()
    names where it looked and says to reinstall."""
    package = tmp_path / "opbridge"
    # shutil.copyfile: copy2 calls CopyFile2, which Wine 8.0 lacks.
    shutil.copytree(Path(opbridge.__file__).parent, package, copy_function=shutil.copyfile)
    (package / "lib" / "opbridge_ort.dll").unlink()
    result = run_python("import opbridge\nopbridge.library_path()", [str(tmp_path)])
    last = result.stderr.strip().splitlines()[-1]
    assert last == (f"FileNotFoundError: opbridge_ort.dll not found (looked in: {package / 'lib' / 'opbridge_ort.dll'}, "
                    f"{tmp_path.parent / 'build' / 'opbridge_ort.dll'}). Reinstall the package (pip install "
                    "--force-reinstall opbridge), or set OPBRIDGE_LIBRARY."), last
