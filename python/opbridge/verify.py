"""Export a model, run it in ONNX Runtime with opbridge's ops, and compare with eager PyTorch."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch
import torch.utils._pytree as pytree

from opbridge._library import CUDA_FULL_FLOAT32, _check_providers, create_session, full_float32_on_cuda
from opbridge.detection import BatchedDetector, is_detector
from opbridge.export import ExportInputs, custom_nodes, export, for_export
from opbridge.tolerances import tolerance


@dataclasses.dataclass
class OutputReport:
    name: str
    dtype: str
    eager_shape: tuple
    ort_shape: tuple
    max_abs_error: float
    max_rel_error: float
    rtol: float
    atol: float
    ok: bool


@dataclasses.dataclass
class SizeReport:
    """The exported model run at another size of one dynamic axis, against eager PyTorch there."""

    axis: str  # the dim's name in dynamic_axes, e.g. "num_rois"
    places: list[str]  # the inputs and dims it names, e.g. ["rois dim 0"]
    example_size: int
    size: int
    result: str  # "ok", "MISMATCH", "ORT error", "eager error", "no inputs", "skipped"
    detail: str = ""  # the error, the outputs that differ, or why the size was skipped
    outputs: list[OutputReport] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        # "skipped": size 0 where eager PyTorch itself raises, or no sizes asked for (dynamic_sizes).
        return self.result in ("ok", "skipped")

    @property
    def max_abs_error(self) -> float:
        return max((o.max_abs_error for o in self.outputs), default=float("nan"))


@dataclasses.dataclass
class VerifyReport:
    exporter: str
    custom_ops: list[str]
    outputs: list[OutputReport]
    ort_ms: float = float("nan")
    eager_ms: float = float("nan")
    sizes: list[SizeReport] = dataclasses.field(default_factory=list)
    device: str = "cpu"
    placement: object = None  # device "cuda": opbridge.placement.CudaPlacement of the session
    model: object = None  # the exported onnx.ModelProto that was verified (save it with onnx.save)

    @property
    def ok(self) -> bool:
        on_gpu = self.placement is None or self.placement.all_opbridge_nodes_on_gpu
        return all(o.ok for o in self.outputs) and all(s.ok for s in self.sizes) and on_gpu

    def __str__(self) -> str:
        lines = [f"exporter: {self.exporter}", f"custom ops: {', '.join(sorted(set(self.custom_ops))) or 'none'}"]
        if self.placement is not None:
            p = self.placement
            where = ("every opbridge node on the GPU" if p.all_opbridge_nodes_on_gpu else
                     f"opbridge nodes next to CPU-GPU copies: {', '.join(p.opbridge_nodes_next_to_copies)}")
            lines.append(f"device: cuda (ORT's CUDA execution provider, PyTorch on CUDA, both in float32: TF32 off); "
                         f"{p.memcpy_nodes} copies between the CPU and the GPU, {where}")
        width = max([16] + [len(o.name) + 2 for o in self.outputs])
        lines.append(f"{'output':<{width}}{'dtype':<9}{'shape (ORT)':<18}{'max abs err':>12}{'max rel err':>12}  "
                     f"{'tolerance':<24}result")
        for o in self.outputs:
            shape = "x".join(str(d) for d in o.ort_shape) or "scalar"
            if o.eager_shape != o.ort_shape:
                shape += f" (eager {'x'.join(str(d) for d in o.eager_shape)})"
            tol = "exact" if o.atol == 0 and o.rtol == 0 else f"rtol {o.rtol:g} atol {o.atol:g}"
            lines.append(f"{o.name:<{width}}{o.dtype:<9}{shape:<18}{o.max_abs_error:>12.3g}{o.max_rel_error:>12.3g}  "
                         f"{tol:<24}{'ok' if o.ok else 'MISMATCH'}")
        if self.sizes:
            lines.append("dynamic axes at other sizes (the same exported model):")
            axis_width = max([len("axis")] + [len(s.axis) for s in self.sizes]) + 2
            places_width = max([len("inputs")] + [len(", ".join(s.places)) for s in self.sizes]) + 2
            lines.append(f"{'axis':<{axis_width}}{'inputs':<{places_width}}{'size':<14}{'max abs err':>12}  result")
            for s in self.sizes:
                size = f"{s.example_size} -> {s.size}"
                error = f"{s.max_abs_error:>12.3g}" if s.outputs else f"{'-':>12}"
                result = s.result + (f": {_one_line(s.detail)}" if s.detail else "")
                lines.append(f"{s.axis:<{axis_width}}{', '.join(s.places):<{places_width}}{size:<14}{error}  {result}")
        if not np.isnan(self.ort_ms):
            lines.append(f"time per run: ORT {self.ort_ms:.2f} ms, PyTorch eager {self.eager_ms:.2f} ms")
        lines.append("verdict: " + ("all outputs match" if self.ok else "MISMATCH"))
        return "\n".join(lines)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def verify(
    model: torch.nn.Module,
    args: tuple,
    *,
    exporter: str = "dynamo",
    dynamic_axes: dict | None = None,
    output_names: list[str] | None = None,
    intra_op_threads: int | None = None,
    timing_runs: int = 0,
    print_report: bool = True,
    more_args: list[tuple] = (),
    comparison: str | None = None,
    dynamic_sizes: dict[str, list[int]] | None = None,
    device: str = "cpu",
) -> VerifyReport:
    """Exports `model(*args)`, runs it in ORT with opbridge's library and compares every output
    with eager PyTorch, within opbridge's tolerance table ("model" entries).

    `args` and the model's outputs may be tensors or any nesting of lists, tuples and dicts of
    them (a detector's list of images in, a list of dicts out): both are flattened as PyTorch
    flattens them, and each output is reported under its path in the structure, e.g.
    ``[0]['boxes']``.

    more_args: further example inputs (of the same structure) to run the exported model on and
    compare, e.g. an image where a detector finds nothing, or sizes of a dynamic axis other than
    the exported one; their outputs are reported with the prefix ``args[k]``.

    dynamic_axes: as for opbridge.export. Each dynamic axis (by name: an axis named in several
    inputs changes in all of them together, other axes unchanged) is also checked at other sizes:
    the same exported model runs on inputs derived from `args` with the axis at another size, and
    is compared with eager PyTorch on the same inputs, so that an export that baked the example's
    size into the graph fails. Each (axis, size) is a row of report.sizes. The sizes, by
    default: one other size, the example's size n minus its largest power-of-two factor up to 32
    (n plus it when that leaves less than 2: 6 -> 4, 7 -> 6, 256 -> 224, 1 -> 2), which keeps the
    divisibility an image size may need for a network's strides; and 0. A size 0 that eager
    PyTorch itself raises on is reported as skipped; anything else that fails (ORT raising, output
    shapes or values differing, eager PyTorch raising at a non-zero size) fails the verification.
    Derived inputs take the first entries along the axis, and for a larger size add entries drawn
    at random (fixed seed) from the example's, the same ones in every input naming the axis: rows
    stay real rows, so boxes stay boxes and RoIs keep valid batch indices.

    dynamic_sizes: the sizes to check per axis name, replacing the default, e.g.
    {"height": [192, 0]}; an empty list checks none (the report says so).

    comparison: the tolerance table entries to compare with: "model", or "detector" for detection
    models, whose box coordinates (in pixels) pass through dozens of convolutions that ORT and
    PyTorch sum in different orders. None (the default): "detector" for torchvision's detectors,
    "model" otherwise.

    A torchvision detector given a batch of images as one tensor [N, 3, H, W] is exported as
    opbridge.detection.BatchedDetector (see opbridge.export), and compared with torchvision's own
    model run image by image (``model([images[i]])``) and padded the same way: image i's first
    num_detections[i] rows with its detections, the rest with the padding. The batch axis is
    checked at other sizes like any dynamic axis (dynamic_sizes={"batch": [1, 3, 8]}: the images
    drawn from the example's).

    device: "cpu" (the default), or "cuda": ORT runs with its CUDA execution provider (onnxruntime-gpu
    and a CUDA build of the library: opbridge's nodes with CUDA kernels on the GPU) and PyTorch eager
    on the GPU (a copy of the model). The report then also says whether every opbridge node ran on
    the GPU (report.placement: no copy between the CPU and the GPU next to an opbridge node).

    Returns the report (also printed unless print_report=False); report.ok says whether all match.
    With timing_runs > 0 the report also carries median times per run in ORT and in PyTorch.
    """
    if device not in ("cpu", "cuda"):
        raise ValueError(f'device must be "cpu" or "cuda", got {device!r}')
    if device == "cuda":  # before the export, which takes a while
        _check_providers(("CUDAExecutionProvider",))
        if not torch.cuda.is_available():
            raise RuntimeError("verify(device='cuda') runs PyTorch on the GPU too, but this PyTorch sees no CUDA "
                               "device (torch.cuda.is_available() is False)")
    model = model.eval()
    args = tuple(args)
    if comparison is None:
        comparison = "detector" if is_detector(model) or isinstance(model, BatchedDetector) else "model"
    model, dynamic_axes, output_names = for_export(model, args, dynamic_axes, output_names)
    axes = _axes_to_check(ExportInputs(model, args, dynamic_axes), dynamic_sizes or {})
    proto = export(model, args, exporter=exporter, dynamic_axes=dynamic_axes, output_names=output_names)
    # On the GPU both sides compute in float32, TF32 off (see CUDA_FULL_FLOAT32).
    providers = (CUDA_FULL_FLOAT32,) if device == "cuda" else ("CPUExecutionProvider",)
    session = create_session(proto, intra_op_threads=intra_op_threads, providers=providers)
    # What the export is compared with: the model itself, or for a batched detector torchvision's
    # model image by image.
    eager_model = model.reference(memoize=True) if isinstance(model, BatchedDetector) else model
    if device == "cuda":
        import copy

        from opbridge.placement import cuda_placement

        placement = cuda_placement(proto)
        eager_model = _OnDevice(copy.deepcopy(eager_model).to("cuda"), "cuda")
    examples = [args] + [tuple(a) for a in more_args]
    feeds_per_example = [_feeds(session, ExportInputs(model, example, dynamic_axes)) for example in examples]
    outputs = []
    for k, (example, feeds) in enumerate(zip(examples, feeds_per_example)):
        with torch.no_grad():
            expected = _flatten_with_paths(eager_model(*example))
        actual = session.run(None, feeds)
        if len(actual) != len(expected):
            raise AssertionError(f"ORT returned {len(actual)} outputs, eager PyTorch {len(expected)} "
                                 f"({', '.join(path for path, _ in expected)})")
        prefix = f"args[{k}] " if k else ""
        outputs += [_compare(prefix + path, e.detach().cpu().numpy(), a, comparison)
                    for (path, e), a in zip(expected, actual)]
    feeds = feeds_per_example[0]
    report = VerifyReport(exporter, custom_nodes(proto), outputs, device=device, model=proto)
    if device == "cuda":
        report.placement = placement
    report.sizes = _check_other_sizes(eager_model, args, session, axes, comparison)
    if timing_runs > 0:
        report.ort_ms = _median_ms(lambda: session.run(None, feeds), timing_runs)
        with torch.no_grad():
            report.eager_ms = _median_ms(lambda: eager_model(*args), timing_runs, synchronize=device == "cuda")
    if print_report:
        print(report)
    return report


def other_size(n: int) -> int:
    """The default second size checked for a dynamic axis whose example size is n (see verify)."""
    if n == 0:
        return 2  # (an empty example has nothing to draw larger inputs from: reported as such)
    step = min(32, n & -n)  # the largest power of two dividing n, at most 32 (an image's stride)
    # Smaller when possible: every entry of a smaller input is one of the example's. Not 0 or 1:
    # 0 is checked on its own, and torch.export specializes 0 and 1 (and 1 broadcasts).
    return n - step if n - step >= 2 else n + step


_RESAMPLE_SEED = 0


@dataclasses.dataclass
class _Axis:
    """A dynamic axis to check: its name, where it is (leaf index, dim), its size in the example
    and the sizes to check."""

    name: str
    where: list[tuple[int, int]]
    places: list[str]
    example_size: int
    sizes: list[int]


def _axes_to_check(inputs: ExportInputs, dynamic_sizes: dict) -> list[_Axis]:
    """The dynamic axes by name (an axis named in several inputs changes in all of them at once),
    with the sizes to check; checked before exporting, so that a mistake costs no export."""
    where = {}  # axis name -> [(leaf index, dim)], in the order the axes appear
    for index, axes in enumerate(inputs.leaf_axes):
        for dim, name in axes.items():
            where.setdefault(name, []).append((index, dim))
    unknown = set(dynamic_sizes) - set(where)
    if unknown:
        raise ValueError(f"dynamic_sizes names {sorted(unknown)} are not axis names of dynamic_axes {sorted(where)}")
    axes = []
    for name, at in where.items():
        places = [f"{inputs.names[i]} dim {d}" for i, d in at]
        example_sizes = [inputs.leaves[i].shape[d] for i, d in at]
        if len(set(example_sizes)) > 1:
            raise ValueError(f"dynamic axis {name!r} has different sizes in the example: "
                             + ", ".join(f"{p} is {n}" for p, n in zip(places, example_sizes)))
        n = example_sizes[0]
        sizes = list(dynamic_sizes.get(name, [other_size(n)] + ([0] if n else [])))
        for size in sizes:
            if not isinstance(size, int) or size < 0:
                raise ValueError(f"dynamic_sizes[{name!r}] must hold sizes (ints >= 0), got {size!r}")
        axes.append(_Axis(name, at, places, n, sizes))
    return axes


def _check_other_sizes(model, args: tuple, session, axes: list[_Axis], comparison: str) -> list[SizeReport]:
    """Runs the exported model at the other sizes of each dynamic axis (see verify) and compares
    with eager PyTorch; one SizeReport per axis and size."""
    flat, structure = pytree.tree_flatten(args)  # the same leaves, in the same order, as ExportInputs'
    reports = []
    for axis in axes:
        if not axis.sizes:
            reports.append(SizeReport(axis.name, axis.places, axis.example_size, axis.example_size, "skipped",
                                      "dynamic_sizes gives no size to check"))
        for size in axis.sizes:
            report = SizeReport(axis.name, axis.places, axis.example_size, size, "ok")
            reports.append(report)
            if size > 0 and axis.example_size == 0:
                report.result = "no inputs"
                report.detail = "the example is empty along this axis: nothing to draw larger inputs from"
                continue
            index = _resample_index(axis.example_size, size)
            leaves = list(flat)
            for i, d in axis.where:
                leaves[i] = leaves[i].index_select(d, index)
            example = pytree.tree_unflatten(leaves, structure)
            _run_and_compare(model, example, session, comparison, report)
    return reports


def _run_and_compare(model, example: tuple, session, comparison: str, report: SizeReport) -> None:
    """Fills `report` with eager PyTorch's and ORT's results on `example`."""
    try:
        with torch.no_grad():
            expected = _flatten_with_paths(model(*example))
    except Exception as err:  # the model's own limits, not the export's
        report.result = "skipped" if report.size == 0 else "eager error"
        report.detail = f"eager PyTorch raises at this size: {type(err).__name__}: {err}"
        if report.size:
            report.detail += "; give sizes the model takes with dynamic_sizes"
        return
    try:
        actual = session.run(None, _feeds(session, ExportInputs(model, example, None)))
    except Exception as err:  # typically a size baked into a Reshape, or into an input's shape
        report.result, report.detail = "ORT error", str(err)
        return
    if len(actual) != len(expected):
        report.result = "MISMATCH"
        report.detail = f"ORT returned {len(actual)} outputs, eager PyTorch {len(expected)}"
        return
    report.outputs = [_compare(path, e.detach().cpu().numpy(), a, comparison) for (path, e), a in zip(expected, actual)]
    wrong = [o for o in report.outputs if not o.ok]
    if wrong:
        report.result = "MISMATCH"
        report.detail = "; ".join(_describe_mismatch(o) for o in wrong)


def _resample_index(n: int, size: int) -> torch.Tensor:
    """The entries along an axis of example size n that make an input of `size`: the first ones,
    then (larger) entries drawn from the example's with a fixed seed, so that every input naming
    the axis gets the same rows (boxes stay paired with their scores)."""
    first = torch.arange(min(n, size))
    if size <= n:
        return first
    drawn = torch.randint(n, (size - n,), generator=torch.Generator().manual_seed(_RESAMPLE_SEED))
    return torch.cat([first, drawn])


def _describe_mismatch(o: OutputReport) -> str:
    if o.eager_shape != o.ort_shape:
        return f"{o.name} shape {_shape(o.ort_shape)} (eager {_shape(o.eager_shape)})"
    return f"{o.name} max abs err {o.max_abs_error:.3g}"


def _shape(shape) -> str:
    return "x".join(str(d) for d in shape) or "scalar"


def _feeds(session, inputs: ExportInputs) -> dict:
    """The session's inputs by name from the tensors of the arguments (an exporter may drop an
    input the graph does not use)."""
    by_name = dict(zip(inputs.names, inputs.leaves))
    return {i.name: by_name[i.name].detach().cpu().numpy() for i in session.get_inputs()}


def _flatten_with_paths(value) -> list[tuple[str, torch.Tensor]]:
    """The tensors of a model's output with their paths ("[0]['boxes']"; "output" for a single
    tensor), in the order PyTorch flattens them, which is the exported graph's output order."""
    leaves = pytree.tree_flatten_with_path(value)[0]
    for path, leaf in leaves:
        if not isinstance(leaf, torch.Tensor):
            raise TypeError(f"model output {pytree.keystr(path)} is a {type(leaf).__name__}; outputs must be "
                            "tensors or lists, tuples and dicts of them")
    return [(pytree.keystr(path) or "output", leaf) for path, leaf in leaves]


def _compare(name: str, expected: np.ndarray, actual: np.ndarray, comparison: str = "model") -> OutputReport:
    tol = tolerance(comparison, expected.dtype)
    same_shape = expected.shape == actual.shape
    abs_err = rel_err = 0.0
    ok = same_shape and expected.dtype == actual.dtype
    if same_shape and expected.size:
        # The arithmetic on the elements that differ only (equal ones have error 0): most of a
        # detector's padded rows and pasted masks are equal zeros, hundreds of MB in float64.
        differ = expected != actual
        if expected.dtype.kind in "fc" and actual.dtype.kind in "fc":
            differ &= ~(np.isnan(expected) & np.isnan(actual))
        if differ.any():
            e = expected[differ].astype(np.float64)
            diff = np.abs(e - actual[differ].astype(np.float64))
            abs_err = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
            rel_err = float(np.max(diff / np.maximum(np.abs(e), 1e-12)))
            ok = ok and bool(np.all(diff <= tol.atol + tol.rtol * np.abs(e)))
    elif not same_shape:
        abs_err = rel_err = float("inf")
    return OutputReport(name, str(expected.dtype), expected.shape, actual.shape, abs_err, rel_err, tol.rtol, tol.atol, ok)


def _median_ms(fn, runs: int, synchronize: bool = False) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        if synchronize:  # PyTorch's CUDA work is asynchronous: wait for it
            torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


class _OnDevice:
    """A model on `device` called with the CPU example inputs: they are moved there, it runs in
    float32 (TF32 off: full_float32_on_cuda), and its outputs come back to the CPU (which the
    comparisons read)."""

    def __init__(self, model, device: str):
        self.model, self.device = model, device
        self.forward = model.forward  # ExportInputs reads the argument names from its signature

    def __call__(self, *args):
        moved = pytree.tree_map(lambda v: v.to(self.device) if isinstance(v, torch.Tensor) else v, args)
        with full_float32_on_cuda():
            out = self.model(*moved)
        return pytree.tree_map(lambda v: v.cpu() if isinstance(v, torch.Tensor) else v, out)
