"""Benchmarks of opbridge's ops against ONNX Runtime's built-in ops and PyTorch eager.

    python -m opbridge bench [workload ids or prefixes] --runs 10 --threads 1 2
    python -m opbridge.bench roi_align --runs 3 --threads 1 --no-memory

The workloads are the ones in /work/shared/spec/workloads.md (see ``WORKLOADS`` below). Method:

* inputs are generated in this process from a fixed seed (nothing is downloaded);
* every engine runs in this one process: opbridge's node and ORT's built-in node in ORT sessions
  created the same way (same options, same library registered), PyTorch eager under
  ``torch.inference_mode()`` with ``torch.set_num_threads(t)``;
* before timing, opbridge's output is compared with PyTorch eager (``np.allclose``, atol 1e-4) and a
  mismatch is shown in the "check" column (a benchmark is not a test: it does not stop);
* after one warm-up run per engine, the engines are interleaved within every repetition (the
  order rotates) and the median of ``runs`` repetitions is reported, at each thread count;
* peak memory: per workload, a child process runs only opbridge (or only the ORT built-in) a few
  times and reports its peak RSS. Skip it with ``OPBRIDGE_BENCH_MEMORY=0`` or ``--no-memory``.

ORT's intra-op worker threads spin by default. The setting used for both ORT engines is
``SPINNING`` (override with ``OPBRIDGE_BENCH_SPINNING=0/1``); it is printed with the results.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

SEED = 0
ATOL = 1e-4
MEMORY_REPEATS = 3
# "session.intra_op.allow_spinning" for both ORT engines. Both settings were measured on the 2-core
# VM at 2 threads: the differences were within its noise (about +-30%), so "0" is used: a spinning
# idle worker burns a core that the interleaved PyTorch runs (and other processes) need, which
# peer_baseline.md saw slow ORT down at 2 threads. See bench/README.md.
SPINNING = os.environ.get("OPBRIDGE_BENCH_SPINNING", "0")
# Default-domain opset of every model: RoiAlign-16 and GridSample-16 are current at 17.
ONNX_OPSET = 17

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


def _library_path() -> str:
    """The opbridge library: $OPBRIDGE_LIBRARY (set for memory children), else opbridge.library_path()."""
    if os.environ.get("OPBRIDGE_LIBRARY"):
        return os.environ["OPBRIDGE_LIBRARY"]
    from opbridge import library_path

    return library_path()


def _create_session(model, threads: int):
    """An ORT CPU session for `model` with the opbridge library registered, as opbridge.create_session
    makes it, plus the spinning setting. Used for opbridge's node and the built-in node alike.

    It calls ORT directly so that a memory child never imports the opbridge package (and so torch,
    whose import alone is ~0.5 GB of RSS and would hide the op's own peak).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.register_custom_ops_library(_library_path())
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", SPINNING)
    options.log_severity_level = 3  # errors only (ORT warns on every RoiAlign max session)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _ort_engine(model, feeds: dict, threads: int) -> Callable[[], list]:
    """A callable running the one-node `model` in ORT. The session is created on the first call (the
    warm-up), so that a memory child pays for its own session only."""
    session = None

    def run():
        nonlocal session
        if session is None:
            session = _create_session(model, threads)
        return session.run(None, feeds)

    return run


def _torch_engine(fn, *args) -> Callable[[], object]:
    """A callable running `fn(*args)` under torch.inference_mode(). torch is imported on the first
    call, not when the case is built (memory children build cases without importing torch)."""

    def run():
        import torch

        with torch.inference_mode():
            return fn(*args)

    return run


def _one_node_model(op_type: str, inputs: list[tuple], outputs: list[tuple], domain: str = "", opset: int | None = None,
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


F32 = 1  # onnx.TensorProto.FLOAT
I64 = 7  # onnx.TensorProto.INT64


# --- workload data (numpy, fixed seed) --------------------------------------------------------------


def _rng(salt: int) -> np.random.Generator:
    return np.random.default_rng([SEED, salt])


def _feature_p2() -> np.ndarray:
    """FPN P2 of an 800x1216 image at stride 4: [1, 256, 200, 304]."""
    return _rng(1).standard_normal((1, 256, 200, 304), dtype=np.float32)


def _p2_rois(count: int) -> np.ndarray:
    """`count` rois (batch 0, x1, y1, x2, y2) inside an 800x1216 image, sides uniform in 16..112 px."""
    rng = _rng(2)
    w = rng.uniform(16, 112, count)
    h = rng.uniform(16, 112, count)
    x1 = rng.uniform(0, 1216 - w)
    y1 = rng.uniform(0, 800 - h)
    return np.stack([np.zeros(count), x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


def _grid(shape: tuple[int, ...], salt: int) -> np.ndarray:
    """A sampling grid uniform in [-1.1, 1.1]: about 17% of the points fall (partly) outside the input."""
    return _rng(salt).uniform(-1.1, 1.1, shape).astype(np.float32)


def _dense_boxes() -> tuple[np.ndarray, np.ndarray]:
    """5000 boxes jittered around 500 centres of an 800x1216 image, uniform scores."""
    rng = _rng(5)
    centres = rng.uniform([0, 0], [1216, 800], (500, 2))
    sizes = rng.uniform(32, 256, (500, 2))
    centre = np.repeat(centres, 10, axis=0) + rng.normal(0, 0.1, (5000, 2)) * np.repeat(sizes, 10, axis=0)
    size = np.repeat(sizes, 10, axis=0) * np.exp(rng.normal(0, 0.1, (5000, 2)))
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    boxes = np.clip(boxes, 0, [1216, 800, 1216, 800])
    order = rng.permutation(5000)
    scores = rng.uniform(0, 1, 5000)
    return boxes[order].astype(np.float32), scores.astype(np.float32)


# --- workloads --------------------------------------------------------------------------------------


def _torchvision_roi_align(feature, rois, out, sampling_ratio):
    import torch
    import torchvision

    return torchvision.ops.roi_align(torch.from_numpy(feature), torch.from_numpy(rois), out, 0.25, sampling_ratio, True)


def _reference_roi_align_max(feature, rois, out, sampling_ratio):
    import torch

    from opbridge.ops import roi_align_reference

    return roi_align_reference(torch.from_numpy(feature), torch.from_numpy(rois), out, out, 0.25, sampling_ratio, True, "max")


def _roi_align_cases(
    label: str, feature: np.ndarray, rois: np.ndarray, out: int, sampling_ratio: int, mode: str, threads: int
) -> Case:
    """One RoIAlign variant (aligned=1, spatial_scale 0.25): opbridge, ORT RoiAlign-16, torchvision."""
    r, c = rois.shape[0], feature.shape[1]
    shape_out = [r, c, out, out]
    ours = _one_node_model(
        "RoiAlign", [("input", F32, feature.shape), ("rois", F32, rois.shape)], [("output", F32, shape_out)],
        domain="opbridge", output_height=out, output_width=out, spatial_scale=0.25,
        sampling_ratio=sampling_ratio, mode=mode, aligned=1,
    )
    builtin = _one_node_model(
        "RoiAlign",
        [("X", F32, feature.shape), ("rois", F32, [r, 4]), ("batch_indices", I64, [r])],
        [("Y", F32, shape_out)],
        output_height=out, output_width=out, spatial_scale=0.25, sampling_ratio=sampling_ratio, mode=mode,
        coordinate_transformation_mode="half_pixel",
    )
    builtin_feeds = {"X": feature, "rois": np.ascontiguousarray(rois[:, 1:]), "batch_indices": rois[:, 0].astype(np.int64)}
    case = Case(
        name=label,
        opbridge=_ort_engine(ours, {"input": feature, "rois": rois}, threads),
        ort=_ort_engine(builtin, builtin_feeds, threads),
    )
    if mode == "avg":
        case.torch = _torch_engine(_torchvision_roi_align, feature, rois, out, sampling_ratio)
    else:
        # No PyTorch eager max RoIAlign: check (untimed) against opbridge's plain-PyTorch reference on
        # the first 50 rois; ORT's max mode takes the max of bilinear terms, not of samples.
        case.ort_note = "ORT: different semantics (max of weighted corners)"
        case.reference = _torch_engine(_reference_roi_align_max, feature, rois[:50], out, sampling_ratio)
        case.check_rows = 50
    return case


def roi_align_box(threads: int) -> list[Case]:
    """roi_align.box: 1000 P2 rois, 7x7, sampling_ratio 0 (adaptive) and 2, avg."""
    feature, rois = _feature_p2(), _p2_rois(1000)
    return [
        _roi_align_cases(f"roi_align.box sr={sr}", feature, rois, 7, sr, "avg", threads) for sr in (0, 2)
    ]


def roi_align_mask(threads: int) -> list[Case]:
    """roi_align.mask: 100 P2 rois, 14x14, sampling_ratio 2, avg."""
    return [_roi_align_cases("roi_align.mask", _feature_p2(), _p2_rois(100), 14, 2, "avg", threads)]


def roi_align_max(threads: int) -> list[Case]:
    """roi_align.max: as roi_align.box (adaptive sampling), max pooling."""
    return [_roi_align_cases("roi_align.max sr=0", _feature_p2(), _p2_rois(1000), 7, 0, "max", threads)]


GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _torch_grid_sample(image, grid, mode, padding, align_corners):
    import torch
    import torch.nn.functional as F

    return F.grid_sample(
        torch.from_numpy(image), torch.from_numpy(grid), mode=mode, padding_mode=padding, align_corners=bool(align_corners)
    )


def _grid_sample_case(label, image, grid, mode, padding, align_corners, threads) -> Case:
    """One grid-sample variant: opbridge GridSample, ORT GridSample-16, F.grid_sample."""
    n, c = image.shape[:2]
    shape_out = [n, c, grid.shape[1], grid.shape[2]]
    io = [("input", F32, image.shape), ("grid", F32, grid.shape)], [("output", F32, shape_out)]
    ours = _one_node_model(
        "GridSample", *io, domain="opbridge", interpolation_mode=GRID_MODES[mode],
        padding_mode=GRID_PADDINGS[padding], align_corners=align_corners,
    )
    builtin = _one_node_model("GridSample", *io, mode=mode, padding_mode=padding, align_corners=align_corners)
    feeds = {"input": image, "grid": grid}
    return Case(
        name=label,
        opbridge=_ort_engine(ours, feeds, threads),
        ort=_ort_engine(builtin, feeds, threads),
        torch=_torch_engine(_torch_grid_sample, image, grid, mode, padding, align_corners),
    )


def grid_sample_warp(threads: int) -> list[Case]:
    """grid_sample.warp: [1,32,256,256] sampled at a [1,256,256,2] grid, three mode/padding pairs."""
    image = _rng(3).standard_normal((1, 32, 256, 256), dtype=np.float32)
    grid = _grid((1, 256, 256, 2), 4)
    variants = [("bilinear", "zeros"), ("nearest", "border"), ("bicubic", "reflection")]
    return [
        _grid_sample_case(f"grid_sample.warp {m}/{p}/ac0", image, grid, m, p, 0, threads) for m, p in variants
    ]


def grid_sample_batch(threads: int) -> list[Case]:
    """grid_sample.batch: [8,64,64,64] sampled at [8,128,128,2], bilinear/border/align_corners 1."""
    image = _rng(6).standard_normal((8, 64, 64, 64), dtype=np.float32)
    grid = _grid((8, 128, 128, 2), 7)
    return [_grid_sample_case("grid_sample.batch bilinear/border/ac1", image, grid, "bilinear", "border", 1, threads)]


def _eager_soft_nms(boxes, scores, method):
    import torch

    from opbridge.ops import soft_nms

    return soft_nms(torch.from_numpy(boxes), torch.from_numpy(scores), 0.3, 0.5, 1e-3, method)


def soft_nms_dense(threads: int) -> list[Case]:
    """soft_nms.dense: 5000 boxes, linear and gaussian. No competitor exists (neither ORT nor
    PyTorch has soft-NMS): opbridge's own eager PyTorch op is run once, untimed, as the check."""
    boxes, scores = _dense_boxes()
    cases = []
    for method in ("linear", "gaussian"):
        model = _one_node_model(
            "SoftNonMaxSuppression", [("boxes", F32, [5000, 4]), ("scores", F32, [5000])],
            [("dets", F32, ["K", 5]), ("inds", I64, ["K"])], domain="opbridge",
            iou_threshold=0.3, sigma=0.5, min_score=1e-3, method={"linear": 1, "gaussian": 2}[method], offset=0,
        )
        cases.append(Case(
            name=f"soft_nms.dense {method}",
            opbridge=_ort_engine(model, {"boxes": boxes, "scores": scores}, threads),
            reference=_torch_engine(_eager_soft_nms, boxes, scores, method),
        ))
    return cases


def _torchvision_deform_conv(x, offset, weight, bias, mask, stride, padding, dilation):
    import torch
    import torchvision

    t = lambda a: None if a is None else torch.from_numpy(a)  # noqa: E731
    return torchvision.ops.deform_conv2d(t(x), t(offset), t(weight), t(bias), stride, padding, dilation, t(mask))


_SGEMM_OPERANDS: dict = {}


def _plain_sgemm(m, k, n):
    """torch.mm of an [m, k] by a [k, n] float32 matrix; the operands are made on the first call
    (not when the case is built, so that memory children do not count them)."""
    import torch

    if (m, k, n) not in _SGEMM_OPERANDS:
        rng = _rng(12)
        _SGEMM_OPERANDS[(m, k, n)] = (torch.from_numpy(rng.standard_normal((m, k), dtype=np.float32)),
                                      torch.from_numpy(rng.standard_normal((k, n), dtype=np.float32)))
    a, b = _SGEMM_OPERANDS[(m, k, n)]
    return torch.mm(a, b)


def _dcn_cases(name, threads, n, c, h, w, c_out, k, stride, padding, dilation, groups, dgroups, variants):
    """Deformable-convolution cases: opbridge::DeformConv2d, ORT's DeformConv (opset 19) and
    torchvision, with and without mask; flops for GFLOP/s and a plain sgemm of the GEMM shape."""
    rng = _rng(11)
    out_h = (h + 2 * padding[0] - dilation[0] * (k - 1) - 1) // stride[0] + 1
    out_w = (w + 2 * padding[1] - dilation[1] * (k - 1) - 1) // stride[1] + 1
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    weight = (rng.standard_normal((c_out, c // groups, k, k)) / np.sqrt(c * k * k / groups)).astype(np.float32)
    bias = rng.standard_normal(c_out).astype(np.float32)
    offset = (rng.standard_normal((n, 2 * dgroups * k * k, out_h, out_w)) * 2).astype(np.float32)
    mask = (1 / (1 + np.exp(-rng.standard_normal((n, dgroups * k * k, out_h, out_w))))).astype(np.float32)
    gemm_m, gemm_k, gemm_n = c_out // groups, c // groups * k * k, out_h * out_w
    flops = 2.0 * n * groups * gemm_m * gemm_k * gemm_n
    cases = []
    for modulated in variants:
        feeds = {"input": x, "offset": offset, "weight": weight, "bias": bias}
        ours_inputs = [("input", F32, list(x.shape)), ("offset", F32, list(offset.shape)), ("weight", F32, list(weight.shape))]
        builtin_inputs = [("input", F32, list(x.shape)), ("weight", F32, list(weight.shape)),
                          ("offset", F32, list(offset.shape)), ("bias", F32, [c_out])]
        if modulated:
            feeds["mask"] = mask
            ours_inputs.append(("mask", F32, list(mask.shape)))
            builtin_inputs.append(("mask", F32, list(mask.shape)))
        else:
            ours_inputs.append(("", F32, None))
        ours_inputs.append(("bias", F32, [c_out]))
        out = [("output", F32, [n, c_out, out_h, out_w])]
        ours = _one_node_model("DeformConv2d", ours_inputs, out, domain="opbridge", stride=list(stride),
                               padding=list(padding), dilation=list(dilation), groups=groups, deform_groups=dgroups)
        builtin = _one_node_model("DeformConv", builtin_inputs, out, opset=19, dilations=list(dilation), group=groups,
                                  kernel_shape=[k, k], offset_group=dgroups, strides=list(stride),
                                  pads=[padding[0], padding[1], padding[0], padding[1]])
        cases.append(Case(
            name=f"{name} {'modulated' if modulated else 'plain'}",
            opbridge=_ort_engine(ours, feeds, threads),
            ort=_ort_engine(builtin, feeds, threads),
            torch=_torch_engine(_torchvision_deform_conv, x, offset, weight, bias, mask if modulated else None,
                                stride, padding, dilation),
            flops=flops,
            sgemm=_torch_engine(_plain_sgemm, gemm_m, gemm_k, gemm_n) if groups * n == 1 else None,
        ))
    return cases


def dcn_large(threads: int) -> list[Case]:
    """dcn.large: [1,256,100,152], 256 -> 256 channels, 3x3, stride 1, pad 1 (DCNv2 and DCNv1)."""
    return _dcn_cases("dcn.large", threads, 1, 256, 100, 152, 256, 3, (1, 1), (1, 1), (1, 1), 1, 1, (True, False))


def dcn_groups(threads: int) -> list[Case]:
    """dcn.groups: [2,64,64,64], weight [64,32,3,3], stride (2,1), pad (1,2), dil (1,2), groups 2, deform groups 4."""
    return _dcn_cases("dcn.groups", threads, 2, 64, 64, 64, 64, 3, (2, 1), (1, 2), (1, 2), 2, 4, (True,))


def dcn_small(threads: int) -> list[Case]:
    """dcn.small: [1,3,32,32], weight [8,3,3,3] (K = 27), defaults."""
    return _dcn_cases("dcn.small", threads, 1, 3, 32, 32, 8, 3, (1, 1), (0, 0), (1, 1), 1, 1, (True,))


# The registry: workload id -> function(threads) returning its cases.
WORKLOADS: dict[str, Callable[[int], list[Case]]] = {
    "roi_align.box": roi_align_box,
    "roi_align.mask": roi_align_mask,
    "roi_align.max": roi_align_max,
    "grid_sample.warp": grid_sample_warp,
    "grid_sample.batch": grid_sample_batch,
    "soft_nms.dense": soft_nms_dense,
    "dcn.large": dcn_large,
    "dcn.groups": dcn_groups,
    "dcn.small": dcn_small,
}


# --- measuring --------------------------------------------------------------------------------------


def _numpy_list(outputs) -> list[np.ndarray]:
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    return [o.numpy() if hasattr(o, "numpy") else np.asarray(o) for o in outputs]


def _check(case: Case) -> str:
    """Compares opbridge's outputs with the reference (untimed); 'ok', 'MISMATCH ...' or '-'."""
    reference = case.reference or case.torch
    if reference is None:
        return "-"
    expected, actual = _numpy_list(reference()), _numpy_list(case.opbridge())
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
        if not np.allclose(a, e, rtol=0.0, atol=ATOL, equal_nan=True):
            return f"MISMATCH max|d|={float(np.nanmax(np.abs(a - e))):.2g}"
        worst = max(worst, float(np.nanmax(np.abs(a - e))) if a.size else 0.0)
    return f"ok ({worst:.0e})" if rows is None else f"ok ({worst:.0e}, {rows} rois vs reference)"


def _time_interleaved(engines: dict[str, Callable], runs: int) -> dict[str, float]:
    """Median ms per engine; one warm-up each, then `runs` rounds running every engine once (rotating order)."""
    names = list(engines)
    for name in names:
        engines[name]()
    times = {name: [] for name in names}
    for rep in range(runs):
        for k in range(len(names)):
            name = names[(rep + k) % len(names)]
            start = time.perf_counter()
            engines[name]()
            times[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(t) for name, t in times.items()}


def _select(patterns: list[str]) -> list[str]:
    """Workload ids matching any of `patterns` (an id or a prefix of one); all when empty."""
    if not patterns:
        return list(WORKLOADS)
    chosen = [w for w in WORKLOADS if any(w == p or w.startswith(p) for p in patterns)]
    unknown = [p for p in patterns if not any(w.startswith(p) for w in WORKLOADS)]
    if unknown:
        raise ValueError(f"unknown workload(s) {unknown}; known: {', '.join(WORKLOADS)}")
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


def _memory_child(workload: str, engine: str, repeats: int) -> None:
    """Runs one engine of one workload `repeats` times at 1 thread; prints baseline and peak RSS (KB) as JSON
    (null when the workload has no such engine).

    The child imports numpy, onnx and onnxruntime only (not torch: see _create_session). The
    baseline is the high-water mark after imports and input generation, before the first session.
    """
    engines = [getattr(case, engine) for case in WORKLOADS[workload](1)]
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

    The child loads this file as a plain module (importing the opbridge package would import torch)
    and finds the library through $OPBRIDGE_LIBRARY.
    """
    code = (
        "import importlib.util, sys; "
        f"spec = importlib.util.spec_from_file_location('opbridge_bench', {str(Path(__file__).resolve())!r}); "
        "bench = importlib.util.module_from_spec(spec); sys.modules['opbridge_bench'] = bench; "
        "spec.loader.exec_module(bench); "
        f"bench._memory_child({workload!r}, {engine!r}, {MEMORY_REPEATS})"
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


def main(workloads: list[str], runs: int, threads: list[int], memory: bool | None = None) -> int:
    """Runs the selected workloads at every thread count and prints the timing table and peak memory.

    `workloads`: ids or prefixes (empty: all). `memory`: measure peak RSS in child processes
    (default: on, unless OPBRIDGE_BENCH_MEMORY=0).
    """
    import onnxruntime
    import torch

    if memory is None:
        memory = os.environ.get("OPBRIDGE_BENCH_MEMORY", "1") != "0"
    try:
        selected = _select(workloads)
    except ValueError as err:
        print(f"opbridge bench: {err}", file=sys.stderr)
        return 2
    print(
        f"opbridge bench: onnxruntime {onnxruntime.__version__}, torch {torch.__version__}, "
        f"{os.cpu_count()} CPUs; median of {runs} interleaved runs after warm-up; seed {SEED}; "
        f"ORT session.intra_op.allow_spinning={SPINNING} (both ORT engines)"
    )
    header = (f"{'workload':<40}{'thr':>4}{'opbridge ms':>13}{'ORT ms':>10}{'torch ms':>10}"
              f"{'ORT/opb':>9}{'torch/opb':>10}  check")
    print(header)
    print("-" * len(header))
    notes, slower, comparable = [], [], 0
    torch_threads = torch.get_num_threads()
    for workload in selected:
        for t in threads:
            torch.set_num_threads(t)
            for case in WORKLOADS[workload](t):
                check = _check(case)
                engines = {"opbridge": case.opbridge}
                engines.update({k: v for k, v in (("ort", case.ort), ("torch", case.torch), ("sgemm", case.sgemm))
                                if v is not None})
                ms = _time_interleaved(engines, runs)
                ours, ort_ms, torch_ms = ms["opbridge"], ms.get("ort"), ms.get("torch")
                mark_ort = "*" if case.ort_note else ""
                mark_torch = "+" if case.torch_note else ""
                print(
                    f"{case.name:<40}{t:>4}{ours:>13.2f}{_fmt_ms(ort_ms) + mark_ort:>10}"
                    f"{_fmt_ms(torch_ms) + mark_torch:>10}{_fmt_ratio(ort_ms, ours) + mark_ort:>9}"
                    f"{_fmt_ratio(torch_ms, ours) + mark_torch:>10}  {check}",
                    flush=True,
                )
                if case.flops:
                    rates = ", ".join(f"{k} {case.flops / ms[k] / 1e6:.1f}" for k in ("opbridge", "ort", "torch", "sgemm")
                                      if k in ms)
                    sgemm_share = (f"; opbridge at {100 * ms['sgemm'] / ours:.0f}% of the plain sgemm"
                                   if "sgemm" in ms else "")
                    print(f"{'':<4}GFLOP/s: {rates} (sgemm: torch.mm of the same GEMM shape){sgemm_share}", flush=True)
                for note in (case.ort_note, case.torch_note):
                    if note and note not in notes:
                        notes.append(note)
                # Like-for-like competitors only (not different semantics, not our own eager loop).
                rivals = [m for m, n in ((ort_ms, case.ort_note), (torch_ms, case.torch_note)) if m is not None and not n]
                if rivals:
                    comparable += 1
                    if min(rivals) < ours:
                        slower.append(f"{case.name} @{t}thr ({min(rivals) / ours:.2f}x)")
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

    if memory:
        print(f"\npeak RSS, one child process per workload and engine ({MEMORY_REPEATS} runs of every variant, "
              "1 thread, no torch;\n  in brackets: growth over the same process before its first session)")
        for workload in selected:
            ours, builtin = _measure_memory(workload, "opbridge"), _measure_memory(workload, "ort")
            print(f"  {workload:<20} opbridge {_fmt_mem(ours)} / ORT built-in {_fmt_mem(builtin)}", flush=True)
    return 0


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m opbridge.bench", description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", help="workload ids or prefixes (default: all)")
    parser.add_argument("--runs", type=int, default=10, help="timed runs per engine and thread count")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    args = parser.parse_args()
    sys.exit(main(args.workloads, args.runs, args.threads, memory=False if args.no_memory else None))
