"""The built libopbridge_ort.so as a product: what it exports and links, how it loads from
Python and from a C++ application, and that every manifest identity is registered."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
import torch
import torchvision

import opbridge
from conftest import cmake_env
from graphs import one_node_model, run
from opbridge import manifest

REPO = Path(__file__).resolve().parents[2]


def build_setting(name: str) -> str:
    """A value from the CMake cache of the build the tests run against."""
    cache = (Path(opbridge.library_path()).parent / "CMakeCache.txt").read_text()
    match = re.search(rf"^{name}:[A-Z]+=(.*)$", cache, re.M)
    assert match, f"{name} not in CMakeCache.txt"
    return match.group(1)


def test_exports_only_register_custom_ops_and_the_library_info():
    out = subprocess.run(["nm", "-D", "--defined-only", opbridge.library_path()], check=True,
                         capture_output=True, text=True).stdout
    assert sorted(line.split()[-1] for line in out.splitlines() if line.strip()) == \
        ["OpbridgeLibraryInfo", "RegisterCustomOps"]


def test_library_info():
    info = opbridge.library_info()
    assert info["version"] == opbridge.__version__ and isinstance(info["cuda"], bool)
    # The development build (./run.sh) has the CUDA kernels, compiled for what run.sh asks.
    if Path(opbridge.library_path()).parent.name == "build":
        assert info["cuda"] and info["cuda_architectures"] == build_setting("CMAKE_CUDA_ARCHITECTURES").replace(";", ",")


def _nvidia_driver_version() -> int:
    """The CUDA version this machine's NVIDIA driver supports (cuDriverGetVersion), 0 without a driver."""
    import ctypes

    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0
    version = ctypes.c_int(0)
    return version.value if driver.cuDriverGetVersion(ctypes.byref(version)) == 0 else 0


def test_cuda_twins_are_registered_only_where_the_driver_can_run_them(capsys):
    """Without a driver for the CUDA runtime the kernels were built with, the library registers no CUDA
    twins (a node given to the CUDA execution provider would fail to launch) and says why; the CPU
    ops are unaffected."""
    info = opbridge.library_info()
    driver = _nvidia_driver_version()
    if not info["cuda"]:
        assert info["cuda_twins"] is False
    elif driver == 0:
        assert info["cuda_twins"] is False
        assert info["cuda_twins_blocker"] == "no NVIDIA driver on this machine (libcuda.so.1 not found)"
    elif driver // 1000 < 13:  # the kernels' runtime is CUDA 13 (requirements.txt's cuda-toolkit)
        assert info["cuda_twins"] is False and info["cuda_twins_blocker"].startswith("the NVIDIA driver supports CUDA")
    else:
        assert info["cuda_twins"] is True and "cuda_twins_blocker" not in info
    from opbridge.cli import main

    assert main(["ops"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    last = lines[-1]
    # Each identity's data types, from the manifest: RoIAlign's T takes the half types.
    (roi_align,) = [line.split() for line in lines if line.startswith("mmcv::MMCVRoiAlign ")]
    assert roi_align[3] == "float32,float16,bfloat16", roi_align
    if info["cuda_twins"]:
        assert last.startswith("CUDA kernels on this machine: registered by ")
    else:
        assert last.endswith(f": {opbridge._library.cuda_twins_blocker()}; every node runs on the CPU")
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    model = one_node_model("opbridge::RoiAlign", {"output_height": 1, "output_width": 1, "aligned": 1},
                           ["input", "rois"], ["output"])
    (out,) = run(model, {"input": x, "rois": np.array([[0, 0, 0, 4, 4]], np.float32)})
    assert out.tolist() == [[[[7.5]]]]


def test_does_not_link_onnxruntime():
    out = subprocess.run(["readelf", "-d", opbridge.library_path()], check=True, capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", out)
    assert needed and not any("onnxruntime" in lib for lib in needed), needed


# A value for every required attribute, by type (the op's own checks may still refuse it: only
# whether ORT finds the op and its inputs is tested here).
SAMPLE_ATTRIBUTE = {"int": 2, "float": 0.5, "string": "avg", "ints": [1, 1], "floats": [0.25]}
# Required attributes whose valid values the generic samples are not (bicubic's 2 scale factors).
SAMPLE_BY_NAME = {"scale_factor": [2.0, 2.0]}


def concrete_dtype(dtype: str, op) -> str:
    """A manifest dtype as a real one: the type parameter T (cummax) as the op's first dtype, an
    input taking either of two dtypes ("int64 or int32") as the first."""
    return op.dtypes[0] if dtype == "T" else dtype.split(" or ")[0]


@pytest.mark.parametrize("domain,name,op", manifest.identities(), ids=lambda v: str(v) if isinstance(v, str) else "")
def test_every_manifest_identity_is_registered(domain, name, op):
    """A one-node model per identity, with the manifest's inputs and outputs, loads in ORT."""
    identity = f"{domain}::{name}"
    signature = op.signature(identity)
    inputs = [t.name for t in signature.inputs]
    attrs = {a.name: a.allowed[0] if a.allowed else SAMPLE_BY_NAME.get(a.name, SAMPLE_ATTRIBUTE[a.type])
             for a in signature.attributes if a.required}
    model = one_node_model(identity, attrs, inputs, [t.name for t in signature.outputs],
                           input_types={t.name: concrete_dtype(t.dtype, op) for t in signature.inputs})
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


def _onnxruntime_link_dir(tmp_path: Path) -> Path:
    """A folder with libonnxruntime.so for applications to link: the onnxruntime wheel's library."""
    ort_lib_dir = Path(ort.__file__).parent / "capi"
    (ort_lib,) = ort_lib_dir.glob("libonnxruntime.so.*")
    link_dir = tmp_path / "lib"
    link_dir.mkdir()
    # The wheel ships libonnxruntime.so.<version> whose SONAME is libonnxruntime.so.1.
    (link_dir / "libonnxruntime.so").symlink_to(ort_lib)
    (link_dir / "libonnxruntime.so.1").symlink_to(ort_lib)
    return link_dir


def _compile_example(tmp_path: Path, linked: bool) -> Path:
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.fail("g++ is needed to build the C++ example (./run.sh setup installs it)")
    link_dir = _onnxruntime_link_dir(tmp_path)
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
    _check_example(exe, tmp_path, "--linked" if linked else opbridge.library_path())


def _check_example(exe: Path, tmp_path: Path, library_argument: str) -> None:
    """Runs the example on a one-node mmcv RoIAlign model; its output must be torchvision's."""
    model = one_node_model("mmcv::MMCVRoiAlign", dict(output_height=2, output_width=2, spatial_scale=1.0,
                                                      sampling_ratio=2, mode="avg", aligned=1), ["input", "rois"], ["output"])
    model_path = tmp_path / "roi_align.onnx"
    model_path.write_bytes(model.SerializeToString())
    out = subprocess.run([str(exe), str(model_path), library_argument], check=True, capture_output=True,
                         text=True).stdout
    values = np.array([float(v) for v in out.split()], np.float32)
    x = torch.arange(16, dtype=torch.float32).reshape(1, 1, 4, 4)
    rois = torch.tensor([[0.0, 0.5, 0.5, 3.0, 2.5]])
    expected = torchvision.ops.roi_align(x, rois, 2, 1.0, 2, True).flatten().numpy()
    np.testing.assert_allclose(values, expected, rtol=1e-5)


@pytest.mark.slow
def test_cmake_package_builds_the_example(cmake_build, tmp_path):
    """`cmake --install` gives the library, its header and a CMake package; the example's own CMake
    project (examples/cpp) finds it with find_package(opbridge), links opbridge::opbridge_ort and runs,
    calling RegisterCustomOps itself and loading the installed library by path."""
    env = cmake_env()
    # The wheel test may have reconfigured the shared build for its own layout: back to a C++ user's.
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(cmake_build), "-DOPBRIDGE_INSTALL_LIBDIR=lib"], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", str(cmake_build), "--prefix", str(prefix)], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    installed = sorted(str(p.relative_to(prefix)) for p in prefix.rglob("*") if p.is_file())
    assert installed == ["include/opbridge/opbridge_ort.h", "lib/cmake/opbridge/opbridgeConfig.cmake",
                         "lib/cmake/opbridge/opbridgeConfigVersion.cmake", "lib/cmake/opbridge/opbridgeTargets-release.cmake",
                         "lib/cmake/opbridge/opbridgeTargets.cmake", "lib/libopbridge_ort.so"]

    example = tmp_path / "example-build"
    ort_root = re.search(r"^ONNXRUNTIME_ROOT:PATH=(.*)$", (cmake_build / "CMakeCache.txt").read_text(), re.M).group(1)
    subprocess.run(["cmake", "-S", str(REPO / "examples/cpp"), "-B", str(example), "-G", "Ninja",
                    f"-DCMAKE_PREFIX_PATH={prefix}", f"-DONNXRUNTIME_ROOT={ort_root}",
                    f"-DONNXRUNTIME_LIBRARY={_onnxruntime_link_dir(tmp_path) / 'libonnxruntime.so'}"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(example)], check=True, env=env, stdout=subprocess.DEVNULL)
    exe = example / "roi_align_example"
    dynamic = subprocess.run(["readelf", "-d", str(exe)], check=True, capture_output=True, text=True).stdout
    assert "[libopbridge_ort.so]" in dynamic and str(prefix / "lib") in dynamic  # the installed library
    _check_example(exe, tmp_path, "--linked")
    _check_example(exe, tmp_path, str(prefix / "lib" / "libopbridge_ort.so"))


def test_library_path_override(monkeypatch, tmp_path):
    missing = tmp_path / "nope.so"
    monkeypatch.setenv("OPBRIDGE_LIBRARY", str(missing))
    assert opbridge.library_path() != str(missing)  # falls through to the next candidate
    monkeypatch.setenv("OPBRIDGE_LIBRARY", opbridge.library_path())
    assert Path(opbridge.library_path()).is_file()


X86_64_V2_CPU = "processor\t: 0\nflags\t\t: fpu sse2 cx16 lahf_lm popcnt pni sse4_1 sse4_2 ssse3 avx2 fma\n"
CORE2_CPU = "processor\t: 0\nflags\t\t: fpu sse2 cx16 lahf_lm pni ssse3\n"


def test_platform_blocker_names_what_the_machine_lacks(tmp_path):
    from opbridge._library import platform_blocker

    (tmp_path / "v2").write_text(X86_64_V2_CPU)
    (tmp_path / "core2").write_text(CORE2_CPU)
    assert platform_blocker("linux", "x86_64", str(tmp_path / "v2")) == ""
    assert platform_blocker("linux", "x86_64", str(tmp_path / "core2")) == (
        f"this CPU lacks popcnt, sse4_1, sse4_2 ({tmp_path / 'core2'}): opbridge's library needs an x86-64-v2 CPU "
        "(SSE4.2 and POPCNT: Intel since 2008, AMD since 2011)")
    assert platform_blocker("linux", "aarch64", str(tmp_path / "core2")) == ""  # no x86 features on ARM
    where = "opbridge's library runs on Linux on x86-64 and aarch64 CPUs and Windows on x86-64 CPUs"
    assert platform_blocker("darwin", "arm64") == f"{where}; this machine is darwin arm64"
    assert platform_blocker("linux", "riscv64").endswith("this machine is linux riscv64")
    assert platform_blocker("win32", "ARM64") == f"{where}; this machine is win32 ARM64"
    assert platform_blocker("win32", "AMD64", pointer_bits=32) == (
        "this Python is a 32-bit program and cannot load opbridge's 64-bit library: use a 64-bit Python")
    assert platform_blocker("linux", "x86_64", str(tmp_path / "v2"), pointer_bits=32).startswith("this Python is a 32-bit")
    # Windows' CPU features come from IsProcessorFeaturePresent (tests/windows checks it on Windows).
    assert platform_blocker() == ""  # this machine


# A machine the library cannot run on, as the package sees it: platform.machine() says riscv64.
ON_RISCV = "import platform; platform.machine = lambda: 'riscv64'\n"


def test_unsupported_machine_is_one_sentence_not_a_crash(tmp_path):
    """import opbridge warns, library_path() raises UnsupportedPlatformError, and `opbridge ops` still
    lists every identity, with CPU only, and says why the library cannot be used."""
    script = ON_RISCV + """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import opbridge
print("warning:", *[str(w.message) for w in caught if w.category is RuntimeWarning])
try:
    opbridge.library_path()
except opbridge._library.UnsupportedPlatformError as err:
    print("library_path:", err)
from opbridge.cli import main
main(["ops"])
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    reason = ("opbridge's library runs on Linux on x86-64 and aarch64 CPUs and Windows on x86-64 CPUs; this machine "
              "is linux riscv64")
    assert lines[0] == f"warning: opbridge's operators cannot run here: {reason}"
    assert lines[1] == f"library_path: {reason}"
    rows = [line.split() for line in lines if "::" in line.split(" ", 1)[0]]
    assert len(rows) == len(list(manifest.identities())) and {row[2] for row in rows} == {"CPU"}
    assert lines[-1] == f"CUDA kernels on this machine: none: the library could not be loaded ({reason})"


def test_a_file_that_is_not_a_library_for_this_machine_is_named(tmp_path, monkeypatch, capsys):
    not_a_library = tmp_path / "libopbridge_ort.so"
    not_a_library.write_text("not an ELF file\n" * 64)  # shorter ones are "file too short"
    monkeypatch.setenv("OPBRIDGE_LIBRARY", str(not_a_library))
    with pytest.raises(OSError, match=f"^{re.escape(str(not_a_library))} cannot be loaded on this "
                                      f"{re.escape(platform.machine())} machine: .*invalid ELF header"):
        opbridge.library_info()
    from opbridge.cli import main

    assert main(["ops"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(f"CUDA kernels on this machine: none: the library could not be loaded ({not_a_library}")
    # create_session names the file in the same way, with ORT's reason.
    with pytest.raises(RuntimeError, match=f"^ONNX Runtime cannot load the opbridge library "
                                           f"{re.escape(str(not_a_library))}: .*invalid ELF header"):
        opbridge.create_session(one_node_model("opbridge::GridSample", {}, ["input", "grid"], ["output"]))


def test_ops_command_names_the_onnxruntime_and_its_providers(capsys):
    from opbridge.cli import main

    assert main(["ops"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-2]
    providers = ", ".join(p.removesuffix("ExecutionProvider") for p in ort.get_available_providers())
    expected = f"ONNX Runtime here: onnxruntime {ort.__version__} (execution providers: {providers})"
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        expected += "; no CUDA execution provider: for the GPU install onnxruntime-gpu instead of onnxruntime"
    assert line == expected


def test_library_is_never_unloaded():
    """ORT dlcloses a custom-op library when the last session that loaded it ends. The library is
    linked with -z nodelete, so it stays loaded and its one-time state (the op table, the domains,
    the statically linked C++ runtime's buffers) is built once per process, not once per load."""
    out = subprocess.run(["readelf", "-d", opbridge.library_path()], check=True, capture_output=True, text=True).stdout
    assert re.search(r"\(FLAGS_1\).*NODELETE", out), out


# Creates, runs and drops sessions one at a time (so ORT unloads and reloads a library that lets it)
# and prints the resident-memory growth per session, in bytes, for ORT alone (a Relu model) and
# for an opbridge model.
LEAK_SCRIPT = r"""
import gc, sys
import numpy as np, onnxruntime as ort
from onnx import helper, TensorProto
library, sessions = sys.argv[1], int(sys.argv[2])

def model(node, domain):
    names = list(node.input)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    opsets = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=8).SerializeToString()

relu = model(helper.make_node("Relu", ["x"], ["y"]), None)
roi_align = model(helper.make_node("RoiAlign", ["x", "r"], ["y"], domain="opbridge", output_height=2, output_width=2), "opbridge")
x = np.ones((1, 1, 4, 4), np.float32)
rois = np.array([[0, 0, 0, 3, 3]], np.float32)

def relu_session():
    ort.InferenceSession(relu, providers=["CPUExecutionProvider"]).run(None, {"x": x})

def opbridge_session():
    options = ort.SessionOptions()
    options.register_custom_ops_library(library)
    ort.InferenceSession(roi_align, options, providers=["CPUExecutionProvider"]).run(None, {"x": x, "r": rois})

def rss():
    import os
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

for make in (relu_session, opbridge_session):
    for _ in range(100):  # warm-up: allocator arenas, caches
        make()
    gc.collect()
    before = rss()
    for _ in range(sessions):
        make()
    gc.collect()
    print((rss() - before) / sessions)
"""


def test_sessions_do_not_leak_memory():
    """A session that loads the library, runs and ends leaves no more memory behind than a session
    of ORT alone (which itself keeps about 1 KiB per session). Before the library was marked
    nodelete, every session leaked about 52 KiB: each reload rebuilt the library's state."""
    sessions = 400
    out = subprocess.run([sys.executable, "-c", LEAK_SCRIPT, opbridge.library_path(), str(sessions)],
                         check=True, capture_output=True, text=True).stdout
    ort_alone, with_opbridge = (float(v) for v in out.split())
    extra = with_opbridge - ort_alone
    print(f"resident growth per session: ORT alone {ort_alone / 1024:.2f} KiB, "
          f"with opbridge {with_opbridge / 1024:.2f} KiB")
    assert extra < 8 * 1024, f"opbridge sessions keep {extra / 1024:.1f} KiB more each than ORT's own"


ALLOCATION_FAILURE_SCRIPT = r"""
import resource, sys
import numpy as np, onnxruntime as ort
from onnx import helper, TensorProto
library = sys.argv[1]
names = ["boxes", "scores", "iou_threshold", "score_threshold"]
node = helper.make_node("NmsMatch", names, ["matches"], domain="opbridge")
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names],
                          [helper.make_tensor_value_info("matches", TensorProto.INT64, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("opbridge", 1)], ir_version=8)
options = ort.SessionOptions()
options.register_custom_ops_library(library)
session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
# 2^26 (batch, class) problems of one box: about 1 GiB of scratch, over the limit set here.
feeds = {"boxes": np.zeros((1, 1, 4), np.float32), "scores": np.zeros((1, 2**26, 1), np.float32),
         "iou_threshold": np.full((1,), 0.5, np.float32), "score_threshold": np.full((1,), 0.1, np.float32)}
used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (used + 256 * 2**20, resource.RLIM_INFINITY))
try:
    session.run(None, feeds)
except Exception as e:
    print(str(e).splitlines()[0])
"""


def test_failed_scratch_allocation_is_an_error_not_an_abort():
    """ORT's allocator throws a C++ exception when memory runs out; thrown through the library's
    frames (it links its own C++ runtime) it aborted the process. Scratch memory now comes
    through the C API's status-returning AllocatorAlloc."""
    out = subprocess.run([sys.executable, "-c", ALLOCATION_FAILURE_SCRIPT, opbridge.library_path()],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "opbridge::NmsMatch: could not allocate" in out.stdout, out.stdout
