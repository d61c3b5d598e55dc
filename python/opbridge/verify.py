"""Export a model, run it in ONNX Runtime with opbridge's ops, and compare with eager PyTorch."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import torch

from opbridge._library import create_session
from opbridge.export import custom_nodes, export
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
        lines.append(f"{'output':<16}{'dtype':<9}{'shape (ORT)':<18}{'max abs err':>12}{'max rel err':>12}  "
                     f"{'tolerance':<24}result")
        for o in self.outputs:
            shape = "x".join(str(d) for d in o.ort_shape) or "scalar"
            if o.eager_shape != o.ort_shape:
                shape += f" (eager {'x'.join(str(d) for d in o.eager_shape)})"
            tol = "exact" if o.atol == 0 and o.rtol == 0 else f"rtol {o.rtol:g} atol {o.atol:g}"
            lines.append(f"{o.name:<16}{o.dtype:<9}{shape:<18}{o.max_abs_error:>12.3g}{o.max_rel_error:>12.3g}  "
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
) -> VerifyReport:
    """Exports `model(*args)`, runs it in ORT with opbridge's library and compares every output
    with eager PyTorch, within opbridge's tolerance table ("model" entries).

    Returns the report (also printed unless print_report=False); report.ok says whether all match.
    With timing_runs > 0 the report also carries median times per run in ORT and in PyTorch.
    """
    model = model.eval()
    args = tuple(args)
    with torch.no_grad():
        expected = _flatten(model(*args))
    proto = export(model, args, exporter=exporter, dynamic_axes=dynamic_axes, output_names=output_names)
    session = create_session(proto, intra_op_threads=intra_op_threads)
    feeds = {i.name: a.detach().cpu().numpy() for i, a in zip(session.get_inputs(), args)}
    actual = session.run(None, feeds)
    names = [o.name for o in session.get_outputs()]
    if len(actual) != len(expected):
        raise AssertionError(f"ORT returned {len(actual)} outputs, eager PyTorch {len(expected)}")
    outputs = [_compare(name, e.detach().cpu().numpy(), a) for name, e, a in zip(names, expected, actual)]
    report = VerifyReport(exporter, custom_nodes(proto), outputs)
    if timing_runs > 0:
        report.ort_ms = _median_ms(lambda: session.run(None, feeds), timing_runs)
        with torch.no_grad():
            report.eager_ms = _median_ms(lambda: model(*args), timing_runs)
    if print_report:
        print(report)
    return report


def _flatten(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flatten(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _flatten(v)]
    raise TypeError(f"model outputs must be tensors or nested tuples/lists/dicts of them, got {type(value)}")


def _compare(name: str, expected: np.ndarray, actual: np.ndarray) -> OutputReport:
    tol = tolerance("model", expected.dtype)
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
