"""RoIAlign workloads (workloads.md: roi_align.box, roi_align.mask, roi_align.max): opbridge::RoiAlign
against ORT's RoiAlign-16 (half_pixel) and torchvision.ops.roi_align; roi_align.box also in float16."""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F16, F32, I64, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine
from opbridge.tolerances import tolerance


def _feature_p2() -> np.ndarray:
    """FPN P2 of an 800x1216 image at stride 4: [1, 256, 200, 304] (a smoke run: 8 channels)."""
    return data_rng(1).standard_normal((1, sized(256, 8), 200, 304), dtype=np.float32)


def _p2_rois(count: int) -> np.ndarray:
    """`count` rois (batch 0, x1, y1, x2, y2) inside an 800x1216 image, sides uniform in 16..112 px."""
    rng = data_rng(2)
    count = sized(count, min(count, 40))
    w = rng.uniform(16, 112, count)
    h = rng.uniform(16, 112, count)
    x1 = rng.uniform(0, 1216 - w)
    y1 = rng.uniform(0, 800 - h)
    return np.stack([np.zeros(count), x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


def _torchvision_roi_align(feature, rois, out, sampling_ratio):
    import torch
    import torchvision

    return torchvision.ops.roi_align(as_tensor(feature), as_tensor(rois), out, 0.25, sampling_ratio, True)


def _reference_roi_align_max(feature, rois, out, sampling_ratio):
    import torch

    from opbridge.ops import roi_align_reference

    return roi_align_reference(as_tensor(feature), as_tensor(rois), out, out, 0.25, sampling_ratio, True, "max")


def _torchvision_roi_align_float32(feature, rois, out, sampling_ratio):
    """What autocast runs on half inputs: torchvision's float32 kernel on the half values, rounded once."""
    return _torchvision_roi_align(feature.float(), rois.float(), out, sampling_ratio).half()


def _roi_align_cases(
    label: str, feature: np.ndarray, rois: np.ndarray, out: int, sampling_ratio: int, mode: str, threads: int
) -> Case:
    """One RoIAlign variant (aligned=1, spatial_scale 0.25): opbridge, ORT RoiAlign-16, torchvision, in
    the dtype of `feature` (float32, or float16: ORT's CPU provider runs RoiAlign-16 on float16 by
    casting its inputs and output to and from float32 around it; torchvision computes in half)."""
    r, c = rois.shape[0], feature.shape[1]
    shape_out = [r, c, out, out]
    half = feature.dtype == np.float16
    rois = rois.astype(feature.dtype)
    elem = F16 if half else F32  # the float tensors' element type
    ours = one_node_model(
        "RoiAlign", [("input", elem, feature.shape), ("rois", elem, rois.shape)], [("output", elem, shape_out)],
        domain="opbridge", output_height=out, output_width=out, spatial_scale=0.25,
        sampling_ratio=sampling_ratio, mode=mode, aligned=1,
    )
    builtin = one_node_model(
        "RoiAlign",
        [("X", elem, feature.shape), ("rois", elem, [r, 4]), ("batch_indices", I64, [r])],
        [("Y", elem, shape_out)],
        output_height=out, output_width=out, spatial_scale=0.25, sampling_ratio=sampling_ratio, mode=mode,
        coordinate_transformation_mode="half_pixel",
    )
    builtin_feeds = {"X": feature, "rois": np.ascontiguousarray(rois[:, 1:]), "batch_indices": rois[:, 0].astype(np.int64)}
    case = Case(
        name=label,
        opbridge=ort_engine(ours, {"input": feature, "rois": rois}, threads),
        ort=ort_engine(builtin, builtin_feeds, threads),
    )
    if mode == "avg":
        case.torch = torch_engine(_torchvision_roi_align, feature, rois, out, sampling_ratio)
    else:
        # No PyTorch eager max RoIAlign: check (untimed) against opbridge's plain-PyTorch reference on
        # the first 50 rois; ORT's max mode takes the max of bilinear terms, not of samples.
        case.ort_note = "ORT: different semantics (max of weighted corners)"
        case.reference = torch_engine(_reference_roi_align_max, feature, rois[:50], out, sampling_ratio)
        case.check_rows = 50
    if half:
        # torchvision's half kernel samples and sums in half (up to ~1.7 from the float32 result on
        # unit-normal maps): the check is against its float32 kernel on the half values, rounded once.
        case.torch_note = "torchvision: computes in half"
        case.reference = torch_engine(_torchvision_roi_align_float32, feature, rois, out, sampling_ratio)
        half_tolerance = tolerance("half", "float16")
        case.check_rtol, case.check_atol = half_tolerance.rtol, half_tolerance.atol
    return case


def roi_align_box(threads: int) -> list[Case]:
    """roi_align.box: 1000 P2 rois, 7x7, sampling_ratio 0 (adaptive) and 2, avg; and sampling_ratio 0 in
    float16."""
    feature, rois = _feature_p2(), _p2_rois(1000)
    return [
        _roi_align_cases(f"roi_align.box sr={sr}", feature, rois, 7, sr, "avg", threads) for sr in (0, 2)
    ] + [_roi_align_cases("roi_align.box sr=0 float16", feature.astype(np.float16), rois, 7, 0, "avg", threads)]


def roi_align_mask(threads: int) -> list[Case]:
    """roi_align.mask: 100 P2 rois, 14x14, sampling_ratio 2, avg."""
    return [_roi_align_cases("roi_align.mask", _feature_p2(), _p2_rois(100), 14, 2, "avg", threads)]


def roi_align_max(threads: int) -> list[Case]:
    """roi_align.max: as roi_align.box (adaptive sampling), max pooling."""
    return [_roi_align_cases("roi_align.max sr=0", _feature_p2(), _p2_rois(1000), 7, 0, "max", threads)]


WORKLOADS = {
    "roi_align.box": roi_align_box,
    "roi_align.mask": roi_align_mask,
    "roi_align.max": roi_align_max,
}
