"""The per-op case table of the conformance suite (test_conformance.py): for each kernel of the
manifest, the sizes its shape symbols take in a small valid input, the attributes the node needs,
how to make input values the op accepts (boxes inside the image, batch indices in range, level
shapes that add up), the inputs for the thread-count check (large enough that the kernel splits its
work), the empty inputs, and the exact message of each form of allowed-value error.

Shapes come from the manifest: an input's shape text ("[R, 5]", "[N, 2 * deform_groups * kh * kw,
H_out, W_out]", "[...]") is evaluated with the sizes below and the node's int attributes; a size
given as a list holds one value per tensor of a variadic input ("levels" tensors). Inputs not
named in `values` get standard normal floats or zero integers. Sizes that are not shape symbols
("image", "level_shapes", ...) are read by the value functions."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

from box_data import clustered_boxes


@dataclasses.dataclass(frozen=True)
class Run:
    """One input of a check: changes to the op's sizes and attributes, and where the manifest's
    shape text cannot say it (other ranks than the text's), explicit input shapes and the output
    shapes they give."""

    sizes: dict = dataclasses.field(default_factory=dict)
    attrs: dict = dataclasses.field(default_factory=dict)
    shapes: dict = dataclasses.field(default_factory=dict)  # input name -> shape
    expect: dict = dataclasses.field(default_factory=dict)  # output name -> shape, with `shapes`
    form: int = 0  # which of "[...] or [...]" the shapes take
    dtype: str | None = None  # the type parameter T's dtype (default: the op's first)
    omit: tuple = ()  # optional inputs to leave out
    only: Callable | None = None  # signature -> bool: the identities the run is for (default all)


@dataclasses.dataclass(frozen=True)
class Case:
    sizes: dict
    attrs: dict = dataclasses.field(default_factory=dict)  # the required ones, and any the inputs need
    values: dict = dataclasses.field(default_factory=dict)  # input name -> fn(ctx) -> array
    threads: dict = dataclasses.field(default_factory=dict)  # name -> Run: thread counts 1, 2, 4 agree
    empty: dict = dataclasses.field(default_factory=dict)  # name -> Run: zero-sized axes run
    inference: dict = dataclasses.field(default_factory=lambda: {"": Run()})  # name -> Run: shape inference
    bad_values: dict = dataclasses.field(default_factory=dict)  # attribute -> values beyond the generated
    # "name=value" of an allowed-value error -> its exact message (after "<identity>: "): one per form.
    messages: dict = dataclasses.field(default_factory=dict)


# --- value functions: ctx has rng, shape, dtype, sizes, attrs (the case's, unfiltered), level ----------


def uniform(low, high):
    return lambda ctx: ctx.rng.uniform(low, high, ctx.shape)


def constant(key):
    """The size entry `key` (a list or a number) as the input's values."""
    return lambda ctx: np.asarray(ctx.sizes[key]).reshape(ctx.shape)


def integers(low, high):
    """Random integers in [low, high); low and high may name sizes ("G0", or "-G0" for its negative)."""
    def bound(ctx, value):
        if not isinstance(value, str):
            return value
        return -ctx.sizes[value[1:]] if value.startswith("-") else ctx.sizes[value]

    def make(ctx):
        lo, hi = bound(ctx, low), bound(ctx, high)
        return ctx.rng.integers(lo, hi, ctx.shape) if hi > lo else np.zeros(ctx.shape, np.int64)
    return make


def box_rows(ctx, extent):
    """[..., 4] boxes (x1, y1, x2, y2) clustered in an extent x extent square, larger for many boxes
    (the same density whatever the count), or [..., 5] rotated (cx, cy, w, h, theta): overlapping
    ones, as detectors propose them."""
    count = math.prod(ctx.shape[:-1])
    clusters = max(count // 6, 1)
    xyxy = clustered_boxes(ctx.rng, count, clusters, spread=max(0.8 * extent, 60.0 * math.sqrt(clusters)))
    if ctx.shape[-1] == 5:
        ctr, wh = (xyxy[:, :2] + xyxy[:, 2:]) / 2, xyxy[:, 2:] - xyxy[:, :2]
        xyxy = np.column_stack([ctr, wh, ctx.rng.uniform(-math.pi, math.pi, count)])
    return xyxy.reshape(ctx.shape)


def boxes(extent=500.0):
    return lambda ctx: box_rows(ctx, extent)


def image_extent(ctx):
    """(height, width) of the image a RoI op's boxes lie in: the "image" size, or the first map's
    size over spatial_scale."""
    if "image" in ctx.sizes:
        return ctx.sizes["image"]
    scale = ctx.attrs.get("spatial_scale", 1.0)
    return ctx.sizes["H"] / scale, ctx.sizes["W"] / scale


def rois(ctx):
    """RoI rows [R, 5] (batch index, x1, y1, x2, y2) or [R, 6] (batch index, cx, cy, w, h, theta):
    boxes mostly inside the image, some partly outside, sides from 1 pixel to most of it."""
    count, columns = ctx.shape
    height, width = image_extent(ctx)
    rng = ctx.rng
    batch = rng.integers(0, max(ctx.sizes["N"], 1), count)
    x, y = rng.uniform(-0.1 * width, width, count), rng.uniform(-0.1 * height, height, count)
    w = np.exp(rng.uniform(0, np.log(max(0.8 * width, 2.0)), count))
    h = np.exp(rng.uniform(0, np.log(max(0.8 * height, 2.0)), count))
    if columns == 5:
        return np.stack([batch, x, y, x + w, y + h], axis=1)
    return np.stack([batch, x, y, w, h, rng.uniform(-2 * math.pi, 2 * math.pi, count)], axis=1)


def plain_boxes(ctx):
    """[R, 4] boxes (x1, y1, x2, y2) inside the "image" size."""
    height, width = ctx.sizes["image"]
    rng = ctx.rng
    xy = rng.uniform(0, 1, ctx.shape[:-1] + (2,)) * (width, height)
    wh = np.exp(rng.uniform(0, np.log(min(width, height)), ctx.shape[:-1] + (2,))) + 0.5
    return np.minimum(np.concatenate([xy, xy + wh], -1), (width, height, width, height))


def rotated_feature_boxes(ctx):
    """best_rbboxes [N, H, W, 5] (y, x, w, h, angle) in image coordinates: centres over the map and
    a margin past every side, sizes up to 1.5 times the map."""
    n, h, w, _ = ctx.shape
    scale = 1 / ctx.attrs["spatial_scale"]
    rng = ctx.rng
    return np.stack([rng.uniform(-0.4 * h - 2, 1.4 * h + 2, (n, h, w)) * scale,
                     rng.uniform(-0.4 * w - 2, 1.4 * w + 2, (n, h, w)) * scale,
                     rng.uniform(0, 1.5 * w, (n, h, w)) * scale, rng.uniform(0, 1.5 * h, (n, h, w)) * scale,
                     rng.uniform(-7, 7, (n, h, w))], axis=-1)


def level_starts(ctx):
    sizes = [h * w for h, w in ctx.sizes["level_shapes"]]
    return np.cumsum([0] + sizes[:-1]).reshape(ctx.shape)


def well_conditioned(ctx):
    """Invertible matrices (condition numbers below ~10) that need row swaps."""
    m = ctx.shape[-1]
    a = ctx.rng.standard_normal(ctx.shape) + 2.0 * np.sqrt(m) * np.eye(m)
    rows = np.argsort(ctx.rng.random(ctx.shape[:-1]), axis=-1)
    return np.take_along_axis(a, rows[..., None], axis=-2)


def ties(ctx):
    """Values from a few levels (many ties) and, for floats, NaN, infinities and -0 at random places."""
    x = ctx.rng.integers(-3, 4, ctx.shape).astype(np.float64)
    if x.size and np.dtype(ctx.dtype).kind == "f":
        flat = x.reshape(-1)
        picks = ctx.rng.choice(flat.size, max(1, flat.size // 20))
        flat[picks] = ctx.rng.choice([np.nan, np.inf, -np.inf, -0.0], picks.size)
    return x


def is_multiclass(signature) -> bool:
    """An NMS signature whose boxes are batched ([B, N, ...])."""
    return signature.inputs[0].shape.startswith("[B")


def has_input(name):
    return lambda signature: any(t.name == name for t in signature.inputs)


def optional(signature, name) -> bool:
    return any(t.name == name and t.optional for t in signature.inputs)


STRIDES = [4.0, 8.0, 16.0, 32.0]
PYRAMID = dict(levels=4, H_l=[64, 32, 16, 8], W_l=[80, 40, 20, 10], image=(256, 320))
# The multi-level RoI ops with no RoIs, on one, two and three maps.
LEVELS_EMPTY = {f"R=0, {n} levels": Run(sizes=dict(R=0, levels=n, H_l=[16, 8, 4][:n], W_l=[20, 10, 5][:n]),
                                        attrs=dict(featmap_strides=STRIDES[:n])) for n in (1, 2, 3)} | {
    "C=0": Run(sizes=dict(C=0))}


CASES: dict[str, Case] = {
    "roi_align": Case(
        sizes=dict(N=2, C=3, H=10, W=12, R=6),
        attrs=dict(output_height=3, output_width=4),
        values=dict(rois=rois),
        threads={mode: Run(sizes=dict(C=16, H=40, W=50, R=200),
                           attrs=dict(output_height=7, output_width=7, spatial_scale=0.5, mode=mode))
                 for mode in ("avg", "max")},
        empty={"R=0": Run(sizes=dict(R=0)), "C=0": Run(sizes=dict(C=0)), "N=0,R=0": Run(sizes=dict(N=0, R=0))},
        bad_values=dict(mode=["mean"]),
        messages={"mode=mean": 'mode must be "avg" or "max", got "mean"', "aligned=2": "aligned must be 0 or 1, got 2"},
    ),
    "roi_align_rotated": Case(
        sizes=dict(N=2, C=3, H=10, W=12, R=6),
        attrs=dict(output_height=3, output_width=4),
        values=dict(rois=rois),
        threads={"sampling_ratio=2": Run(sizes=dict(C=16, H=40, W=50, R=700),  # several preparation groups
                                         attrs=dict(output_height=7, output_width=7, spatial_scale=0.5,
                                                    sampling_ratio=2))},
        empty={"R=0": Run(sizes=dict(R=0)), "C=0": Run(sizes=dict(C=0))},
        messages={"aligned=2": "aligned must be 0 or 1, got 2", "clockwise=-1": "clockwise must be 0 or 1, got -1"},
    ),
    "grid_sample": Case(
        sizes=dict(N=2, C=3, D=4, H=7, W=5, D_out=3, H_out=6, W_out=9),
        values=dict(grid=uniform(-1.2, 1.2)),
        threads={**{f"{name}-2d": Run(sizes=dict(C=8, H=40, W=30, H_out=37, W_out=41),
                                      attrs=dict(interpolation_mode=mode, padding_mode=2))
                    for mode, name in enumerate(["bilinear", "nearest", "bicubic"])},
                 **{f"{name}-3d": Run(sizes=dict(C=3, D=6, H=20, W=30, D_out=7, H_out=40, W_out=70),
                                      attrs=dict(interpolation_mode=mode, padding_mode=2), form=1)
                    for mode, name in enumerate(["trilinear", "nearest"])}},
        empty={"N=0": Run(sizes=dict(N=0)), "C=0": Run(sizes=dict(C=0)), "H_out=0": Run(sizes=dict(H_out=0)),
               "N=0-3d": Run(sizes=dict(N=0), form=1), "C=0-3d": Run(sizes=dict(C=0), form=1),
               "D_out=0-3d": Run(sizes=dict(D_out=0), form=1)},
        inference={"2d": Run(), "3d": Run(form=1)},
        bad_values=dict(align_corners=[5]),
        messages={"interpolation_mode=3": "interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic), got 3",
                  "padding_mode=-1": "padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got -1",
                  "align_corners=2": "align_corners must be 0 or 1, got 2"},
    ),
    "soft_nms": Case(
        sizes=dict(N=30),
        values=dict(boxes=boxes(300.0), scores=uniform(0, 1)),
        threads={method: Run(sizes=dict(N=1500), attrs=dict(method=code))
                 for code, method in enumerate(["naive", "linear", "gaussian"])},
        empty={"N=0": Run(sizes=dict(N=0))},
        messages={"method=3": "method must be 0 (naive), 1 (linear) or 2 (gaussian), got 3",
                  "offset=2": "offset must be 0 or 1, got 2"},
    ),
    "deform_conv": Case(
        sizes=dict(N=1, C=4, H=6, W=7, C_out=4, kh=3, kw=3, H_out=4, W_out=5),
        values=dict(offset=lambda ctx: ctx.rng.standard_normal(ctx.shape) * 2,
                    mask=lambda ctx: 1 / (1 + np.exp(-ctx.rng.standard_normal(ctx.shape)))),
        threads={"groups": Run(sizes=dict(N=2, C=16, H=24, W=20, C_out=32, H_out=24, W_out=20),
                               attrs=dict(padding=[1, 1], groups=2, deform_groups=4))},
        empty={"N=0": Run(sizes=dict(N=0))},
        # Without the optional mask (ORT 1.21 to 1.23 crashed preparing shape inference with bias after it).
        inference={"all inputs": Run(), "no mask": Run(omit=("mask",), only=lambda s: optional(s, "mask")),
                "no mask, no bias": Run(omit=("mask", "bias"), only=lambda s: optional(s, "mask"))},
    ),
    "nms": Case(
        sizes=dict(N=40, B=2, C=3),
        attrs=dict(iou_threshold=0.5),
        values=dict(boxes=boxes(), scores=uniform(0, 1), idxs=integers(-2, 6)),
        threads={"N=3000": Run(sizes=dict(N=3000), only=lambda s: not is_multiclass(s)),
                 "B=2,C=20,N=1000": Run(sizes=dict(B=2, C=20, N=1000), attrs=dict(score_threshold=0.25),
                                        only=is_multiclass)},
        empty={"N=0": Run(sizes=dict(N=0)), "B=0": Run(sizes=dict(B=0), only=is_multiclass),
               "C=0": Run(sizes=dict(C=0), only=is_multiclass)},
        messages={"offset=2": "offset must be 0 or 1, got 2"},
    ),
    "multi_scale_roi_align": Case(
        sizes=dict(R=8, N=2, C=3, levels=2, H_l=[16, 8], W_l=[20, 10], image=(64, 80)),
        attrs=dict(output_height=7, output_width=7, sampling_ratio=2, spatial_scales=[0.25, 0.125]),
        values=dict(rois=rois),
        threads={"four levels": Run(sizes=dict(PYRAMID, C=16, R=300),
                                    attrs=dict(spatial_scales=[1 / s for s in STRIDES]))},
        empty={"R=0": Run(sizes=dict(R=0)), "C=0": Run(sizes=dict(C=0))},
        messages={"aligned=2": "aligned must be 0 or 1, got 2"},
    ),
    "nms_rotated": Case(
        sizes=dict(N=40, B=2, C=3, categories=5),
        attrs=dict(iou_threshold=0.5),
        values=dict(boxes=boxes(), scores=uniform(0, 1), idxs=integers(0, "categories")),
        threads={"N=20000,40 categories": Run(sizes=dict(N=20000, categories=40), attrs=dict(iou_threshold=0.4),
                                              only=lambda s: not is_multiclass(s)),
                 "N=20000": Run(sizes=dict(N=20000), attrs=dict(iou_threshold=0.4), omit=("idxs",),
                                only=lambda s: not is_multiclass(s)),
                 "B=1,C=4,N=1500": Run(sizes=dict(B=1, C=4, N=1500), attrs=dict(score_threshold=0.25),
                                       only=is_multiclass)},
        empty={"N=0": Run(sizes=dict(N=0)),
               "N=0 without idxs": Run(sizes=dict(N=0), omit=("idxs",), only=has_input("idxs")),
               "B=0": Run(sizes=dict(B=0), only=is_multiclass), "C=0": Run(sizes=dict(C=0), only=is_multiclass),
               "B=0,C=0,N=0": Run(sizes=dict(B=0, C=0, N=0), only=is_multiclass)},
        messages={"clockwise=2": "clockwise must be 0 or 1, got 2"},
    ),
    "paste_masks": Case(
        sizes=dict(N=5, M=28, image=(60, 80)),
        values=dict(masks=uniform(0, 1), boxes=plain_boxes, image_size=constant("image")),
        threads={"30 masks": Run(sizes=dict(N=30, image=(240, 320)))},
        empty={"N=0": Run(sizes=dict(N=0))},
    ),
    "heatmaps_to_keypoints": Case(
        sizes=dict(R=4, K=17, H=56, W=56, image=(300, 300)),
        values=dict(rois=plain_boxes),
        threads={"R=40": Run(sizes=dict(R=40))},
        empty={"R=0": Run(sizes=dict(R=0))},
    ),
    "nms_match": Case(
        sizes=dict(B=2, C=3, N=50, iou=0.5, score=0.05),
        values=dict(boxes=boxes(), scores=uniform(0, 1), iou_threshold=constant("iou"),
                    score_threshold=constant("score")),
        threads={f"iou={iou}": Run(sizes=dict(B=2, C=40, N=1500, iou=iou, score=0.2)) for iou in (0.0, 0.5)},
        empty={"N=0": Run(sizes=dict(N=0)), "B=0": Run(sizes=dict(B=0)), "C=0": Run(sizes=dict(C=0)),
               "B=0,C=0,N=0": Run(sizes=dict(B=0, C=0, N=0))},
    ),
    "trt_batched_nms": Case(
        sizes=dict(B=2, S=40, L=1, C=3),
        attrs=dict(num_classes=3, keep_topk=10, iou_threshold=0.5, background_label_id=-1, return_index=1),
        values=dict(boxes=boxes(), scores=uniform(0, 1)),
        threads={"S=1500,C=8": Run(sizes=dict(S=1500, C=8),
                                   attrs=dict(num_classes=8, keep_topk=400, score_threshold=0.05, topk=1000))},
        empty={"B=0": Run(sizes=dict(B=0)), "S=0": Run(sizes=dict(S=0))},
        messages={"is_normalized=2": "is_normalized must be 0 or 1, got 2",
                  "clip_boxes=-1": "clip_boxes must be 0 or 1, got -1",
                  "return_index=2": "return_index must be 0 or 1, got 2"},
    ),
    "rotated_feature_align": Case(
        sizes=dict(N=2, C=3, H=8, W=8),
        attrs=dict(spatial_scale=0.125, points=5),
        values=dict(best_rbboxes=rotated_feature_boxes),
        threads={f"points={points}": Run(sizes=dict(N=2, C=6, H=96, W=90), attrs=dict(points=points))
                 for points in (1, 5)},
        empty={f"{axis}=0": Run(sizes={axis: 0}) for axis in "NCHW"} | {
            "all=0": Run(sizes=dict(N=0, C=0, H=0, W=0))},
        bad_values=dict(points=[-1]),
        messages={"points=0": "points must be 1 (the box centre) or 5 (the centre and the 4 corners), got 0"},
    ),
    "multi_level_roi_align": Case(
        sizes=dict(R=10, N=2, C=3, levels=2, H_l=[16, 8], W_l=[20, 10], image=(64, 80)),
        attrs=dict(featmap_strides=[4.0, 8.0]),
        values=dict(rois=rois),
        threads={"four levels": Run(sizes=dict(PYRAMID, C=16, R=300),
                                    attrs=dict(featmap_strides=STRIDES, pool_mode=1, sampling_ratio=0, aligned=1,
                                               roi_scale_factor=1.2))},
        empty=LEVELS_EMPTY,
        messages={"pool_mode=2": "pool_mode must be 0 (max) or 1 (avg), got 2",
                  "aligned=2": "aligned must be 0 or 1, got 2"},
    ),
    "multi_level_rotated_roi_align": Case(
        sizes=dict(R=10, N=2, C=3, levels=2, H_l=[16, 8], W_l=[20, 10], image=(64, 80)),
        attrs=dict(featmap_strides=[4.0, 8.0]),
        values=dict(rois=rois),
        threads={"four levels": Run(sizes=dict(PYRAMID, C=16, R=300),
                                    attrs=dict(featmap_strides=STRIDES, sampling_ratio=0, aligned=1, clockwise=1,
                                               roi_scale_factor=1.2))},
        empty=LEVELS_EMPTY,
        messages={"clockwise=2": "clockwise must be 0 or 1, got 2", "aligned=2": "aligned must be 0 or 1, got 2"},
    ),
    "cummax": Case(
        sizes={"...": (3, 4, 9)},
        attrs=dict(dim=1),
        values=dict(input=ties),
        threads={f"dim={dim}": Run(sizes={"...": (4, 96, 300)}, attrs=dict(dim=dim)) for dim in (0, 1, 2)},
        empty={f"{list(shape)} dim={dim}": Run(sizes={"...": shape}, attrs=dict(dim=dim))
               for shape in [(0,), (0, 5), (5, 0), (3, 0, 4), (2, 3, 0), (0, 0)]
               for dim in range(-len(shape), len(shape))},
    ),
    "corner_pool": Case(
        sizes=dict(N=2, C=3, H=5, W=7),
        attrs=dict(mode=0),
        values=dict(input=ties),
        threads={name: Run(sizes=dict(N=2, C=24, H=70, W=90), attrs=dict(mode=mode))
                 for mode, name in enumerate(["top", "bottom", "left", "right"])},
        empty={f"{axis}=0": Run(sizes={axis: 0}) for axis in "NCHW"} | {
            "all=0": Run(sizes=dict(N=0, C=0, H=0, W=0))},
        bad_values=dict(mode=[2**40]),
        messages={"mode=4": "mode must be 0 (top), 1 (bottom), 2 (left) or 3 (right), got 4"},
    ),
    "instance_norm": Case(
        sizes=dict(N=2, C=3, H=4, W=5),
        threads={"8x64x16x16": Run(sizes=dict(N=8, C=64, H=16, W=16)),
                 "1x2x200x200": Run(sizes=dict(N=1, C=2, H=200, W=200))},
        empty={"N=0": Run(sizes=dict(N=0)), "H=0": Run(sizes=dict(H=0)), "C=0": Run(sizes=dict(C=0)),
               "[2, 0, 5]": Run(shapes=dict(input=(2, 0, 5), scale=(0,), B=(0,)), expect=dict(output=(2, 0, 5))),
               "[1, 2, 3, 0, 2]": Run(shapes=dict(input=(1, 2, 3, 0, 2), scale=(2,), B=(2,)),
                                      expect=dict(output=(1, 2, 3, 0, 2)))},
    ),
    "group_norm": Case(
        sizes=dict(N=2, C=4, H=3, W=5),
        attrs=dict(num_groups=2),
        values=dict(num_groups=lambda ctx: np.full(ctx.shape, ctx.attrs["num_groups"])),
        threads={"8x64x16x16/32": Run(sizes=dict(N=8, C=64, H=16, W=16), attrs=dict(num_groups=32)),
                 "1x4x150x150/2": Run(sizes=dict(N=1, C=4, H=150, W=150), attrs=dict(num_groups=2)),
                 "[2, 3, 7]/3": Run(shapes=dict(input=(2, 3, 7), scale=(3,), bias=(3,)), attrs=dict(num_groups=3),
                                    expect=dict(output=(2, 3, 7)))},
        empty={"N=0": Run(sizes=dict(N=0)), "H=0": Run(sizes=dict(H=0)),
               "C=0": Run(sizes=dict(C=0), attrs=dict(num_groups=1)),
               "[2, 0, 3]": Run(shapes=dict(input=(2, 0, 3), scale=(0,), bias=(0,)), attrs=dict(num_groups=1),
                                expect=dict(output=(2, 0, 3))),
               "[0, 4]": Run(shapes=dict(input=(0, 4), scale=(4,), bias=(4,)), expect=dict(output=(0, 4)))},
        inference={"all inputs": Run(), "no scale": Run(omit=("scale",), only=lambda s: optional(s, "scale")),
                "no scale, no bias": Run(omit=("scale", "bias"), only=lambda s: optional(s, "scale"))},
    ),
    "inverse": Case(
        sizes=dict(N=5, M=4),
        values=dict(input=well_conditioned),
        threads={f"{n}x{m}x{m}": Run(sizes=dict(N=n, M=m)) for n, m in [(4096, 4), (37, 3), (50, 33), (3, 70)]},
        empty={"N=0": Run(sizes=dict(N=0)), "M=0": Run(sizes=dict(N=2, M=0)),
               "[0, 0]": Run(shapes=dict(input=(0, 0)), expect=dict(output=(0, 0), info=())),
               "[3, 0, 2, 2]": Run(shapes=dict(input=(3, 0, 2, 2)), expect=dict(output=(3, 0, 2, 2), info=(3, 0)))},
        messages={"check_errors=2": "check_errors must be 0 or 1, got 2"},
    ),
    "multi_scale_deformable_attention": Case(
        sizes=dict(N=2, S=26, M=2, D=3, L=2, Lq=5, P=2, level_shapes=[(4, 5), (2, 3)]),
        values=dict(spatial_shapes=constant("level_shapes"), level_start_index=level_starts,
                    sampling_locations=uniform(-0.1, 1.1), attention_weights=uniform(0, 1)),
        threads={"333 queries": Run(sizes=dict(N=2, Lq=333, M=8, D=32, P=4, L=3, S=790,
                                               level_shapes=[(20, 30), (10, 15), (5, 8)]))},
        empty={"Lq=0": Run(sizes=dict(Lq=0)), "N=0": Run(sizes=dict(N=0)), "P=0": Run(sizes=dict(P=0))},
    ),
    "gather_topk": Case(
        sizes=dict(B=2, G0=10, C=4, G1=3),
        values=dict(indices=integers("-G0", "G0")),
        threads={"[2, 20000, 80]": Run(sizes=dict(B=2, G0=20000, C=80, G1=4000)),
                 "[2, 20000, 4]": Run(sizes=dict(B=2, G0=20000, C=4, G1=1000)),
                 "[8, 50000]": Run(sizes=dict(G0=50000), shapes=dict(data=(8, 50000), indices=(8, 40000)),
                                   expect=dict(output=(8, 40000)))},
        empty={"B=0": Run(sizes=dict(B=0)), "G1=0": Run(sizes=dict(G1=0)), "C=0": Run(sizes=dict(C=0)),
               "[2, 5, 4, 0]": Run(sizes=dict(G0=5), shapes=dict(data=(2, 5, 4, 0), indices=(2, 2)),
                                   expect=dict(output=(2, 2, 4, 0))),
               "[0]": Run(sizes=dict(G0=0), shapes=dict(data=(0,), indices=(0,)), expect=dict(output=(0,)))},
    ),
    "grid_priors": Case(
        sizes=dict(A=3, H=5, W=7),
        attrs=dict(stride_h=8, stride_w=16),
        threads={"200x336": Run(sizes=dict(A=3, H=200, W=336), attrs=dict(stride_h=4, stride_w=4))},
        empty={"A=0": Run(sizes=dict(A=0)), "H=0": Run(sizes=dict(H=0)), "W=0": Run(sizes=dict(W=0))},
    ),
    "bicubic_interpolate": Case(
        sizes=dict(N=2, C=3, H=5, W=7),
        attrs=dict(scale_factor=[2.0, 1.5]),
        threads={f"align_corners={a}": Run(sizes=dict(N=2, C=8, H=120, W=160), attrs=dict(scale_factor=[2.0, 2.0],
                                                                                          align_corners=a))
                 for a in (0, 1)},
        empty={"N=0": Run(sizes=dict(N=0)), "C=0": Run(sizes=dict(C=0))},
        messages={"align_corners=2": "align_corners must be 0 or 1, got 2"},
    ),
    "scaled_dot_product_attention": Case(
        sizes=dict(B=2, Nt=5, Ns=7, E=4, Ev=6),
        threads={"8x100x32": Run(sizes=dict(B=8, Nt=100, Ns=100, E=32, Ev=32), omit=("mask",)),
                 "8x100x32 masked": Run(sizes=dict(B=8, Nt=100, Ns=100, E=32, Ev=32))},
        empty={"B=0": Run(sizes=dict(B=0)), "Nt=0": Run(sizes=dict(Nt=0)), "Ns=0": Run(sizes=dict(Ns=0))},
    ),
}
