"""Grid priors through the built library in ORT (opbridge::GridPriors, mmdeploy::GridPriorsTRT),
against mmdet's single_level_grid_priors formula written here in torch (float32, as mmdet computes
it; mmdet is not installed) and in float64; the graph mmdeploy writes for TensorRT (Shape, Gather,
Unsqueeze, ConstantOfShape, GridPriorsTRT)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from graphs import one_node_model, run, run_error, session_error
from opbridge import manifest

IDENTITIES = manifest.load()["grid_priors"].identities
PROVIDER_DTYPES = ["int64", "int32", "float32", "float64"]


def priors_model(identity, stride_h=None, stride_w=None, provider_dtype="int64"):
    attrs = {k: v for k, v in (("stride_h", stride_h), ("stride_w", stride_w)) if v is not None}
    return one_node_model(identity, attrs, ["base_anchors", "h_provider", "w_provider"], ["output"],
                          input_types={"h_provider": provider_dtype, "w_provider": provider_dtype})


def run_priors(identity, base, height, width, stride_h, stride_w, provider_dtype="int64"):
    feeds = {"base_anchors": base, "h_provider": np.zeros(height, provider_dtype),
             "w_provider": np.zeros(width, provider_dtype)}
    (out,) = run(priors_model(identity, stride_h, stride_w, provider_dtype=provider_dtype), feeds)
    return out


def mmdet_grid_priors(base: torch.Tensor, feat_h: int, feat_w: int, stride_h: int, stride_w: int) -> torch.Tensor:
    """mmdet's AnchorGenerator.single_level_grid_priors (as mmdeploy's GridPriorsTRTOp.forward spells it)."""
    shift_x = torch.arange(0, feat_w).to(base.dtype) * stride_w
    shift_y = torch.arange(0, feat_h).to(base.dtype) * stride_h
    shift_xx = shift_x.repeat(shift_y.shape[0])
    shift_yy = shift_y.view(-1, 1).repeat(1, shift_x.shape[0]).view(-1)
    shifts = torch.stack([shift_xx, shift_yy, shift_xx, shift_yy], dim=-1)
    return (base[None, :, :] + shifts[:, None, :]).view(-1, 4)


def float64_reference(base: np.ndarray, feat_h: int, feat_w: int, stride_h: int, stride_w: int) -> np.ndarray:
    ys, xs = np.meshgrid(np.arange(feat_h), np.arange(feat_w), indexing="ij")
    shifts = np.stack([xs * stride_w, ys * stride_h, xs * stride_w, ys * stride_h], -1).reshape(-1, 1, 4)
    return (base.astype(np.float64)[None] + shifts).reshape(-1, 4)


def base_anchors(rng, count):
    """mmdet-like base anchors: centred on 0, sides of a few strides, with random fractions."""
    half = rng.uniform(2, 200, (count, 2))
    return np.concatenate([-half, half], 1)[:, [0, 1, 2, 3]].astype(np.float32) + rng.uniform(-1, 1, (count, 4)).astype(np.float32)


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("anchors,height,width,stride_h,stride_w", [
    (3, 5, 7, 8, 8), (9, 100, 168, 8, 8), (1, 1, 1, 4, 4), (3, 200, 336, 4, 4), (9, 7, 11, 128, 128), (2, 3, 40, 16, 4),
    (4, 13, 3, 1, 32), (3, 6, 5, 0, -8)])
def test_matches_mmdet_formula_and_float64(identity, anchors, height, width, stride_h, stride_w):
    rng = np.random.default_rng(anchors * 1000 + height)
    base = base_anchors(rng, anchors)
    out = run_priors(identity, base, height, width, stride_h, stride_w)
    expected = mmdet_grid_priors(torch.from_numpy(base), height, width, stride_h, stride_w).numpy()
    assert out.dtype == np.float32 and out.shape == (height * width * anchors, 4)
    np.testing.assert_array_equal(out, expected)  # bit for bit: one float32 addition per output
    np.testing.assert_array_equal(out, float64_reference(base, height, width, stride_h, stride_w).astype(np.float32))


@pytest.mark.parametrize("provider_dtype", PROVIDER_DTYPES)
def test_provider_dtypes_and_values_do_not_matter(provider_dtype):
    base = base_anchors(np.random.default_rng(1), 3)
    expected = run_priors("opbridge::GridPriors", base, 4, 6, 8, 16)
    feeds = {"base_anchors": base, "h_provider": np.arange(4).astype(provider_dtype),
             "w_provider": np.full(6, 77).astype(provider_dtype)}
    (out,) = run(priors_model("opbridge::GridPriors", 8, 16, provider_dtype=provider_dtype), feeds)
    np.testing.assert_array_equal(out, expected)


def test_default_strides_are_one():
    base = base_anchors(np.random.default_rng(2), 2)
    feeds = {"base_anchors": base, "h_provider": np.zeros(3, np.int64), "w_provider": np.zeros(4, np.int64)}
    (out,) = run(priors_model("mmdeploy::GridPriorsTRT"), feeds)
    np.testing.assert_array_equal(out, mmdet_grid_priors(torch.from_numpy(base), 3, 4, 1, 1).numpy())


def test_nan_and_infinite_base_anchors_propagate():
    base = np.array([[np.nan, 0, np.inf, -np.inf]], np.float32)
    out = run_priors("opbridge::GridPriors", base, 2, 2, 8, 8)
    np.testing.assert_array_equal(out, mmdet_grid_priors(torch.from_numpy(base), 2, 2, 8, 8).numpy())


def test_mmdeploy_graph_as_mmdeploy_writes_it():
    """GridPriorsTRTOp.symbolic: the feature map's H and W unsqueezed into ConstantOfShape int64 zeros."""
    base = base_anchors(np.random.default_rng(4), 9)
    zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "two"], ["h"], axis=0),
        helper.make_node("Gather", ["shape", "three"], ["w"], axis=0),
        helper.make_node("Unsqueeze", ["h", "axes"], ["h1"]),
        helper.make_node("Unsqueeze", ["w", "axes"], ["w1"]),
        helper.make_node("ConstantOfShape", ["h1"], ["zero_h"], value=zero),
        helper.make_node("ConstantOfShape", ["w1"], ["zero_w"], value=zero),
        helper.make_node("GridPriorsTRT", ["base", "zero_h", "zero_w"], ["output"], domain="mmdeploy",
                         stride_h=16, stride_w=8),
    ]
    graph = helper.make_graph(
        nodes, "mmdeploy_grid_priors",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, "h", "w"])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(base, "base"), numpy_helper.from_array(np.array(2, np.int64), "two"),
                     numpy_helper.from_array(np.array(3, np.int64), "three"),
                     numpy_helper.from_array(np.array([0], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("mmdeploy", 1)],
                              ir_version=8)
    for h, w in ((25, 38), (1, 1), (50, 76)):
        (out,) = run(model, {"x": np.zeros((1, 3, h, w), np.float32)})
        np.testing.assert_array_equal(out, mmdet_grid_priors(torch.from_numpy(base), h, w, 16, 8).numpy())


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shapes,message", [
    (((9, 5), (2,), (3,)), "base_anchors must have shape [A, 4] (x1, y1, x2, y2 per base anchor), got [9, 5]"),
    (((4,), (2,), (3,)), "base_anchors must have shape [A, 4] (x1, y1, x2, y2 per base anchor), got [4]"),
    (((9, 4), (2, 1), (3,)), "h_provider must have rank 1 ([H]: its length is the grid's height), got shape [2, 1]"),
    (((9, 4), (2,), ()), "w_provider must have rank 1 ([W]: its length is the grid's width), got shape []"),
])
def test_shape_errors(identity, shapes, message):
    feeds = {"base_anchors": np.zeros(shapes[0], np.float32), "h_provider": np.zeros(shapes[1], np.int64),
             "w_provider": np.zeros(shapes[2], np.int64)}
    assert f"{identity}: {message}" in run_error(priors_model(identity, 8, 8), feeds)


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("attrs,message", [
    ({"stride_h": 1 << 25}, "stride_h must be in [-2^24, 2^24] (exact in float32), got 33554432"),
    ({"stride_w": -(1 << 25)}, "stride_w must be in [-2^24, 2^24] (exact in float32), got -33554432"),
])
def test_attribute_errors(identity, attrs, message):
    model = one_node_model(identity, attrs, ["base_anchors", "h_provider", "w_provider"], ["output"],
                           input_types={"h_provider": "int64", "w_provider": "int64"})
    assert f"{identity}: {message}" in session_error(model)
