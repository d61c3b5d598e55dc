"""MultiLevelRoiAlign through the built library in ORT (opbridge::MultiLevelRoiAlign,
mmdeploy::MMCVMultiLevelRoiAlign) and the eager PyTorch op (opbridge.ops.multi_level_roi_align),
against a reference written here from the spec: mmdet's level mapper and roi_rescale over float32
scalars, then each RoI pooled in float64 by the spec RoIAlign (opbridge.ops.roi_align_reference,
independent of the C++ kernel). Also the graph mmdeploy writes, and export round trips with both
exporters."""

from __future__ import annotations

import itertools
import math

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge
import opbridge.ops
from graphs import EXPORTERS, assert_close, cast_around, one_node_model, round_to, run, run_error, run_half
from multi_level_cases import bad_attribute_cases, check_bad_attribute, check_empty_stride_list, check_feature_map_rules
from opbridge import manifest
from opbridge.export import custom_nodes
from opbridge.ops.roi_align import roi_align_reference
from opbridge.tolerances import same_bits_but_nan, tolerance

f32 = np.float32
NAN, INF = float("nan"), float("inf")
IDENTITIES = manifest.load()["multi_level_roi_align"].identities
POOL_MODE = {"max": 0, "avg": 1}  # the node's pool_mode codes
STRIDES = (4.0, 8.0, 16.0, 32.0, 64.0)
IMAGE = (256, 320)  # (height, width)


# --- data ------------------------------------------------------------------------------------------


def pyramid(levels, batch=2, channels=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, channels, IMAGE[0] // int(s), IMAGE[1] // int(s), generator=g) for s in STRIDES[:levels]]


def spec_level_value(box, finest_scale):
    """log2(scale / finest_scale + 1e-6) in float64, to keep random boxes off level boundaries."""
    area = (box[2] - box[0]) * (box[3] - box[1])
    return math.log2(math.sqrt(area) / finest_scale + 1e-6) if area > 0 else -INF


def boxes_of_every_level(count, seed=0, batch=2, finest_scale=56):
    """Boxes with sides from 2 to 1400 px (levels 0 to 4 with finest_scale 56, the last ones
    clamped on fewer levels), many partly and some wholly outside the image; then edge cases: a
    box of each level from 1 to 4 (the last two reaching past the image), a zero-size box, one
    with a NaN coordinate (row -4), one with an inverted side (a negative area: no level; row -3),
    one inverted on both sides (a positive area), one far outside. First column: batch index."""
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < count:
        x, y = rng.uniform(-40, IMAGE[1]), rng.uniform(-40, IMAGE[0])
        w, h = np.exp(rng.uniform(np.log(2), np.log(1400), size=2))
        box = [f32(x), f32(y), f32(x + w), f32(y + h)]
        t = spec_level_value([float(v) for v in box], finest_scale)
        if abs(t - round(t)) < 1e-4:  # within reach of log2's last-bit differences: draw again
            continue
        rows.append([float(rng.integers(0, batch))] + [float(v) for v in box])
    rows += [[1, 100, 60, 250, 200], [0, 20, 10, 330, 250], [0, 50, 40, 650, 700], [1, -100, -100, 1100, 1000],
             [0, 30, 40, 30, 40], [1, 10, NAN, 50, 60], [0, 60, 20, 20, 90],
             [1, 90, 80, 40, 30], [0, 900, 700, 990, 760]]
    return torch.tensor(rows, dtype=torch.float32)


# --- the reference ---------------------------------------------------------------------------------


def spec_level(box, finest_scale, levels):
    """mmdet's map_roi_levels over float32 scalars; None when the level is NaN (no level)."""
    x1, y1, x2, y2 = (f32(v) for v in box)
    with np.errstate(invalid="ignore"):
        scale = np.sqrt((x2 - x1) * (y2 - y1))
        value = np.floor(np.log2(scale / f32(finest_scale) + f32(1e-6)))
    if np.isnan(value):
        return None
    return int(min(max(value, f32(0)), f32(levels - 1)))


def spec_rescale(box, factor):
    """mmdet's roi_rescale over float32 scalars: the centre stays, the sides are scaled."""
    x1, y1, x2, y2 = (f32(v) for v in box)
    f = f32(factor)
    cx, cy = (x1 + x2) * f32(0.5), (y1 + y2) * f32(0.5)
    new_w, new_h = (x2 - x1) * f, (y2 - y1) * f
    return [cx - new_w * f32(0.5), cy - new_h * f32(0.5), cx + new_w * f32(0.5), cy + new_h * f32(0.5)]


def reference(features, rois, output_size, strides, sampling_ratio=2, pool_mode="max", aligned=False,
              finest_scale=56, roi_scale_factor=-1.0):
    """The op's spec: with one map every RoI is pooled from it as given; otherwise each RoI's level
    from its box as given, no level -> a zero row, the box rescaled when the factor is > 0 and not
    1, then RoIAlign at 1 / stride, in float64."""
    levels = len(features)
    out = np.zeros((rois.shape[0], features[0].shape[1], *output_size))
    rois32 = rois.numpy().astype(f32)
    for r, roi in enumerate(rois32):
        box = list(roi[1:])
        if levels == 1:
            level = 0
        else:
            level = spec_level(box, finest_scale, levels)
            if level is None:
                continue
            if roi_scale_factor > 0 and roi_scale_factor != 1:
                box = spec_rescale(box, roi_scale_factor)
        one = torch.tensor([[float(roi[0])] + [float(v) for v in box]], dtype=torch.float64)
        scale = float(f32(1.0 / strides[level]))
        out[r] = roi_align_reference(features[level].double(), one, *output_size, scale, sampling_ratio, aligned,
                                     pool_mode)[0].numpy()
    return out


# --- models ----------------------------------------------------------------------------------------


def mlra_model(levels, identity=IDENTITIES[0], strides=None, dtype="float32", **attrs):
    """The node with its inputs and output in `dtype` (bfloat16 behind casts from and to float32)."""
    attrs = dict(featmap_strides=list(STRIDES[:levels] if strides is None else strides), **attrs)
    attrs = {k: v for k, v in attrs.items() if v is not None}
    inputs = ["rois"] + [f"f{k}" for k in range(levels)]
    model = one_node_model(identity, attrs, inputs, ["output"], input_types={name: dtype for name in inputs})
    return cast_around(model, dtype, set(inputs), {"output"}) if dtype == "bfloat16" else model


def feeds_of(features, rois):
    return {"rois": rois.numpy(), **{f"f{k}": f.numpy() for k, f in enumerate(features)}}


def eager_comparison(pool_mode):
    """How close ORT is to the eager op: "avg" eagerly is torchvision's roi_align, the kernel's
    float32 formulas; "max" is the spec RoIAlign in float32, whose sample coordinates round
    differently from the kernel's (as the float64 reference's do)."""
    return "same_precision" if pool_mode == "avg" else "float64_reference"


def well_formed(rois):
    """Rows the eager op's torchvision and spec RoIAlign take without undefined behaviour: finite
    and not inverted."""
    finite = torch.isfinite(rois).all(dim=1)
    return finite & (rois[:, 3] >= rois[:, 1]) & (rois[:, 4] >= rois[:, 2])


# --- numerics --------------------------------------------------------------------------------------


SWEEP = list(itertools.product([1, 2, 3, 4, 5], ["avg", "max"], [0, 1], [0, 2], [-1.0, 1.5]))


@pytest.mark.parametrize("levels,pool_mode,aligned,sampling_ratio,factor", SWEEP)
def test_matches_reference(levels, pool_mode, aligned, sampling_ratio, factor):
    features = pyramid(levels, seed=levels)
    rois = boxes_of_every_level(24, seed=levels + 7 * aligned + sampling_ratio)
    attrs = dict(output_height=7, output_width=5, pool_mode=POOL_MODE[pool_mode], sampling_ratio=sampling_ratio,
                 aligned=aligned, roi_scale_factor=factor)
    model = mlra_model(levels, **attrs)
    (actual,) = run(model, feeds_of(features, rois), threads=1)
    (threaded,) = run(model, feeds_of(features, rois), threads=2)
    np.testing.assert_array_equal(threaded, actual)  # bit-identical for any thread count
    assert actual.shape == (rois.shape[0], 3, 7, 5)
    expected = reference(features, rois, (7, 5), STRIDES, sampling_ratio, pool_mode, aligned, 56, factor)
    assert_close(actual, expected, "float64_reference")
    if levels > 1:  # the NaN box and the box with one inverted side have no level: zero rows
        np.testing.assert_array_equal(actual[-4:-2], 0.0)
    else:  # one map: pooled as given (RoIAlign's NaN row for the NaN box)
        assert np.isnan(actual[-4]).all()
    # The eager op (mmdet's forward over torchvision / opbridge RoIAlign) on the well-formed rows.
    keep = well_formed(rois)
    eager = opbridge.ops.multi_level_roi_align(features, rois[keep], (7, 5), STRIDES[:levels], sampling_ratio,
                                               pool_mode, bool(aligned), 56, None if factor < 0 else factor)
    assert_close(actual[keep.numpy()], eager.numpy(), eager_comparison(pool_mode))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("levels,pool_mode,factor", [(1, "avg", -1.0), (4, "avg", 1.5), (4, "max", -1.0)])
def test_half_is_the_float32_result_rounded_once(dtype, levels, pool_mode, factor):
    """float16 and bfloat16 maps and RoIs: bit for bit the float32 op's output on the half values
    (the level and the rescale from the half boxes), rounded once; and the spec reference (float64
    pooling) on the half values, rounded, within the half tolerance."""
    features = pyramid(levels, seed=30 + levels)
    rois = boxes_of_every_level(40, seed=31 + levels)
    attrs = dict(output_height=7, output_width=5, pool_mode=POOL_MODE[pool_mode], sampling_ratio=2, aligned=1,
                 roi_scale_factor=factor)
    feeds = feeds_of(features, rois)
    rounded = {name: round_to(value, dtype) for name, value in feeds.items()}
    for identity in IDENTITIES:
        (got,) = run_half(mlra_model(levels, identity, dtype=dtype, **attrs), feeds, dtype)
        (exact,) = run(mlra_model(levels, identity, **attrs), rounded)
        assert same_bits_but_nan(round_to(exact, dtype), got), identity
    half_features = [torch.from_numpy(rounded[f"f{k}"]) for k in range(levels)]
    expected = reference(half_features, torch.from_numpy(rounded["rois"]), (7, 5), STRIDES[:levels], 2, pool_mode,
                         True, roi_scale_factor=factor)
    tol = tolerance("half", dtype)
    np.testing.assert_allclose(got, round_to(expected, dtype), rtol=tol.rtol, atol=tol.atol)


def test_every_level_is_used_and_clamped():
    """Every sweep case's boxes reach every level of 5, and levels above the last clamp to it."""
    for levels, _, aligned, sampling_ratio, _ in SWEEP:
        rois = boxes_of_every_level(24, seed=levels + 7 * aligned + sampling_ratio).numpy()
        assert {spec_level(list(r[1:]), 56, 5) for r in rois} == {0, 1, 2, 3, 4, None}
        assert {spec_level(list(r[1:]), 56, 3) for r in rois} == {0, 1, 2, None}


@pytest.mark.parametrize("side,level", [
    (2.0, 0), (111.0, 0), (float(np.nextafter(f32(112), f32(0))), 1), (112.0, 1), (223.0, 1), (224.0, 2),
    (447.0, 2), (448.0, 3), (895.0, 3), (896.0, 3), (5000.0, 3), (0.0, 0),
])
def test_each_box_goes_to_mmdets_level(side, level):
    """Square boxes at the level boundaries (finest_scale 56, 4 maps), on maps whose every value is
    the level's number + 1: the pooled value says which map the box went to. One ulp below 112
    goes to level 1: mmdet's 1e-6 lifts it."""
    features = [torch.full((1, 1, 64, 64), float(k + 1)) for k in range(4)]
    rois = torch.tensor([[0, 0, 0, side, side]], dtype=torch.float32)
    model = mlra_model(4, strides=[1.0, 2.0, 4.0, 8.0], output_height=1, output_width=1, pool_mode=0, sampling_ratio=1,
                       aligned=0)
    (actual,) = run(model, feeds_of(features, rois))
    # The single sample is inside the map (the level's value) or, for the boxes reaching past
    # x, y = 64 * stride, outside (0).
    centre = side / 2 / [1, 2, 4, 8][level]
    assert actual[0, 0, 0, 0] == pytest.approx(level + 1 if centre <= 64 else 0, rel=1e-6)
    assert spec_level([0, 0, side, side], 56, 4) == level


def test_finest_scale_attribute():
    features = pyramid(4)
    rois = boxes_of_every_level(30, seed=3, finest_scale=28)
    model = mlra_model(4, finest_scale=28, output_height=3, output_width=3, pool_mode=1)
    (actual,) = run(model, feeds_of(features, rois))
    assert_close(actual, reference(features, rois, (3, 3), STRIDES, 2, "avg", False, 28), "float64_reference")
    (default,) = run(mlra_model(4, output_height=3, output_width=3, pool_mode=1), feeds_of(features, rois))
    assert not np.array_equal(np.nan_to_num(actual), np.nan_to_num(default))


@pytest.mark.parametrize("factor", [1.0, 0.0, -1.0, -3.5])
def test_factor_one_and_non_positive_leave_boxes_as_given(factor):
    """1 is what mmdeploy's exporter writes for mmdet's roi_scale_factor=None."""
    features = pyramid(3)
    rois = boxes_of_every_level(12, seed=4)
    (as_given,) = run(mlra_model(3), feeds_of(features, rois))
    (actual,) = run(mlra_model(3, roi_scale_factor=factor), feeds_of(features, rois))
    np.testing.assert_array_equal(actual, as_given)


def test_rescale_is_mmdets_not_the_plugins():
    """roi_scale_factor 2 on a 10 x 10 box: mmdet's sides become 20 x 20 (the plugin's legacy +1
    convention gives 21 x 21). On a map whose value is its x coordinate, 1 x 1 avg pooling with
    fixed samples gives the box's centre; max gives the right-most sample, which tells the width."""
    ramp = torch.arange(64, dtype=torch.float32).expand(1, 1, 64, 64).contiguous()
    features = [ramp, ramp.clone()]
    rois = torch.tensor([[0, 20, 20, 30, 30]], dtype=torch.float32)  # level 0 (scale 10)
    model = mlra_model(2, strides=[1.0, 2.0], output_height=1, output_width=1, pool_mode=0, sampling_ratio=2,
                       aligned=0, roi_scale_factor=2.0)
    (actual,) = run(model, feeds_of(features, rois))
    # mmdet: x in [15, 35], samples at 20 and 30: max 30. (The plugin: [14.5, 35.5], max 30.25.)
    assert actual[0, 0, 0, 0] == 30.0


def test_eager_empty_roi_set():
    for levels in (1, 3):
        eager = opbridge.ops.multi_level_roi_align(pyramid(levels), torch.zeros((0, 5)), 7, STRIDES[:levels])
        assert eager.shape == (0, 3, 7, 7)


def test_nan_in_a_feature_map_stays_in_its_rows():
    """mmdet's training-time `feats[i].sum() * 0` for unused maps is not reproduced: a NaN in a map
    no RoI uses changes nothing."""
    features = pyramid(3)
    rois = torch.tensor([[0.0, 10, 10, 50, 50], [1, 20, 30, 60, 90]])  # both on level 0
    (clean,) = run(mlra_model(3), feeds_of(features, rois))
    features[2][0, 0, 0, 0] = NAN
    (actual,) = run(mlra_model(3), feeds_of(features, rois))
    np.testing.assert_array_equal(actual, clean)
    assert not np.isnan(actual).any()


# --- the graph mmdeploy writes ---------------------------------------------------------------------


def mmdeploy_graph(output_size, pool_mode, sampling_ratio, aligned, strides):
    """mmdeploy's MultiLevelRoiAlign.symbolic for SingleRoIExtractor (TensorRT backend), as it
    writes it: rois, then the feature maps; every attribute, in its order, with its swap of the
    output size; roi_scale_factor 1.0 for None; opset 11 and a dynamic number of rois."""
    node = helper.make_node(
        "MMCVMultiLevelRoiAlign", ["rois"] + [f"f{k}" for k in range(len(strides))], ["bbox_feats"],
        domain="mmdeploy", output_height=output_size[1], output_width=output_size[0],
        pool_mode=0 if pool_mode == "max" else 1, sampling_ratio=sampling_ratio, roi_scale_factor=1.0,
        finest_scale=56, featmap_strides=[float(s) for s in strides], aligned=int(aligned))
    inputs = [helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["num_rois", 5])]
    inputs += [helper.make_tensor_value_info(f"f{k}", TensorProto.FLOAT, [2, 3, IMAGE[0] // int(s), IMAGE[1] // int(s)])
               for k, s in enumerate(strides)]
    graph = helper.make_graph([node], "roi_extractor", inputs,
                              [helper.make_tensor_value_info("bbox_feats", TensorProto.FLOAT,
                                                             ["num_rois", 3, output_size[1], output_size[0]])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)],
                             ir_version=7)


@pytest.mark.parametrize("pool_mode,aligned", [("avg", True), ("max", False)])
def test_graph_as_mmdeploy_writes_it(pool_mode, aligned):
    """mmdet's Faster R-CNN config (RoIAlign output_size 7, sampling_ratio 0, strides 4 to 32), and
    a non-square output size, which mmdeploy's exporter writes transposed: the node asks for
    output_size[1] x output_size[0], and that is what runs."""
    features = pyramid(4)
    rois = boxes_of_every_level(20, seed=11)
    for output_size in [(7, 7), (14, 6)]:
        model = mmdeploy_graph(output_size, pool_mode, 0, aligned, STRIDES[:4])
        onnx.checker.check_model(model)
        (actual,) = run(model, feeds_of(features, rois))
        transposed = (output_size[1], output_size[0])
        assert actual.shape == (rois.shape[0], 3, *transposed)
        expected = reference(features, rois, transposed, STRIDES, 0, pool_mode, aligned, 56, 1.0)
        assert_close(actual, expected, "float64_reference")


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("attrs,message", bad_attribute_cases())
@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_attributes_fail_at_session_creation(identity, attrs, message):
    check_bad_attribute(identity, attrs, message)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_empty_stride_list(identity):
    check_empty_stride_list(identity)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_inputs_fail_at_run_time(identity):
    features = pyramid(2)
    rois = boxes_of_every_level(4)
    model = mlra_model(2, identity)
    bad_batch = rois.clone()
    bad_batch[1, 0] = 2
    cases = [
        (feeds_of(features, bad_batch),
         "rois[1, 0] is the batch index and must lie in [0, 2) after truncation toward zero, got 2"),
        (feeds_of(features, rois[:, :4]),
         f"rois must have shape [R, 5] (batch_index, x1, y1, x2, y2), got shape [{rois.shape[0]}, 4]"),
    ]
    for feeds, message in cases:
        assert f"{identity}: {message}" in run_error(model, feeds)
    check_feature_map_rules(identity, mlra_model, feeds_of, pyramid, rois)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_absurd_sampling_grid_names_the_roi_row(identity):
    features = pyramid(2)
    rois = torch.tensor([[0.0, 0, 0, 10, 10], [0, 0, 0, 1e7, 1e7]])
    model = mlra_model(2, identity, output_height=1, output_width=1, sampling_ratio=0)
    message = run_error(model, feeds_of(features, rois))
    assert f"{identity}: roi 1 needs a 1048577x1048577 sampling grid per bin, more than 2^20 sample rows" in message



def test_python_argument_errors():
    features, rois = pyramid(2), boxes_of_every_level(3)
    mlra = opbridge.ops.multi_level_roi_align
    with pytest.raises(ValueError, match=r"2 feature maps and 3 strides; they must agree, 1 to 10"):
        mlra(features, rois, 7, [4, 8, 16])
    with pytest.raises(ValueError, match=r"featmap_strides must be finite numbers > 0, got \[4.0, 0.0\]"):
        mlra(features, rois, 7, [4, 0])
    with pytest.raises(ValueError, match='pool_mode must be "avg" or "max", got "mean"'):
        mlra(features, rois, 7, [4, 8], pool_mode="mean")
    with pytest.raises(ValueError, match="finest_scale must be >= 1, got 0"):
        mlra(features, rois, 7, [4, 8], finest_scale=0)
    with pytest.raises(ValueError, match="roi_scale_factor must be None or a finite number > 0, got -1"):
        mlra(features, rois, 7, [4, 8], roi_scale_factor=-1)
    with pytest.raises(ValueError, match=r"rois must have shape \[R, 5\], got \[12, 4\]"):
        mlra(features, rois[:, :4], 7, [4, 8])


# --- export round trips ----------------------------------------------------------------------------


class RoiExtractor(torch.nn.Module):
    """A SingleRoIExtractor's forward as mmdet configures it."""

    def __init__(self, levels=4, output_size=(7, 5), pool_mode="avg", aligned=True, sampling_ratio=0,
                 roi_scale_factor=None):
        super().__init__()
        self.args = dict(output_size=output_size, featmap_strides=STRIDES[:levels], sampling_ratio=sampling_ratio,
                         pool_mode=pool_mode, aligned=aligned, finest_scale=56, roi_scale_factor=roi_scale_factor)

    def forward(self, features, rois):
        return opbridge.ops.multi_level_roi_align(features, rois, **self.args)


def node_attributes(proto, domain, op_type):
    node = next(n for n in proto.graph.node if n.domain == domain)
    assert node.op_type == op_type
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}, list(node.input)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat", [None, "mmdeploy"])
@pytest.mark.parametrize("pool_mode,factor", [("avg", None), ("max", 1.5)])
def test_export_round_trip(exporter, compat, pool_mode, factor):
    model = RoiExtractor(4, (7, 5), pool_mode, roi_scale_factor=factor)
    features = pyramid(4)
    rois = boxes_of_every_level(6, seed=1)[:6]
    proto = opbridge.export(model, (features, rois), exporter=exporter, compat=compat,
                            dynamic_axes={"rois": {0: "num_rois"}})
    identity = "opbridge::MultiLevelRoiAlign" if compat is None else "mmdeploy::MMCVMultiLevelRoiAlign"
    assert custom_nodes(proto) == [identity]
    attrs, inputs = node_attributes(proto, *identity.split("::"))
    assert attrs == dict(output_height=7, output_width=5, pool_mode=0 if pool_mode == "max" else 1, sampling_ratio=0,
                         featmap_strides=list(STRIDES[:4]), roi_scale_factor=-1.0 if factor is None else 1.5,
                         finest_scale=56, aligned=1)
    assert len(inputs) == 5
    session = opbridge.create_session(proto)
    names = [i.name for i in session.get_inputs()]
    for count, seed in [(6, 1), (0, 2), (17, 3)]:
        rois = boxes_of_every_level(count, seed=seed)[:count]
        (actual,) = session.run(None, dict(zip(names, [f.numpy() for f in features] + [rois.numpy()])))
        expected = model(features, rois)
        assert actual.shape == (count, 3, 7, 5)
        assert_close(actual, expected.numpy(), eager_comparison(pool_mode))


def test_export_of_one_and_six_levels():
    """One map (mmdet pools every RoI from it); six maps: the legacy exporter writes them, the
    dynamo exporter's translations stop at five and say so."""
    rois = boxes_of_every_level(8, seed=2)[:8]
    single = RoiExtractor(1, (3, 3), "avg", roi_scale_factor=2.0)
    features = pyramid(1)
    for exporter in EXPORTERS:
        proto = opbridge.export(single, (features, rois), exporter=exporter)
        (actual,) = opbridge.create_session(proto).run(None, {i.name: v.numpy() for i, v in zip(
            opbridge.create_session(proto).get_inputs(), features + [rois])})
        assert_close(actual, single(features, rois).numpy(), "same_precision")
    strides = [4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
    features = [torch.randn(2, 3, 512 // int(s), 512 // int(s)) for s in strides]

    class Six(torch.nn.Module):
        def forward(self, features, rois):
            return opbridge.ops.multi_level_roi_align(features, rois, 2, strides, pool_mode="avg")

    proto = opbridge.export(Six(), (features, rois), exporter="legacy")
    session = opbridge.create_session(proto)
    (actual,) = session.run(None, {i.name: v.numpy() for i, v in zip(session.get_inputs(), features + [rois])})
    assert_close(actual, Six()(features, rois).numpy(), "same_precision")
    with pytest.raises(Exception, match="the dynamo exporter takes at most 5"):
        opbridge.export(Six(), (features, rois), exporter="dynamo")


def test_export_has_no_mmcv_identity():
    with pytest.raises(ValueError, match=r"opbridge::MultiLevelRoiAlign has no mmcv identity .*\(mmcv has none\)"):
        opbridge.export(RoiExtractor(2), (pyramid(2), boxes_of_every_level(3)), exporter="legacy", compat="mmcv")


def test_work_per_call_is_limited():
    """Two RoIs of the first level, each within its budget (a fixed 40,000 x 40,000 grid), over 32
    channels: 1.0e11 samples x channels for the call, past the limit of 2^36 (core/work_limits.h),
    refused before any pooling (on the GPU: NaN throughout)."""
    model = mlra_model(2, output_height=1, output_width=1, sampling_ratio=40000)
    feeds = {"rois": np.array([[0, 0, 0, 10, 10], [0, 5, 5, 15, 15]], np.float32),
             "f0": np.ones((1, 32, 4, 4), np.float32), "f1": np.ones((1, 32, 2, 2), np.float32)}
    assert (f"{IDENTITIES[0]}: the rois need at least 3200000000 samples for each of 32 channels, more than the "
            "limit of 2^36 (68719476736) samples x channels per call") in run_error(model, feeds)
