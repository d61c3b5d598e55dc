"""MultiLevelRotatedRoiAlign through the built library in ORT (opbridge::MultiLevelRotatedRoiAlign,
mmdeploy::MMCVMultiLevelRotatedRoiAlign) and the eager PyTorch op
(opbridge.ops.multi_level_rotated_roi_align), against a reference written here from the spec: the
finest_scale level rule on sqrt(w * h) and the w, h rescale in float64, then each RoI pooled in
float64 by the spec RoIAlignRotated (rotated_reference.roi_align_rotated_reference, independent of
the C++ kernel). Also the graph mmdeploy writes, and export round trips with both exporters."""

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
from graphs import EXPORTERS, assert_close, one_node_model, run, run_error
from multi_level_cases import bad_attribute_cases, check_bad_attribute, check_empty_stride_list, check_feature_map_rules
from opbridge import manifest
from opbridge.export import custom_nodes
from rotated_reference import roi_align_rotated_reference

f32 = np.float32
NAN, INF = float("nan"), float("inf")
IDENTITIES = manifest.load()["multi_level_rotated_roi_align"].identities
STRIDES = (4.0, 8.0, 16.0, 32.0, 64.0)
IMAGE = (256, 320)  # (height, width)
OP = "multi_level_rotated_roi_align"


# --- data ------------------------------------------------------------------------------------------


def pyramid(levels, batch=2, channels=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, channels, IMAGE[0] // int(s), IMAGE[1] // int(s), generator=g) for s in STRIDES[:levels]]


def spec_level_value(w, h, finest_scale):
    """log2(sqrt(w * h) / finest_scale + 1e-6) in float64; NaN without a level."""
    area = w * h
    if not area >= 0:
        return NAN
    return math.log2(math.sqrt(area) / finest_scale + 1e-6)


def spec_level(roi, finest_scale, levels):
    """The finest_scale rule (mmrotate's map_roi_levels) in float64: None without a level (NaN)."""
    value = spec_level_value(float(roi[3]), float(roi[4]), finest_scale)
    if math.isnan(value):
        return None
    return int(min(max(math.floor(value), 0), levels - 1))


# Rows appended to every random set (their indices from the end): a box of each level 1 to 4 (at
# angles pi / 2, -pi / 2 and above 2 pi; centres off the pixel grid, so that no sample lies on the
# map's edge, where float32 and float64 may fall on either side), a zero-size box, a NaN width (no level), a negative
# width (negative area: no level), both sides negative (positive area: level 0), a box far
# outside, a NaN angle (level 0, a NaN row).
EDGE_ROWS = [[1, 161.3, 101.7, 150, 120, 0.5], [0, 151.3, 118.9, 300, 250, -math.pi / 2],
             [0, 201.7, 149.3, 600, 500, math.pi / 2], [1, 160.9, 127.3, 1200, 1100, 7.0], [0, 30, 40, 0, 0, 0.2], [1, 50, 60, NAN, 20, 0.0],
             [0, 60, 20, -30, 40, 0.3], [1, 90, 80, -40, -30, 1.0], [0, 2000, 1500, 60, 40, 0.7],
             [0, 50, 50, 30, 30, NAN]]
NAN_WIDTH, NEGATIVE_WIDTH, NAN_ANGLE = -5, -4, -1


def rotated_boxes(count, seed=0, batch=2, finest_scale=56):
    """Rotated boxes with sides from 2 to 1400 px (levels 0 to 4 with finest_scale 56), angles in
    [-4, 8) radians, centres from 40 px outside the image to inside (many partly outside); then
    EDGE_ROWS. First column: batch index."""
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < count:
        cx, cy = rng.uniform(-40, IMAGE[1] + 40), rng.uniform(-40, IMAGE[0] + 40)
        w, h = (float(f32(v)) for v in np.exp(rng.uniform(np.log(2), np.log(1400), size=2)))
        t = spec_level_value(w, h, finest_scale)
        if abs(t - round(t)) < 1e-4:  # within reach of float32 rounding of the level: draw again
            continue
        rows.append([float(rng.integers(0, batch)), cx, cy, w, h, rng.uniform(-4, 8)])
    return torch.tensor(rows + EDGE_ROWS, dtype=torch.float32)


# --- the reference ---------------------------------------------------------------------------------


def sample_on_an_edge(roi, height, width, output_size, spatial_scale, sampling_ratio, aligned, clockwise):
    """Whether a sample point of the RoI lies within 1e-4 px of the lines x = -1, x = width,
    y = -1 or y = height, where mmcv's rule jumps (a point just outside adds nothing, one just
    inside adds an edge pixel): there float32 and float64 may fall on either side."""
    _, cx, cy, w, h, theta = (float(v) for v in roi)
    if not all(math.isfinite(v) for v in (cx, cy, w, h, theta)):
        return False
    offset = 0.5 if aligned else 0.0
    cx, cy, w, h = cx * spatial_scale - offset, cy * spatial_scale - offset, w * spatial_scale, h * spatial_scale
    if not aligned:
        w, h = max(w, 1.0), max(h, 1.0)
    theta = -theta if clockwise else theta
    out_h, out_w = output_size
    grid_h = sampling_ratio if sampling_ratio > 0 else max(math.ceil(h / out_h), 0)
    grid_w = sampling_ratio if sampling_ratio > 0 else max(math.ceil(w / out_w), 0)
    yy = -h / 2 + (np.arange(out_h * grid_h) + 0.5) * h / out_h / max(grid_h, 1)
    xx = -w / 2 + (np.arange(out_w * grid_w) + 0.5) * w / out_w / max(grid_w, 1)
    y = yy[:, None] * math.cos(theta) - xx[None, :] * math.sin(theta) + cy
    x = yy[:, None] * math.sin(theta) + xx[None, :] * math.cos(theta) + cx
    return bool(any((np.abs(v - edge) < 1e-4).any() for v, edge in ((y, -1), (y, height), (x, -1), (x, width))))


def reference(features, rois, output_size, strides, sampling_ratio=2, aligned=False, clockwise=False,
              finest_scale=56, roi_scale_factor=-1.0):
    """The op's spec: with one map every RoI is pooled from it as given; otherwise each RoI's level
    from its box as given, no level -> a zero row, w and h multiplied by the factor when it is > 0
    and not 1, then RoIAlignRotated at 1 / stride (as a float32), in float64. Also which rows have
    a sample on an edge of their map (sample_on_an_edge)."""
    levels = len(features)
    out = np.zeros((rois.shape[0], features[0].shape[1], *output_size))
    on_edge = np.zeros(rois.shape[0], dtype=bool)
    for r, roi in enumerate(rois.numpy().astype(np.float64)):
        roi = roi.copy()
        if levels == 1:
            level = 0
        else:
            level = spec_level(roi, finest_scale, levels)
            if level is None:
                continue
            if roi_scale_factor > 0 and roi_scale_factor != 1:
                roi[3:5] *= roi_scale_factor
        scale = float(f32(1.0 / strides[level]))
        out[r] = roi_align_rotated_reference(features[level].double().numpy(), roi[None], output_size, scale,
                                             sampling_ratio, aligned, clockwise)[0]
        on_edge[r] = sample_on_an_edge(roi, *features[level].shape[2:], output_size, scale, sampling_ratio, aligned,
                                       clockwise)
    return out, on_edge


def assert_matches_reference(actual, expected):
    """Close to the float64 reference except on the rows (a few) with a sample on a map edge."""
    values, on_edge = expected
    assert on_edge.sum() <= len(on_edge) // 4
    assert_close(actual[~on_edge], values[~on_edge], "float64_reference", OP)


# --- models ----------------------------------------------------------------------------------------


def mlrra_model(levels, identity=IDENTITIES[0], strides=None, **attrs):
    attrs = dict(featmap_strides=list(STRIDES[:levels] if strides is None else strides), **attrs)
    attrs = {k: v for k, v in attrs.items() if v is not None}
    return one_node_model(identity, attrs, ["rois"] + [f"f{k}" for k in range(levels)], ["output"])


def feeds_of(features, rois):
    return {"rois": rois.numpy(), **{f"f{k}": f.numpy() for k, f in enumerate(features)}}


# --- numerics --------------------------------------------------------------------------------------


SWEEP = list(itertools.product([1, 2, 3, 4, 5], [0, 1], [0, 2], [-1.0, 1.5], [0, 1]))


@pytest.mark.parametrize("levels,aligned,sampling_ratio,factor,clockwise", SWEEP)
def test_matches_reference(levels, aligned, sampling_ratio, factor, clockwise):
    features = pyramid(levels, seed=levels)
    rois = rotated_boxes(24, seed=levels + 7 * aligned + sampling_ratio)
    attrs = dict(output_height=7, output_width=5, sampling_ratio=sampling_ratio, aligned=aligned, clockwise=clockwise,
                 roi_scale_factor=factor)
    model = mlrra_model(levels, **attrs)
    (actual,) = run(model, feeds_of(features, rois), threads=1)
    (threaded,) = run(model, feeds_of(features, rois), threads=2)
    np.testing.assert_array_equal(threaded, actual)  # bit-identical for any thread count
    assert actual.shape == (rois.shape[0], 3, 7, 5)
    expected = reference(features, rois, (7, 5), STRIDES, sampling_ratio, aligned, clockwise, 56, factor)
    assert_matches_reference(actual, expected)
    assert np.isnan(actual[NAN_ANGLE]).all()
    if levels > 1:  # the NaN width and the negative width have no level: zero rows
        np.testing.assert_array_equal(actual[[NAN_WIDTH, NEGATIVE_WIDTH]], 0.0)
    else:  # one map: pooled as given (RoIAlignRotated's NaN row for the NaN width)
        assert np.isnan(actual[NAN_WIDTH]).all()
    # The eager op (mmrotate's forward over opbridge.ops.roi_align_rotated's mmcv numerics).
    eager = opbridge.ops.multi_level_rotated_roi_align(features, rois, (7, 5), STRIDES[:levels], sampling_ratio,
                                                       bool(aligned), bool(clockwise), 56,
                                                       None if factor < 0 else factor)
    assert_close(actual, eager.numpy(), "same_precision", OP)


def test_every_level_is_used_and_clamped():
    """Every sweep case's boxes reach every level of 5, and levels above the last clamp to it."""
    for levels, aligned, sampling_ratio, _, _ in SWEEP:
        rois = rotated_boxes(24, seed=levels + 7 * aligned + sampling_ratio).numpy()
        assert {spec_level(r, 56, 5) for r in rois} == {0, 1, 2, 3, 4, None}
        assert {spec_level(r, 56, 3) for r in rois} == {0, 1, 2, None}


@pytest.mark.parametrize("side,level", [
    (2.0, 0), (111.0, 0), (112.0, 1), (223.0, 1), (224.0, 2), (447.0, 2), (448.0, 3), (5000.0, 3), (0.0, 0),
])
@pytest.mark.parametrize("theta", [0.0, math.pi / 2, -math.pi / 2, 2 * math.pi + 1.0])
def test_each_box_goes_to_its_level(side, level, theta):
    """Square boxes at the level boundaries (finest_scale 56, 4 maps) centred on the maps, on maps
    whose every value is the level's number + 1: the pooled value says which map the box went to,
    whatever the angle."""
    features = [torch.full((1, 1, 64, 64), float(k + 1)) for k in range(4)]
    rois = torch.tensor([[0, 32 * s, 32 * s, side, side, theta] for s in (1, 2, 4, 8)][level:level + 1])
    model = mlrra_model(4, strides=[1.0, 2.0, 4.0, 8.0], output_height=1, output_width=1, sampling_ratio=1,
                        aligned=0)
    (actual,) = run(model, feeds_of(features, rois))
    assert actual[0, 0, 0, 0] == level + 1
    assert spec_level(rois[0].numpy(), 56, 4) == level


def test_finest_scale_attribute():
    features = pyramid(4)
    rois = rotated_boxes(30, seed=3, finest_scale=28)
    model = mlrra_model(4, finest_scale=28, output_height=3, output_width=3)
    (actual,) = run(model, feeds_of(features, rois))
    assert_matches_reference(actual, reference(features, rois, (3, 3), STRIDES, 2, False, False, 28))
    (default,) = run(mlrra_model(4, output_height=3, output_width=3), feeds_of(features, rois))
    assert not np.array_equal(np.nan_to_num(actual), np.nan_to_num(default))


@pytest.mark.parametrize("factor", [1.0, 0.0, -1.0, -3.5])
def test_factor_one_and_non_positive_leave_boxes_as_given(factor):
    """1 is what mmdeploy's exporter writes for mmrotate's roi_scale_factor=None."""
    features = pyramid(3)
    rois = rotated_boxes(12, seed=4)
    (as_given,) = run(mlrra_model(3), feeds_of(features, rois))
    (actual,) = run(mlrra_model(3, roi_scale_factor=factor), feeds_of(features, rois))
    np.testing.assert_array_equal(actual, as_given)


def test_rescale_scales_width_and_height_about_the_centre():
    """roi_scale_factor 2 on a 10 x 4 box at angle 0: 20 x 8 about the same centre. On a map whose
    value is its x coordinate, 1 x 1 pooling with 2 x 2 fixed samples at 1/4 and 3/4 of the width
    averages to the centre, x = 30, with or without the rescale; with 1 x 2 bins the right bin's
    samples sit at 5/8 and 7/8 of the width: 30 + 0.25 * w."""
    ramp = torch.arange(64, dtype=torch.float32).expand(1, 1, 64, 64).contiguous()
    features = [ramp, ramp.clone()]
    rois = torch.tensor([[0, 30, 30, 10, 4, 0.0]])  # level 0 (scale 6.3)
    for factor, width in [(-1.0, 10.0), (2.0, 20.0)]:
        model = mlrra_model(2, strides=[1.0, 2.0], output_height=1, output_width=2, sampling_ratio=2, aligned=0,
                            roi_scale_factor=factor)
        (actual,) = run(model, feeds_of(features, rois))
        assert actual[0, 0, 0].tolist() == [30.0 - 0.25 * width, 30.0 + 0.25 * width]


def test_aligned_boxes_are_not_clamped_to_one_pixel():
    """mmcv's RoIAlignRotated (and opbridge) clamp w and h to >= 1 feature pixel only when aligned
    is 0; the TensorRT plugin always clamps. A 0.5 px box on a ramp: aligned 1 samples within
    +-0.25 px of the centre, aligned 0 within +-0.5 px."""
    ramp = torch.arange(64, dtype=torch.float32).expand(1, 1, 64, 64).contiguous()
    rois = torch.tensor([[0, 30.5, 30.5, 0.5, 0.5, 0.0]])
    for aligned, half in [(1, 0.25), (0, 0.5)]:
        model = mlrra_model(2, strides=[1.0, 2.0], output_height=1, output_width=2, sampling_ratio=1, aligned=aligned)
        (actual,) = run(model, feeds_of([ramp, ramp.clone()], rois))
        centre = 30.5 - 0.5 * aligned
        assert actual[0, 0, 0].tolist() == [centre - half / 2, centre + half / 2]


def test_eager_empty_roi_set():
    for levels in (1, 3):
        eager = opbridge.ops.multi_level_rotated_roi_align(pyramid(levels), torch.zeros((0, 6)), 7, STRIDES[:levels])
        assert eager.shape == (0, 3, 7, 7)


def test_nan_in_a_feature_map_stays_in_its_rows():
    """mmrotate's training-time `feats[i].sum() * 0` for unused maps is not reproduced: a NaN in a
    map no RoI uses changes nothing."""
    features = pyramid(3)
    rois = torch.tensor([[0.0, 30, 30, 40, 40, 0.4], [1, 40, 60, 40, 60, -2.0]])  # both on level 0
    (clean,) = run(mlrra_model(3), feeds_of(features, rois))
    features[2][0, 0, 0, 0] = NAN
    (actual,) = run(mlrra_model(3), feeds_of(features, rois))
    np.testing.assert_array_equal(actual, clean)
    assert not np.isnan(actual).any()


# --- the graph mmdeploy writes ---------------------------------------------------------------------


def mmdeploy_graph(output_size, sampling_ratio, aligned, clockwise, strides):
    """mmdeploy's MultiLevelRotatedRoiAlign.symbolic for mmrotate's RotatedSingleRoIExtractor
    (TensorRT backend), as it writes it: rois, then the feature maps; every attribute, in its
    order, with its swap of the output size; roi_scale_factor 1.0 for None; opset 11 and a dynamic
    number of rois."""
    node = helper.make_node(
        "MMCVMultiLevelRotatedRoiAlign", ["rois"] + [f"f{k}" for k in range(len(strides))], ["bbox_feats"],
        domain="mmdeploy", output_height=output_size[1], output_width=output_size[0], clockwise=int(clockwise),
        sampling_ratio=sampling_ratio, roi_scale_factor=1.0, finest_scale=56,
        featmap_strides=[float(s) for s in strides], aligned=int(aligned))
    inputs = [helper.make_tensor_value_info("rois", TensorProto.FLOAT, ["num_rois", 6])]
    inputs += [helper.make_tensor_value_info(f"f{k}", TensorProto.FLOAT, [2, 3, IMAGE[0] // int(s), IMAGE[1] // int(s)])
               for k, s in enumerate(strides)]
    graph = helper.make_graph([node], "rotated_roi_extractor", inputs,
                              [helper.make_tensor_value_info("bbox_feats", TensorProto.FLOAT,
                                                             ["num_rois", 3, output_size[1], output_size[0]])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmdeploy", 1)],
                             ir_version=7)


@pytest.mark.parametrize("aligned,clockwise", [(True, True), (False, False)])
def test_graph_as_mmdeploy_writes_it(aligned, clockwise):
    """mmrotate's Oriented R-CNN config (RoIAlignRotated output_size 7, sampling_ratio 0, strides 4
    to 32, clockwise), and a non-square output size, which mmdeploy's exporter writes transposed:
    the node asks for output_size[1] x output_size[0], and that is what runs."""
    features = pyramid(4)
    rois = rotated_boxes(20, seed=11)
    for output_size in [(7, 7), (14, 6)]:
        model = mmdeploy_graph(output_size, 0, aligned, clockwise, STRIDES[:4])
        onnx.checker.check_model(model)
        (actual,) = run(model, feeds_of(features, rois))
        transposed = (output_size[1], output_size[0])
        assert actual.shape == (rois.shape[0], 3, *transposed)
        assert_matches_reference(actual, reference(features, rois, transposed, STRIDES, 0, aligned, clockwise, 56, 1.0))


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
    rois = rotated_boxes(4)
    model = mlrra_model(2, identity)
    bad_batch = rois.clone()
    bad_batch[1, 0] = 2
    negative_batch = rois.clone()
    negative_batch[3, 0] = -1
    cases = [
        (feeds_of(features, bad_batch),
         "rois[1, 0] is the batch index and must lie in [0, 2) after truncation toward zero, got 2"),
        (feeds_of(features, negative_batch),
         "rois[3, 0] is the batch index and must lie in [0, 2) after truncation toward zero, got -1"),
        (feeds_of(features, rois[:, :5]),
         "rois must have shape [R, 6] (batch_index, center_x, center_y, width, height, theta), "
         f"got shape [{rois.shape[0]}, 5]"),
        (feeds_of(features, rois[:, :, None]),
         "rois must have shape [R, 6] (batch_index, center_x, center_y, width, height, theta), "
         f"got shape [{rois.shape[0]}, 6, 1]"),
    ]
    for feeds, message in cases:
        assert f"{identity}: {message}" in run_error(model, feeds)
    check_feature_map_rules(identity, mlrra_model, feeds_of, pyramid, rois)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_absurd_sampling_grid_names_the_roi_row(identity):
    features = pyramid(2)
    rois = torch.tensor([[0.0, 5, 5, 10, 10, 0], [0, 0, 0, 1e7, 1e7, 0.3]])
    model = mlrra_model(2, identity, output_height=1, output_width=1, sampling_ratio=0)
    message = run_error(model, feeds_of(features, rois))
    assert f"{identity}: roi 1 needs a 1048577x1048577 sampling grid per bin, more than 2^20 sample rows" in message



def test_python_argument_errors():
    features, rois = pyramid(2), rotated_boxes(3)
    mlrra = opbridge.ops.multi_level_rotated_roi_align
    with pytest.raises(ValueError, match=r"2 feature maps and 3 strides; they must agree, 1 to 10"):
        mlrra(features, rois, 7, [4, 8, 16])
    with pytest.raises(ValueError, match=r"featmap_strides must be finite numbers > 0, got \[4.0, 0.0\]"):
        mlrra(features, rois, 7, [4, 0])
    with pytest.raises(ValueError, match="finest_scale must be >= 1, got 0"):
        mlrra(features, rois, 7, [4, 8], finest_scale=0)
    with pytest.raises(ValueError, match="roi_scale_factor must be None or a finite number > 0, got -1"):
        mlrra(features, rois, 7, [4, 8], roi_scale_factor=-1)
    with pytest.raises(ValueError, match=r"rois must have shape \[R, 6\], got \[13, 5\]"):
        mlrra(features, rois[:, :5], 7, [4, 8])


# --- export round trips ----------------------------------------------------------------------------


class RotatedRoiExtractor(torch.nn.Module):
    """A RotatedSingleRoIExtractor's forward as mmrotate configures it."""

    def __init__(self, levels=4, output_size=(7, 5), aligned=True, clockwise=True, sampling_ratio=0,
                 roi_scale_factor=None):
        super().__init__()
        self.args = dict(output_size=output_size, featmap_strides=STRIDES[:levels], sampling_ratio=sampling_ratio,
                         aligned=aligned, clockwise=clockwise, finest_scale=56, roi_scale_factor=roi_scale_factor)

    def forward(self, features, rois):
        return opbridge.ops.multi_level_rotated_roi_align(features, rois, **self.args)


def node_attributes(proto, domain, op_type):
    node = next(n for n in proto.graph.node if n.domain == domain)
    assert node.op_type == op_type
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}, list(node.input)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat", [None, "mmdeploy"])
@pytest.mark.parametrize("clockwise,factor", [(True, None), (False, 1.5)])
def test_export_round_trip(exporter, compat, clockwise, factor):
    model = RotatedRoiExtractor(4, (7, 5), clockwise=clockwise, roi_scale_factor=factor)
    features = pyramid(4)
    rois = rotated_boxes(6, seed=1)[:6]
    proto = opbridge.export(model, (features, rois), exporter=exporter, compat=compat,
                            dynamic_axes={"rois": {0: "num_rois"}})
    identity = IDENTITIES[0] if compat is None else IDENTITIES[1]
    assert custom_nodes(proto) == [identity]
    attrs, inputs = node_attributes(proto, *identity.split("::"))
    assert attrs == dict(output_height=7, output_width=5, clockwise=int(clockwise), sampling_ratio=0,
                         featmap_strides=list(STRIDES[:4]), roi_scale_factor=-1.0 if factor is None else 1.5,
                         finest_scale=56, aligned=1)
    assert len(inputs) == 5
    session = opbridge.create_session(proto)
    names = [i.name for i in session.get_inputs()]
    for count, seed in [(6, 1), (0, 2), (17, 3)]:
        rois = rotated_boxes(count, seed=seed)[:count]
        (actual,) = session.run(None, dict(zip(names, [f.numpy() for f in features] + [rois.numpy()])))
        expected = model(features, rois)
        assert actual.shape == (count, 3, 7, 5)
        assert_close(actual, expected.numpy(), "same_precision", OP)


def test_export_of_one_and_six_levels():
    """One map (mmrotate pools every RoI from it as given); six maps: the legacy exporter writes
    them, the dynamo exporter's translations stop at five and say so."""
    rois = rotated_boxes(8, seed=2)[:8]
    single = RotatedRoiExtractor(1, (3, 3), roi_scale_factor=2.0)
    features = pyramid(1)
    for exporter in EXPORTERS:
        proto = opbridge.export(single, (features, rois), exporter=exporter)
        session = opbridge.create_session(proto)
        (actual,) = session.run(None, {i.name: v.numpy() for i, v in zip(session.get_inputs(), features + [rois])})
        assert_close(actual, single(features, rois).numpy(), "same_precision", OP)
    strides = [4.0, 8.0, 16.0, 32.0, 64.0, 128.0]
    features = [torch.randn(2, 3, 512 // int(s), 512 // int(s)) for s in strides]

    class Six(torch.nn.Module):
        def forward(self, features, rois):
            return opbridge.ops.multi_level_rotated_roi_align(features, rois, 2, strides)

    proto = opbridge.export(Six(), (features, rois), exporter="legacy")
    session = opbridge.create_session(proto)
    (actual,) = session.run(None, {i.name: v.numpy() for i, v in zip(session.get_inputs(), features + [rois])})
    assert_close(actual, Six()(features, rois).numpy(), "same_precision", OP)
    with pytest.raises(Exception, match="the dynamo exporter takes at most 5"):
        opbridge.export(Six(), (features, rois), exporter="dynamo")


def test_export_has_no_mmcv_identity():
    with pytest.raises(ValueError, match=r"MultiLevelRotatedRoiAlign has no mmcv identity .*\(mmcv has none\)"):
        opbridge.export(RotatedRoiExtractor(2), (pyramid(2), rotated_boxes(3)), exporter="legacy", compat="mmcv")
