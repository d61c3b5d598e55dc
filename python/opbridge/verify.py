"""Export a model, run it in ONNX Runtime with opbridge's ops, and compare with eager PyTorch."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch
import torch.utils._pytree as pytree

from opbridge._library import create_session
from opbridge.export import ExportInputs, custom_nodes, export
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
class VerifyReport:
    exporter: str
    custom_ops: list[str]
    outputs: list[OutputReport]
    ort_ms: float = float("nan")
    eager_ms: float = float("nan")

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    def __str__(self) -> str:
        lines = [f"exporter: {self.exporter}", f"custom ops: {', '.join(sorted(set(self.custom_ops))) or 'none'}"]
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
        if not np.isnan(self.ort_ms):
            lines.append(f"time per run: ORT {self.ort_ms:.2f} ms, PyTorch eager {self.eager_ms:.2f} ms")
        lines.append("verdict: " + ("all outputs match" if self.ok else "MISMATCH"))
        return "\n".join(lines)


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
    comparison: str = "model",
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

    comparison: the tolerance table entries to compare with: "model" (the default), or
    "detector" for detection models, whose box coordinates (in pixels) pass through dozens of
    convolutions that ORT and PyTorch sum in different orders.

    Returns the report (also printed unless print_report=False); report.ok says whether all match.
    With timing_runs > 0 the report also carries median times per run in ORT and in PyTorch.
    """
    model = model.eval()
    args = tuple(args)
    proto = export(model, args, exporter=exporter, dynamic_axes=dynamic_axes, output_names=output_names)
    session = create_session(proto, intra_op_threads=intra_op_threads)
    examples = [args] + [tuple(a) for a in more_args]
    feeds_per_example = [_feeds(session, ExportInputs(model, example, dynamic_axes)) for example in examples]
    outputs = []
    for k, (example, feeds) in enumerate(zip(examples, feeds_per_example)):
        with torch.no_grad():
            expected = _flatten_with_paths(model(*example))
        actual = session.run(None, feeds)
        if len(actual) != len(expected):
            raise AssertionError(f"ORT returned {len(actual)} outputs, eager PyTorch {len(expected)} "
                                 f"({', '.join(path for path, _ in expected)})")
        prefix = f"args[{k}] " if k else ""
        outputs += [_compare(prefix + path, e.detach().cpu().numpy(), a, comparison)
                    for (path, e), a in zip(expected, actual)]
    feeds = feeds_per_example[0]
    report = VerifyReport(exporter, custom_nodes(proto), outputs)
    if timing_runs > 0:
        report.ort_ms = _median_ms(lambda: session.run(None, feeds), timing_runs)
        with torch.no_grad():
            report.eager_ms = _median_ms(lambda: model(*args), timing_runs)
    if print_report:
        print(report)
    return report


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
        e = expected.astype(np.float64)
        a = actual.astype(np.float64)
        both_nan = np.isnan(e) & np.isnan(a)
        diff = np.where(both_nan, 0.0, np.abs(e - a))
        abs_err = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
        rel_err = float(np.max(diff / np.maximum(np.abs(e), 1e-12)))
        ok = ok and bool(np.all(diff <= tol.atol + tol.rtol * np.abs(e)))
    elif not same_shape:
        abs_err = rel_err = float("inf")
    return OutputReport(name, str(expected.dtype), expected.shape, actual.shape, abs_err, rel_err, tol.rtol, tol.atol, ok)


def _median_ms(fn, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))
