"""The benchmark harness: engines, interleaved timing, checks, peak memory and the report.
Workloads live with their op (opbridge/bench/<kernel>.py); see opbridge/bench/__init__.py."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from opbridge.tolerances import tolerance

SEED = 0
ATOL = 1e-4
MEMORY_REPEATS = 3
# "session.intra_op.allow_spinning" for both ORT engines. Both settings were measured on the 2-core
# VM at 2 threads: the differences were within its noise (about +-30%), so "0" is used: a spinning
# idle worker burns a core that the interleaved PyTorch runs (and other processes) need, which
# peer_baseline.md saw slow ORT down at 2 threads. See bench/README.md.
SPINNING = os.environ.get("OPBRIDGE_BENCH_SPINNING", "0")
# PyTorch's OpenMP runtime (libgomp) likewise gets the passive wait policy: in its default one,
# both ORT engines at 2 threads took 4.3-7.0 ms on attention.detr instead of 3.2-3.8, also with a
# 50 ms pause after every run; passive, they run as in a process without torch (3.0-3.4 ms).
# libgomp reads it when torch is imported, which no engine does before this module is loaded.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Default-domain opset of every model: RoiAlign-16 and GridSample-16 are current at 17.
ONNX_OPSET = 17
# The device the engines run on: "cpu", or "cuda" (`opbridge bench --device cuda`): ORT sessions with
# the CUDA execution provider, inputs and outputs bound in GPU memory (IOBinding), PyTorch on the GPU
# with its inputs moved there before timing; every timed run ends with a synchronization of the
# device (ORT's run already waits for its stream), so a run's time is the work's, not its launch's.
DEVICE = "cpu"
# A smoke run (`opbridge bench --smoke`): every engine of every case runs once, untimed, on inputs
# reduced by the workloads (sized() below) and the check column is kept. It proves the bench can run
# (tests/python/test_bench.py runs it for every workload); its times mean nothing, so none are taken.
SMOKE = False
# Where models exported by torch are kept for the memory children (which must not import torch).
CACHE = Path(os.environ.get("OPBRIDGE_BENCH_CACHE", Path(tempfile.gettempdir()) / "opbridge-bench"))

# --- engines and cases ----------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """One workload variant at one thread count: the engines to compare, each a zero-argument callable.

    ``opbridge`` is required; ``ort`` and ``torch`` are None where no competitor exists. Each callable
    returns its outputs (numpy arrays or tensors). ``reference`` is what opbridge is checked against
    (by default ``torch``); ``ort_note`` / ``torch_note`` label columns that are not like-for-like.
    """

    name: str
    opbridge: Callable[[], object]
    ort: Callable[[], object] | None = None
    torch: Callable[[], object] | None = None
    reference: Callable[[], object] | None = None
    ort_note: str = ""
    torch_note: str = ""
    check_rows: int | None = None  # compare only opbridge's first rows (a reference run on a subset)
    flops: float | None = None  # useful floating-point operations of one run (for GFLOP/s)
    sgemm: Callable[[], object] | None = None  # a plain sgemm of the same GEMM shape, timed alongside
    check_rtol: float = 0.0  # the check's tolerance
    check_atol: float = ATOL
    # On the GPU, time the opbridge model in an ORT CPU session too (cpu_engine); off for whole models,
    # whose CPU runs take seconds each (their ops' rows carry the comparison).
    cpu_column: bool = True


def _library_path() -> str:
    """The opbridge library: $OPBRIDGE_LIBRARY (set for memory children), else opbridge.library_path()."""
    if os.environ.get("OPBRIDGE_LIBRARY"):
        return os.environ["OPBRIDGE_LIBRARY"]
    from opbridge import library_path

    return library_path()


def _create_session(model, threads: int, device: str):
    """An ORT session on `device` for `model` with the opbridge library registered, as
    opbridge.create_session makes it, plus the spinning setting. Used for opbridge's node and the
    built-in node alike.

    It calls ORT directly so that a memory child never imports the opbridge package (and so torch,
    whose import alone is ~0.5 GB of RSS and would hide the op's own peak).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.register_custom_ops_library(_library_path())
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", SPINNING)
    options.log_severity_level = 3  # errors only (ORT warns on every RoiAlign max session)
    providers = ["CPUExecutionProvider"]
    if device == "cuda":
        from opbridge._library import CUDA_FULL_FLOAT32, preload_cuda_libraries  # (no memory children on the GPU)

        providers = [CUDA_FULL_FLOAT32, "CPUExecutionProvider"]  # float32, as PyTorch runs here (run())

        preload_cuda_libraries()
    return ort.InferenceSession(model.SerializeToString(), options, providers=providers)


def ort_engine(model, feeds: dict | list[dict], threads: int, device: str | None = None) -> Callable[[], list]:
    """A callable running the one-node `model` in ORT, on `device` (default: the bench's, DEVICE).
    The session is created on the first call (the warm-up), so that a memory child pays for its own
    session only. On the GPU the inputs are copied there once and the outputs stay there
    (IOBinding): runs time the session, not the copies. The callable keeps the model and feeds, so
    that a GPU run can time the same model on the CPU (cpu_engine). `feeds` may be a list: one run
    of the callable is then one session run per feed, in turn (a single-image model on each image of
    a batch), and returns the last one's outputs."""
    session = bindings = None
    runs = feeds if isinstance(feeds, list) else [feeds]

    def run():
        nonlocal session, bindings
        where = device or DEVICE
        if session is None:
            session = _create_session(model, threads, where)
            if where == "cuda":
                import onnxruntime as ort

                bindings = []
                for one in runs:
                    binding = session.io_binding()
                    for name, value in one.items():
                        binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(value, "cuda", 0))
                    for output in session.get_outputs():
                        binding.bind_output(output.name, "cuda")
                    bindings.append(binding)
        if bindings is None:
            for one in runs:
                outputs = session.run(None, one)
            return outputs
        for binding in bindings:
            session.run_with_iobinding(binding)
        return bindings[-1].get_outputs()

    run.model, run.feeds = model, feeds
    return run


def cpu_engine(engine: Callable) -> Callable | None:
    """For a GPU run: `engine`'s model (an ort_engine's) in an ORT CPU session with every core, the
    opbridge CPU kernels' time beside their CUDA kernels'; None for other engines."""
    model = getattr(engine, "model", None)
    return None if model is None else ort_engine(model, engine.feeds, os.cpu_count() or 1, device="cpu")


def as_tensor(x):
    """A workload's array as a torch tensor on the bench device. torch_engine hands its engine function
    tensors already there (converted before timing), which this passes through."""
    import torch

    return x if isinstance(x, torch.Tensor) else torch.from_numpy(x).to(DEVICE)


def torch_engine(fn, *args) -> Callable[[], object]:
    """A callable running `fn(*args)` under torch.inference_mode(), its numpy arguments converted to
    tensors on the bench device once, on the first call. torch is imported on the first call, not when
    the case is built (memory children build cases without importing torch)."""
    converted = None

    def run():
        nonlocal converted
        import torch

        if converted is None:
            converted = [as_tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        with torch.inference_mode():
            return fn(*converted)

    return run


def sized(full, smoke):
    """A workload's size: `full`, or in a smoke run (SMOKE) the reduced `smoke`."""
    return smoke if SMOKE else full


def one_node_model(op_type: str, inputs: list[tuple], outputs: list[tuple], domain: str = "", opset: int | None = None,
                    **attrs):
    """A one-node ONNX model. `inputs` / `outputs` are (name, onnx element type, shape) tuples."""
    import onnx
    from onnx import helper

    node = helper.make_node(op_type, [n for n, _, _ in inputs], [n for n, _, _ in outputs], domain=domain, **attrs)
    graph = helper.make_graph(
        [node], f"bench_{op_type}",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],  # "" marks an absent optional input
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
    )
    opsets = [helper.make_opsetid("", opset or ONNX_OPSET)]
    if domain:
        opsets.append(helper.make_opsetid(domain, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8  # ORT 1.30 does not accept the IR version onnx 1.23 writes by default
    onnx.checker.check_model(model)
    return model


def source_key() -> str:
    """A digest of opbridge's Python sources, so that a cached export is redone after the export
    code changes."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha1()
    for source in sorted(package.rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def export_once(name: str, export) -> Path:
    """CACHE/<name>_<source key>.onnx, made by export(path) unless it is there already (for a
    memory child, or a second thread count). The process that builds the cases first exports. A
    smoke run's exports (of reduced inputs) are kept apart."""
    path = CACHE / f"{name}{'_smoke' if SMOKE else ''}_{source_key()}.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        export(tmp)
        tmp.replace(path)
    return path


F32 = 1  # onnx.TensorProto.FLOAT
F16 = 10  # onnx.TensorProto.FLOAT16
I64 = 7  # onnx.TensorProto.INT64
I32 = 6  # onnx.TensorProto.INT32


def data_rng(salt: int) -> np.random.Generator:
    """The generator of a workload's data: the fixed seed and a salt of the workload's own."""
    return np.random.default_rng([SEED, salt])


# --- measuring --------------------------------------------------------------------------------------


def _numpy_list(outputs) -> list[np.ndarray]:
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    # torch tensors (on any device) come back to the host; ORT's OrtValues copy themselves there.
    return [o.cpu().numpy() if hasattr(o, "cpu") else o.numpy() if hasattr(o, "numpy") else np.asarray(o)
            for o in outputs]


def _check(case: Case) -> str:
    """Compares opbridge's outputs with the reference (untimed); 'ok', 'MISMATCH ...' or '-'."""
    reference = case.reference or case.torch
    if reference is None:
        return "-"
    expected, actual = _numpy_list(reference()), _numpy_list(case.opbridge())
    rtol, atol = case.check_rtol, case.check_atol
    if DEVICE == "cuda":
        gpu = tolerance("gpu_bench", "float32")
        rtol, atol = max(rtol, gpu.rtol), max(atol, gpu.atol)
    rows = case.check_rows
    if rows is not None:
        actual = [a[:rows] for a in actual]
    worst = 0.0
    for e, a in zip(expected, actual):
        if e.shape != a.shape:
            return f"MISMATCH shape {list(a.shape)} vs {list(e.shape)}"
        if e.dtype.kind in "iu":
            if not np.array_equal(e, a):
                return f"MISMATCH {int((e != a).sum())} ints differ"
            continue
        if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
            return f"MISMATCH max|d|={float(np.nanmax(np.abs(a - e))):.2g}"
        worst = max(worst, float(np.nanmax(np.abs(a - e))) if a.size else 0.0)
    return f"ok ({worst:.0e})" if rows is None else f"ok ({worst:.0e}, {rows} rois vs reference)"


def _time_interleaved(engines: dict[str, Callable], runs: int) -> dict[str, float]:
    """Median ms per engine; one warm-up each, then `runs` rounds running every engine once (rotating order).
    On the GPU every run ends with a synchronization of the device (see DEVICE)."""
    synchronize = lambda: None  # noqa: E731
    if DEVICE == "cuda":
        import torch

        synchronize = torch.cuda.synchronize
    names = list(engines)
    for name in names:
        engines[name]()
    synchronize()
    times = {name: [] for name in names}
    for rep in range(runs):
        for k in range(len(names)):
            name = names[(rep + k) % len(names)]
            start = time.perf_counter()
            engines[name]()
            synchronize()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(t) for name, t in times.items()}


def _select(registry: dict, patterns: list[str]) -> list[str]:
    """Workload ids matching any of `patterns` (an id or a prefix of one); all when empty."""
    if not patterns:
        return list(registry)
    chosen = [w for w in registry if any(w == p or w.startswith(p) for p in patterns)]
    unknown = [p for p in patterns if not any(w.startswith(p) for w in registry)]
    if unknown:
        raise ValueError(f"unknown workload(s) {unknown}; known: {', '.join(registry)}")
    return chosen


def _fmt_ms(ms: float | None) -> str:
    return "-" if ms is None else f"{ms:.2f}"


def _fmt_ratio(other: float | None, ours: float) -> str:
    return "-" if other is None else f"{other / ours:.2f}x"


# --- peak memory (child processes) -------------------------------------------------------------------


def _peak_rss_kb() -> int:
    """This process's peak RSS in KB: VmHWM from /proc/self/status.

    Not ru_maxrss: Linux carries ru_maxrss across fork and exec, so a child started from this
    (torch-sized) process would report the parent's RSS. VmHWM belongs to the new address space.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def memory_child(registry: dict, workload: str, engine: str, repeats: int) -> None:
    """Runs one engine of one workload `repeats` times at 1 thread; prints baseline and peak RSS (KB) as JSON
    (null when the workload has no such engine).

    The child imports numpy, onnx and onnxruntime only (not torch: see _create_session). The
    baseline is the high-water mark after imports and input generation, before the first session.
    """
    engines = [getattr(case, engine) for case in registry[workload](1)]
    engines = [fn for fn in engines if fn is not None]
    baseline = _peak_rss_kb()
    for fn in engines:
        for _ in range(repeats):
            fn()
    peak = _peak_rss_kb()
    result = {"baseline_kb": baseline, "peak_kb": peak, "torch_imported": "torch" in sys.modules}
    print(json.dumps(result if engines else None))


def _measure_memory(workload: str, engine: str) -> dict | None:
    """Peak RSS of a fresh process running only `engine` ("opbridge" or "ort") on `workload`.

    The child imports opbridge.bench without running opbridge/__init__.py (which imports torch):
    it puts an empty package object named opbridge, whose path is this package's parent, in
    sys.modules first. It finds the library through $OPBRIDGE_LIBRARY.
    """
    package_dir = str(Path(__file__).resolve().parents[1])
    code = (
        "import sys, types; package = types.ModuleType('opbridge'); "
        f"package.__path__ = [{package_dir!r}]; sys.modules['opbridge'] = package; "
        "from opbridge.bench import WORKLOADS, harness; "
        f"harness.memory_child(WORKLOADS, {workload!r}, {engine!r}, {MEMORY_REPEATS})"
    )
    env = dict(os.environ, OPBRIDGE_LIBRARY=_library_path())
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(f"  memory child {workload}/{engine} failed: {proc.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt_mem(m: dict | None) -> str:
    if m is None:
        return "-"
    text = f"{m['peak_kb'] / 1024:.0f} MB (+{(m['peak_kb'] - m['baseline_kb']) / 1024:.0f})"
    return text + (" [torch imported]" if m["torch_imported"] else "")


# --- entry point -------------------------------------------------------------------------------------


def _cuda_problem(onnxruntime, torch) -> str:
    """Why the engines cannot run on the GPU here, or ""."""
    from opbridge import library_info

    if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
        return f"onnxruntime {onnxruntime.__version__} has no CUDA execution provider: install onnxruntime-gpu"
    if not torch.cuda.is_available():
        return f"PyTorch {torch.__version__} sees no CUDA device"
    if not library_info()["cuda"]:
        return "the library was built without CUDA kernels: build it with ./run.sh build"
    return ""


@dataclasses.dataclass
class SmokeRow:
    """What a smoke run found for one case: the check column, and the engines that failed."""

    case: str
    check: str  # _check's verdict ("ok (...)", "MISMATCH ...", "-"), or "ERROR ..." when its engines raised
    errors: list[str]  # "<engine>: <exception>" for every other engine that raised

    @property
    def passed(self) -> bool:
        return (self.check.startswith("ok") or self.check == "-") and not self.errors


def _failure(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else ''}"


def smoke(registry: dict, workload: str) -> list[SmokeRow]:
    """Runs every engine of every case of `workload` once, at 1 thread, on the inputs it builds (reduced
    when SMOKE is set), untimed; the check runs as in a timed run."""
    rows = []
    for case in registry[workload](1):
        try:
            check = _check(case)
        except Exception as err:  # noqa: BLE001 - reported as the row's verdict
            check = f"ERROR {_failure(err)}"
        errors = []
        # torch already ran in the check unless a separate reference did.
        engines = (("ort", case.ort), ("torch", case.torch if case.reference is not None else None),
                   ("sgemm", case.sgemm))
        for name, engine in engines:
            if engine is None:
                continue
            try:
                _numpy_list(engine())  # on the GPU, the copy to the host waits for the work
            except Exception as err:  # noqa: BLE001 - reported
                errors.append(f"{name}: {_failure(err)}")
        rows.append(SmokeRow(case.name, check, errors))
    return rows


def _run_smoke(registry: dict, selected: list[str]) -> int:
    """The smoke run of `selected` (see SMOKE): a line per case; 1 when a check or an engine failed."""
    failed = 0
    for workload in selected:
        for row in smoke(registry, workload):
            failed += not row.passed
            print(f"{row.case:<56}  {row.check}" + "".join(f"; {e}" for e in row.errors), flush=True)
    print(f"opbridge bench --smoke: {'every case ran and checked' if not failed else f'{failed} case(s) FAILED'}")
    return 1 if failed else 0


def run(registry: dict, workloads: list[str], runs: int, threads: list[int], memory: bool | None = None,
        device: str = "cpu", smoke_run: bool = False) -> int:
    """Runs the selected workloads of `registry` at every thread count and prints the timing table
    and peak memory.

    `workloads`: ids or prefixes (empty: all). `memory`: measure peak RSS in child processes
    (default: on, unless OPBRIDGE_BENCH_MEMORY=0; never on the GPU or in a smoke run). `device`:
    "cpu" or "cuda" (see DEVICE). `smoke_run`: every engine once on reduced inputs, untimed (see SMOKE).
    """
    import onnxruntime
    import torch

    if device == "cuda":
        problem = _cuda_problem(onnxruntime, torch)
        if problem:
            print(f"opbridge bench --device cuda: {problem}", file=sys.stderr)
            return 2
        from opbridge._library import full_float32_on_cuda

        # Both sides in float32 (TF32 off), as the ORT sessions (_create_session): like-for-like
        # times, and checks against PyTorch that are not TF32's rounding.
        with full_float32_on_cuda():
            return _run(registry, workloads, runs, threads, False, device, smoke_run)
    return _run(registry, workloads, runs, threads, memory, device, smoke_run)


def _run(registry: dict, workloads: list[str], runs: int, threads: list[int], memory: bool | None, device: str,
         smoke_run: bool) -> int:
    """run() once the device is settled."""
    global DEVICE, SMOKE
    import onnxruntime
    import torch

    DEVICE = device
    if memory is None:
        memory = os.environ.get("OPBRIDGE_BENCH_MEMORY", "1") != "0"
    try:
        selected = _select(registry, workloads)
    except ValueError as err:
        print(f"opbridge bench: {err}", file=sys.stderr)
        return 2
    if smoke_run:
        SMOKE = True
        print(f"opbridge bench --smoke: onnxruntime {onnxruntime.__version__}, torch {torch.__version__}, device "
              f"{device}: every engine once on reduced inputs, untimed; the check column as in a timed run")
        try:
            return _run_smoke(registry, selected)
        finally:
            SMOKE = False
    print(
        f"opbridge bench: onnxruntime {onnxruntime.__version__}, torch {torch.__version__}, "
        f"{os.cpu_count()} CPUs; median of {runs} interleaved runs after warm-up; seed {SEED}; "
        f"ORT session.intra_op.allow_spinning={SPINNING} (both ORT engines); "
        f"PyTorch OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}"
        + (f"; device: {torch.cuda.get_device_name()} (ORT's CUDA execution provider, PyTorch on CUDA, "
           "inputs and outputs in GPU memory, each run synchronized, float32 math: TF32 off)"
           if device == "cuda" else "")
    )
    # On the GPU a column more: the same opbridge model in an ORT CPU session with every core (the
    # CPU kernels are a competitor too: a GPU kernel must beat them).
    on_gpu = device == "cuda"
    header = (f"{'workload':<40}{'thr':>4}{'opbridge ms':>13}{'ORT ms':>10}{'torch ms':>10}"
              + (f"{'opb CPU ms':>12}" if on_gpu else "")
              + f"{'ORT/opb':>9}{'torch/opb':>10}" + (f"{'CPU/opb':>9}" if on_gpu else "") + "  check")
    print(header)
    print("-" * len(header))
    notes, slower, comparable = [], [], 0
    torch_threads = torch.get_num_threads()
    failed = []
    for workload in selected:
        for t in threads:
            torch.set_num_threads(t)
            try:
                for case in registry[workload](t):
                    check = _check(case)
                    engines = {"opbridge": case.opbridge}
                    engines.update({k: v for k, v in (("ort", case.ort), ("torch", case.torch), ("sgemm", case.sgemm),
                                                      ("cpu", cpu_engine(case.opbridge) if on_gpu and case.cpu_column
                                                             else None))
                                    if v is not None})
                    ms = _time_interleaved(engines, runs)
                    ours, ort_ms, torch_ms, cpu_ms = ms["opbridge"], ms.get("ort"), ms.get("torch"), ms.get("cpu")
                    mark_ort = "*" if case.ort_note else ""
                    mark_torch = "+" if case.torch_note else ""
                    print(
                        f"{case.name:<40}{t:>4}{ours:>13.2f}{_fmt_ms(ort_ms) + mark_ort:>10}"
                        f"{_fmt_ms(torch_ms) + mark_torch:>10}" + (f"{_fmt_ms(cpu_ms):>12}" if on_gpu else "")
                        + f"{_fmt_ratio(ort_ms, ours) + mark_ort:>9}{_fmt_ratio(torch_ms, ours) + mark_torch:>10}"
                        + (f"{_fmt_ratio(cpu_ms, ours):>9}" if on_gpu else "") + f"  {check}",
                        flush=True,
                    )
                    if case.flops:
                        rates = ", ".join(f"{k} {case.flops / ms[k] / 1e6:.1f}"
                                          for k in ("opbridge", "ort", "torch", "sgemm") if k in ms)
                        sgemm_share = (f"; opbridge at {100 * ms['sgemm'] / ours:.0f}% of the plain sgemm"
                                       if "sgemm" in ms else "")
                        print(f"{'':<4}GFLOP/s: {rates} (sgemm: torch.mm of the same GEMM shape){sgemm_share}",
                              flush=True)
                    for note in (case.ort_note, case.torch_note):
                        if note and note not in notes:
                            notes.append(note)
                    # Like-for-like competitors only (not different semantics, not our own eager loop).
                    rivals = [m for m, n in ((ort_ms, case.ort_note), (torch_ms, case.torch_note), (cpu_ms, ""))
                              if m is not None and not n]
                    if rivals:
                        comparable += 1
                        if min(rivals) < ours:
                            slower.append(f"{case.name} @{t}thr ({min(rivals) / ours:.2f}x)")
            except Exception as err:  # noqa: BLE001 - reported; the other workloads still run
                failed.append(f"{workload} @{t}thr")
                print(f"{workload:<40}{t:>4}  ERROR {_failure(err)}", flush=True)
    torch.set_num_threads(torch_threads)
    for note in notes:
        print(("* " if note.startswith("ORT") else "+ ") + note)
    if comparable == 0:
        print("opbridge fastest on every row: n/a (no like-for-like competitor in these rows)")
    elif slower:
        print(f"opbridge fastest on every row: NO - slower on {len(slower)} of {comparable} comparable rows: "
              + "; ".join(slower) + " (noise on this VM is about +-30%)")
    else:
        print(f"opbridge fastest on every row: YES ({comparable} comparable rows; rows without a like-for-like "
              "competitor excluded)")

    if failed:
        print(f"FAILED: {len(failed)} workload run(s) raised: {', '.join(failed)}")
    if memory:
        print(f"\npeak RSS, one child process per workload and engine ({MEMORY_REPEATS} runs of every variant, "
              "1 thread, no torch;\n  in brackets: growth over the same process before its first session)")
        for workload in selected:
            ours, builtin = _measure_memory(workload, "opbridge"), _measure_memory(workload, "ort")
            print(f"  {workload:<20} opbridge {_fmt_mem(ours)} / ORT built-in {_fmt_mem(builtin)}", flush=True)
    return 1 if failed else 0

