"""Grid sampler workloads (workloads.md: grid_sample.warp, grid_sample.batch; grid_sample.volume, the
5-D form): opbridge::GridSample against ORT's GridSample (opset 16; opset 20 for volumes, the first
that takes them) and torch.nn.functional.grid_sample; grid_sample.warp's bilinear row also in float16."""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F16, F32, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine
from opbridge.tolerances import tolerance


def _grid(shape: tuple[int, ...], salt: int) -> np.ndarray:
    """A sampling grid uniform in [-1.1, 1.1]: about 17% of the points fall (partly) outside the input."""
    return data_rng(salt).uniform(-1.1, 1.1, shape).astype(np.float32)


GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def _torch_grid_sample(image, grid, mode, padding, align_corners):
    import torch
    import torch.nn.functional as F

    return F.grid_sample(
        as_tensor(image), as_tensor(grid), mode=mode, padding_mode=padding, align_corners=bool(align_corners)
    )


def _torch_grid_sample_float32(image, grid, mode, padding, align_corners):
    """What autocast runs on half inputs (F.grid_sample is on its float32 list): float32 on the half
    values, rounded once."""
    return _torch_grid_sample(image.float(), grid.float(), mode, padding, align_corners).half()


def _grid_sample_case(label, image, grid, mode, padding, align_corners, threads) -> Case:
    """One grid-sample variant: opbridge GridSample, ORT GridSample (16 for images, 20 for volumes:
    mode "linear" there), F.grid_sample, in the dtype of `image` (float32, or float16: ORT's CPU
    provider runs its GridSample on float16 by casting around it, and F.grid_sample on the CPU
    computes in half)."""
    n, c = image.shape[:2]
    shape_out = [n, c, *grid.shape[1:-1]]
    half = image.dtype == np.float16
    grid = grid.astype(image.dtype)
    elem = F16 if half else F32  # the tensors' element type
    io = [("input", elem, image.shape), ("grid", elem, grid.shape)], [("output", elem, shape_out)]
    ours = one_node_model(
        "GridSample", *io, domain="opbridge", interpolation_mode=GRID_MODES[mode],
        padding_mode=GRID_PADDINGS[padding], align_corners=align_corners,
    )
    if image.ndim == 5:
        builtin = one_node_model("GridSample", *io, opset=20, mode={"bilinear": "linear"}.get(mode, mode),
                                 padding_mode=padding, align_corners=align_corners)
    else:
        builtin = one_node_model("GridSample", *io, mode=mode, padding_mode=padding, align_corners=align_corners)
    feeds = {"input": image, "grid": grid}
    case = Case(
        name=label,
        opbridge=ort_engine(ours, feeds, threads),
        ort=ort_engine(builtin, feeds, threads),
        torch=torch_engine(_torch_grid_sample, image, grid, mode, padding, align_corners),
    )
    if half:
        # PyTorch's half kernel computes in half: the check is against its float32 one on the half values.
        case.torch_note = "torch: computes in half"
        case.reference = torch_engine(_torch_grid_sample_float32, image, grid, mode, padding, align_corners)
        half_tolerance = tolerance("half", "float16")
        case.check_rtol, case.check_atol = half_tolerance.rtol, half_tolerance.atol
    return case


def grid_sample_warp(threads: int) -> list[Case]:
    """grid_sample.warp: [1,32,256,256] sampled at a [1,256,256,2] grid, three mode/padding pairs, and
    bilinear/zeros in float16."""
    image = data_rng(3).standard_normal(sized((1, 32, 256, 256), (1, 4, 32, 32)), dtype=np.float32)
    grid = _grid(sized((1, 256, 256, 2), (1, 24, 40, 2)), 4)
    variants = [("bilinear", "zeros"), ("nearest", "border"), ("bicubic", "reflection")]
    return [
        _grid_sample_case(f"grid_sample.warp {m}/{p}/ac0", image, grid, m, p, 0, threads) for m, p in variants
    ] + [_grid_sample_case("grid_sample.warp bilinear/zeros/ac0 float16", image.astype(np.float16), grid, "bilinear",
                           "zeros", 0, threads)]


def grid_sample_batch(threads: int) -> list[Case]:
    """grid_sample.batch: [8,64,64,64] sampled at [8,128,128,2], bilinear/border/align_corners 1."""
    image = data_rng(6).standard_normal(sized((8, 64, 64, 64), (2, 4, 16, 16)), dtype=np.float32)
    grid = _grid(sized((8, 128, 128, 2), (2, 20, 12, 2)), 7)
    return [_grid_sample_case("grid_sample.batch bilinear/border/ac1", image, grid, "bilinear", "border", 1, threads)]


def grid_sample_volume(threads: int) -> list[Case]:
    """grid_sample.volume: a [1,16,32,64,64] volume sampled at a [1,32,64,64,3] grid uniform in
    [-1.1, 1.1] (volumetric registration's warp), trilinear/zeros and nearest/border."""
    volume = data_rng(8).standard_normal(sized((1, 16, 32, 64, 64), (1, 2, 8, 16, 16)), dtype=np.float32)
    grid = _grid(sized((1, 32, 64, 64, 3), (1, 8, 12, 16, 3)), 9)
    variants = [("bilinear", "zeros"), ("nearest", "border")]
    return [_grid_sample_case(f"grid_sample.volume {m}/{p}/ac0", volume, grid, m, p, 0, threads) for m, p in variants]


WORKLOADS = {
    "grid_sample.warp": grid_sample_warp,
    "grid_sample.batch": grid_sample_batch,
    "grid_sample.volume": grid_sample_volume,
}
