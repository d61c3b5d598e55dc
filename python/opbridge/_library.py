"""Finding the opbridge library (libopbridge_ort.so, opbridge_ort.dll on Windows) and creating ORT
sessions that have it registered."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import struct
import sys
import warnings
from pathlib import Path

from opbridge._optional import require_onnxruntime

# The library's file: opbridge_ort.dll on Windows (CMakeLists.txt names it so), else libopbridge_ort.so.
LIBRARY_NAME = "opbridge_ort.dll" if sys.platform == "win32" else "libopbridge_ort.so"
_PACKAGE_DIR = Path(__file__).resolve().parent

# What the library's x86-64 build needs of the CPU: x86-64-v2 (CMakeLists.txt's -march), as
# /proc/cpuinfo names the features.
_X86_64_V2_FLAGS = ("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3")
# The same as Windows' IsProcessorFeaturePresent asks for them (winnt.h's PF_ numbers; Windows has
# no number for POPCNT and LAHF, which every CPU with SSE4.2 has).
_X86_64_V2_WINDOWS_FEATURES = {"cx16": 14, "pni": 13, "ssse3": 36, "sse4_1": 37, "sse4_2": 38}

# Where the library runs: (sys.platform prefix, platform.machine() values, the platform's words).
_PLATFORMS = (("linux", ("x86_64", "aarch64"), "Linux on x86-64 and aarch64 CPUs"),
              ("win32", ("AMD64", "x86_64"), "Windows on x86-64 CPUs"))


class UnsupportedPlatformError(OSError):
    """The library cannot run on this machine (its operating system, architecture or CPU)."""


def _missing_x86_64_v2_features(system: str, cpuinfo: str) -> tuple[list[str], str]:
    """The x86-64-v2 features this CPU lacks, and where that was read; ([], "") when unknown."""
    if system == "win32":
        try:
            import ctypes

            present = ctypes.windll.kernel32.IsProcessorFeaturePresent
        except (ImportError, AttributeError, OSError):
            return [], ""
        return [name for name, number in _X86_64_V2_WINDOWS_FEATURES.items() if not present(number)], \
            "IsProcessorFeaturePresent"
    flags = set()
    with contextlib.suppress(OSError), open(cpuinfo) as lines:
        for line in lines:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    return ([f for f in _X86_64_V2_FLAGS if f not in flags] if flags else []), cpuinfo


@functools.cache
def platform_blocker(system: str | None = None, machine: str | None = None, cpuinfo: str = "/proc/cpuinfo",
                     pointer_bits: int | None = None) -> str:
    """Why opbridge's library cannot run on this machine, in one sentence, or "" where it can: it is
    built for Linux on x86-64 CPUs of level x86-64-v2 or newer (SSE4.2: Intel since 2008, AMD since
    2011) and on aarch64 CPUs, and for Windows on x86-64 CPUs of the same level, in a 64-bit Python.
    Loading it elsewhere would fail, or stop the process on an instruction the CPU lacks, so it is
    checked before the library is loaded. (The arguments, for tests: sys.platform,
    platform.machine(), the file of the CPU's features on Linux, and the Python's pointer size.)"""
    system = system or sys.platform
    machine = machine or platform.machine()
    pointer_bits = pointer_bits or struct.calcsize("P") * 8
    supported = [p for p in _PLATFORMS if system.startswith(p[0])]
    if not supported or machine not in supported[0][1]:
        where = " and ".join(words for _, _, words in _PLATFORMS)
        return (f"opbridge's library runs on {where}; this machine is {system} "
                f"{machine or 'of unknown architecture'}")
    if pointer_bits != 64:
        return (f"this Python is a {pointer_bits}-bit program and cannot load opbridge's 64-bit library: "
                "use a 64-bit Python")
    if machine in ("x86_64", "AMD64"):
        missing, source = _missing_x86_64_v2_features(system, cpuinfo)
        if missing:
            return (f"this CPU lacks {', '.join(missing)} ({source}): opbridge's library needs an x86-64-v2 "
                    "CPU (SSE4.2 and POPCNT: Intel since 2008, AMD since 2011)")
    return ""


def library_path() -> str:
    """Path of the opbridge custom-op library for ONNX Runtime.

    Looked up in this order: the OPBRIDGE_LIBRARY environment variable, the copy installed in the
    package (``opbridge/lib/``), and the development build (``build/`` at the repository root).
    Raises UnsupportedPlatformError where the library cannot run (platform_blocker()).
    """
    if blocker := platform_blocker():
        raise UnsupportedPlatformError(blocker)
    candidates = []
    if os.environ.get("OPBRIDGE_LIBRARY"):
        candidates.append(Path(os.environ["OPBRIDGE_LIBRARY"]))
    candidates.append(_PACKAGE_DIR / "lib" / LIBRARY_NAME)
    candidates.append(_PACKAGE_DIR.parent.parent / "build" / LIBRARY_NAME)
    for path in candidates:
        if path.is_file():
            return str(path)
    # A source tree builds its library; an installed package lost its copy (an antivirus's quarantine, a
    # partial install) and is reinstalled.
    advice = ("Build it with ./run.sh build, or set OPBRIDGE_LIBRARY." if (_PACKAGE_DIR.parent.parent / "run.sh").is_file()
              else "Reinstall the package (pip install --force-reinstall opbridge), or set OPBRIDGE_LIBRARY.")
    raise FileNotFoundError(f"{LIBRARY_NAME} not found (looked in: {', '.join(str(p) for p in candidates)}). {advice}")


def register_library(options, path: str | None = None) -> None:
    """Registers the opbridge library (library_path(), or `path`) into ORT SessionOptions; a library ORT
    cannot load (not a library for this machine, or an onnxruntime older than 1.21, which the library
    refuses) is a RuntimeError naming the file, with ORT's reason."""
    path = path or library_path()
    try:
        options.register_custom_ops_library(path)
    except Exception as error:  # ORT's own exception types
        raise RuntimeError(f"ONNX Runtime cannot load the opbridge library {path}: {error}") from error


def library_info() -> dict:
    """What the library build holds and registers here (its OpbridgeLibraryInfo): {"version": ...,
    "cuda": whether it has CUDA kernels, with CUDA "cuda_architectures": the GPU architectures they
    are compiled for, "cuda_twins": whether this machine registers them, and if not
    "cuda_twins_blocker": why}. A CUDA build registers a CUDA twin of each identity that has a CUDA
    kernel (manifest providers, `opbridge ops`) for ORT's CUDA execution provider where the
    NVIDIA driver can run its CUDA runtime (one for the same CUDA major version or newer); elsewhere
    every node runs on the CPU, as with a CPU-only build. It initializes nothing of CUDA until a
    session runs such a node on a GPU."""
    import ctypes

    path = library_path()
    try:
        library = ctypes.CDLL(path)
    except OSError as err:  # e.g. a library built for another architecture: "wrong ELF class"
        raise OSError(f"{path} cannot be loaded on this {platform.machine()} machine: {err}") from err
    try:
        info = library.OpbridgeLibraryInfo
    except AttributeError:  # a library from before the function existed: a CPU-only build
        return {"version": "unknown", "cuda": False, "cuda_twins": False,
                "cuda_twins_blocker": "the library was built without CUDA kernels"}
    info.restype = ctypes.c_char_p
    return json.loads(info().decode())


def cuda_twins_blocker() -> str:
    """Why this library registers no CUDA kernels on this machine, or "" when it does."""
    return library_info().get("cuda_twins_blocker", "")


CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
# ORT's CUDA provider runs float32 convolutions and GEMMs in TF32 by default (its use_tf32 option),
# which rounds their inputs to 10 mantissa bits: a detector's boxes then move by tenths of a pixel
# and its detections near a score threshold come and go (seen on an H100: CPU and CUDA sessions of
# one model differed by 0.3 px, and by a detection). Where outputs are compared (verify, the GPU
# tests, the GPU bench's checks) both sides compute in float32: this provider, and PyTorch inside
# full_float32_on_cuda().
CUDA_FULL_FLOAT32 = (CUDA, {"use_tf32": "0"})


@contextlib.contextmanager
def full_float32_on_cuda():
    """PyTorch's CUDA convolutions and matrix products in float32 (no TF32) inside the block; the
    previous settings after it."""
    import torch

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def _provider_name(provider) -> str:
    return provider[0] if isinstance(provider, tuple) else provider


@functools.cache
def preload_cuda_libraries() -> None:
    """Loads the CUDA and cuDNN libraries of the nvidia wheels (onnxruntime-gpu >= 1.21), once per process."""
    import onnxruntime as ort

    if hasattr(ort, "preload_dlls"):
        ort.preload_dlls()


def _check_providers(providers) -> list:
    """The providers as ORT takes them (names, or (name, options) pairs), with the CPU provider
    last if missing (every opbridge op has a CPU kernel), after checking that they can work here."""
    import onnxruntime as ort

    providers = list(providers)
    names = [_provider_name(p) for p in providers]
    if CUDA in names:
        if CUDA not in ort.get_available_providers():
            raise RuntimeError(
                f"{CUDA} was asked for, but this onnxruntime ({ort.__version__}) has no CUDA execution provider: "
                "install onnxruntime-gpu instead of onnxruntime (pip install onnxruntime-gpu)")
        preload_cuda_libraries()
        blocker = cuda_twins_blocker()
        if blocker:
            advice = ("Build it with ./run.sh build (or -DOPBRIDGE_CUDA=ON) for the CUDA kernels."
                      if not library_info()["cuda"] else "")
            warnings.warn(f"{library_path()} registers no CUDA kernels here ({blocker}): every opbridge node of the "
                          f"model runs on the CPU, with copies to and from the GPU around it. {advice}".rstrip(),
                          stacklevel=3)
    if CPU not in names:
        providers.append(CPU)
    return providers


def session_options(intra_op_threads: int | None = None):
    """ORT SessionOptions with the opbridge library registered (one library serves the CPU and the
    CUDA execution providers: the providers are chosen when the session is created)."""
    require_onnxruntime("opbridge.session_options")
    import onnxruntime as ort

    options = ort.SessionOptions()
    register_library(options)
    if intra_op_threads is not None:
        options.intra_op_num_threads = intra_op_threads
    return options


def create_session(model, intra_op_threads: int | None = None, options=None, providers=(CPU,)):
    """An ORT InferenceSession for `model` (a path, bytes or onnx.ModelProto) with opbridge's ops.

    providers: ORT's execution providers in order of preference, as onnxruntime takes them (names or
    (name, options) pairs); the CPU provider is added last if missing. The default runs on the CPU.
    With ("CUDAExecutionProvider",) (onnxruntime-gpu and a CUDA build of the library) every opbridge
    node with a CUDA kernel runs on the GPU, the others on the CPU. Pass `options` to start from
    your own SessionOptions (the library is registered into it).
    """
    require_onnxruntime("opbridge.create_session")
    import onnxruntime as ort

    providers = _check_providers(providers)
    if options is None:
        options = session_options(intra_op_threads)
    else:
        register_library(options)
        if intra_op_threads is not None:
            options.intra_op_num_threads = intra_op_threads
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    elif isinstance(model, Path):
        model = str(model)
    return ort.InferenceSession(model, options, providers=providers)
