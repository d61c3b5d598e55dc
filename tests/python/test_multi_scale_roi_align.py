"""opbridge::MultiScaleRoiAlign through the built library in ORT, against torchvision's
MultiScaleRoIAlign (float32, and float64 as the reference of the pooling arithmetic)."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest
import torch
import torchvision

import opbridge
import opbridge.ops
from opbridge.export import custom_nodes
from graphs import EXPORTERS, assert_close, cast_around, one_node_model, round_to, run, run_error, run_half, session_error
from opbridge.tolerances import same_bits_but_nan, tolerance

STRIDES = (4, 8, 16, 32)
IMAGE = (256, 320)  # (height, width)


def pyramid(levels, batch=2, channels=3, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, channels, IMAGE[0] // s, IMAGE[1] // s, generator=g, dtype=dtype)
            for s in STRIDES[:levels]]


def boxes_of_every_level(count, seed=0, batch=2):
    """Boxes with sides from 2 to 700 px (all levels, clamped ones included), some partly outside
    the image, a few degenerate; with their batch index."""
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(count, 2, generator=g) * torch.tensor([IMAGE[1], IMAGE[0]]) - 20
    wh = torch.exp(torch.rand(count, 2, generator=g) * np.log(350)) * 2
    boxes = torch.cat([xy, xy + wh], 1)
    if count > 4:
        boxes[3, 2:] = boxes[3, :2]  # zero size
    batch_index = torch.randint(0, batch, (count, 1), generator=g).float()
    return torch.cat([batch_index, boxes], 1)


def torchvision_pooler(levels, output_size, sampling_ratio, features, rois):
    names = [str(k) for k in range(levels)]
    pooler = torchvision.ops.MultiScaleRoIAlign(names, output_size, sampling_ratio)
    x = collections.OrderedDict(zip(names, features))
    boxes = [rois[rois[:, 0] == b, 1:] for b in range(features[0].shape[0])]
    pooled = pooler(x, boxes, [IMAGE] * features[0].shape[0])
    # torchvision returns the rois grouped by image; put them back in the order of `rois`.
    order = torch.cat([torch.where(rois[:, 0] == b)[0] for b in range(features[0].shape[0])])
    result = torch.empty_like(pooled)
    result[order] = pooled
    return result, pooler.scales


def msra_model(levels, output_size, sampling_ratio, scales, dtype="float32", **extra):
    """The node with its inputs and output in `dtype` (bfloat16 behind casts from and to float32)."""
    attrs = dict(output_height=output_size[0], output_width=output_size[1], sampling_ratio=sampling_ratio,
                 spatial_scales=list(scales), **extra)
    inputs = ["rois"] + [f"f{k}" for k in range(levels)]
    model = one_node_model("opbridge::MultiScaleRoiAlign", attrs, inputs, ["output"],
                           input_types={name: dtype for name in inputs})
    return cast_around(model, dtype, set(inputs), {"output"}) if dtype == "bfloat16" else model


def feeds_of(features, rois):
    return {"rois": rois.numpy(), **{f"f{k}": f.numpy() for k, f in enumerate(features)}}


SWEEP = list(itertools.product([1, 2, 4], [(7, 7), (14, 5)], [2, 0], [0, 1, 57]))


@pytest.mark.parametrize("levels,output_size,sampling_ratio,count", SWEEP)
def test_matches_torchvision(levels, output_size, sampling_ratio, count):
    features = pyramid(levels, seed=levels)
    rois = boxes_of_every_level(count, seed=count + levels)
    expected, scales = torchvision_pooler(levels, output_size, sampling_ratio, features, rois)
    model = msra_model(levels, output_size, sampling_ratio, scales)
    for threads in (1, 2):
        (actual,) = run(model, feeds_of(features, rois), threads=threads)
        assert actual.shape == (count, 3, *output_size)
        assert_close(actual, expected.numpy(), "same_precision")
    # The pooling arithmetic against torchvision in float64.
    expected64, _ = torchvision_pooler(levels, output_size, sampling_ratio, [f.double() for f in features],
                                       rois.double())
    assert_close(actual, expected64.numpy(), "float64_reference")
    eager = opbridge.ops.multi_scale_roi_align(features, rois, output_size, sampling_ratio, scales)
    np.testing.assert_array_equal(eager.numpy(), expected.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("levels", [1, 4])
def test_half_is_the_float32_result_rounded_once(dtype, levels):
    """float16 and bfloat16 maps and RoIs: bit for bit the float32 op's output on the half values,
    rounded once; and against torchvision's MultiScaleRoIAlign in float32 on the half values (autocast
    runs roi_align in float32), rounded, within the half tolerance."""
    features = pyramid(levels, seed=20 + levels)
    rois = boxes_of_every_level(60, seed=21 + levels)
    _, scales = torchvision_pooler(levels, (7, 7), 2, features, rois)
    feeds = feeds_of(features, rois)
    rounded = {name: round_to(value, dtype) for name, value in feeds.items()}
    (got,) = run_half(msra_model(levels, (7, 7), 2, scales, dtype=dtype), feeds, dtype)
    (exact,) = run(msra_model(levels, (7, 7), 2, scales), rounded)
    assert same_bits_but_nan(round_to(exact, dtype), got)
    half_features = [torch.from_numpy(rounded[f"f{k}"]) for k in range(levels)]
    expected, _ = torchvision_pooler(levels, (7, 7), 2, half_features, torch.from_numpy(rounded["rois"]))
    tol = tolerance("half", dtype)
    np.testing.assert_allclose(got, round_to(expected.numpy(), dtype), rtol=tol.rtol, atol=tol.atol)
    # The PyTorch op on the half tensors (what a half model's export runs eagerly): torchvision's pooler in
    # float32 on their values, rounded once.
    half = getattr(torch, dtype)
    eager = opbridge.ops.multi_scale_roi_align([f.to(half) for f in half_features],
                                               torch.from_numpy(rounded["rois"]).to(half), (7, 7), 2, scales)
    assert eager.dtype == half
    np.testing.assert_array_equal(eager.float().numpy(), expected.to(half).float().numpy())


def test_nan_box_gives_a_zero_row_like_torchvision():
    features = pyramid(4)
    rois = boxes_of_every_level(6)
    rois[2, 3] = float("nan")
    expected, scales = torchvision_pooler(4, (7, 7), 2, features, rois)
    (actual,) = run(msra_model(4, (7, 7), 2, scales), feeds_of(features, rois))
    assert np.all(actual[2] == 0) and np.all(expected[2].numpy() == 0)
    assert_close(actual, expected.numpy(), "same_precision")


def test_canonical_scale_and_level_attributes():
    """A mapper with canonical scale 112 and level 3 (every box one level up from the default
    mapper's, then clamped), against torchvision's pooler built with the same."""
    features = pyramid(4)
    rois = boxes_of_every_level(40)
    names = ["0", "1", "2", "3"]
    pooler = torchvision.ops.MultiScaleRoIAlign(names, 7, 2, canonical_scale=112, canonical_level=3)
    boxes = [rois[rois[:, 0] == b, 1:] for b in range(2)]
    pooled = pooler(collections.OrderedDict(zip(names, features)), boxes, [IMAGE] * 2)
    order = torch.cat([torch.where(rois[:, 0] == b)[0] for b in range(2)])
    expected = torch.empty_like(pooled)
    expected[order] = pooled
    model = msra_model(4, (7, 7), 2, pooler.scales, canonical_scale=112, canonical_level=3)
    (actual,) = run(model, feeds_of(features, rois))
    assert_close(actual, expected.numpy(), "same_precision")


@pytest.mark.parametrize("attrs,message", [
    (dict(spatial_scales=[0.25, -1.0]), "opbridge::MultiScaleRoiAlign: spatial_scales[1] must be a finite number > 0, got -1"),
    (dict(canonical_scale=0), "canonical_scale must be >= 1, got 0"),
    (dict(output_height=0), "output_height and output_width must be >= 1"),
])
def test_bad_attributes(attrs, message):
    full = dict(output_height=7, output_width=7, sampling_ratio=2, spatial_scales=[0.25, 0.125])
    full.update(attrs)
    model = one_node_model("opbridge::MultiScaleRoiAlign", full, ["rois", "f0", "f1"], ["output"])
    assert message in session_error(model)


def test_bad_inputs():
    features = pyramid(2)
    rois = boxes_of_every_level(4)
    model = msra_model(2, (7, 7), 2, [0.25, 0.125])
    bad_rois = rois.clone()
    bad_rois[1, 0] = 2
    assert "rois[1, 0] is the batch index and must lie in [0, 2)" in run_error(model, feeds_of(features, bad_rois))
    assert "rois must have shape [R, 5]" in run_error(model, feeds_of(features, rois[:, :4]))
    channels = [features[0], features[1][:, :2]]
    assert "feature map 1 has shape [2, 2, 32, 40]; every map must have the N and C of map 0" in \
        run_error(model, feeds_of(channels, rois))
    three = msra_model(3, (7, 7), 2, [0.25, 0.125])
    assert "the node has 3 feature maps but spatial_scales lists 2 scales" in \
        run_error(three, feeds_of(pyramid(3), rois))



# --- export round trips ----------------------------------------------------------------------------


class RcnnPooler(torch.nn.Module):
    """torchvision's MultiScaleRoIAlign as the R-CNN heads call it: the FPN's maps by name (with
    the extra "pool" level, which the pooler ignores), a list of boxes per image, the image sizes."""

    def __init__(self):
        super().__init__()
        self.pool = torchvision.ops.MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)

    def forward(self, features, boxes):
        return self.pool(features, boxes, [IMAGE] * len(boxes))


def rcnn_inputs(counts, seed):
    """The features of a 2-image batch and the boxes of each image (`counts` of them)."""
    maps = pyramid(4, seed=seed)
    features = collections.OrderedDict([*((str(k), f) for k, f in enumerate(maps)),
                                        ("pool", maps[3][:, :, ::2, ::2].contiguous())])
    return features, [boxes_of_every_level(n, seed=seed + k, batch=1)[:, 1:] for k, n in enumerate(counts)]


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_of_torchvision_pooler_is_one_node_right_for_every_box_count(exporter):
    """Exported with 24 and 17 boxes per image, as dynamic dims; run with other counts, an image
    without boxes and no boxes at all included. (torch 2.14's own dynamo export of this module
    bakes 24 + 17 = 41 output rows into the graph: see the op's notes.)"""
    model = RcnnPooler().eval()
    proto = opbridge.export(model, rcnn_inputs((24, 17), seed=1), exporter=exporter,
                            dynamic_axes={"boxes": [{0: "boxes_0"}, {0: "boxes_1"}]})
    assert custom_nodes(proto) == ["opbridge::MultiScaleRoiAlign"]
    assert "RoiAlign" not in [n.op_type for n in proto.graph.node]
    session = opbridge.create_session(proto)
    inputs = [i.name for i in session.get_inputs()]  # an exporter may drop the unused "pool" map
    for counts in [(24, 17), (0, 5), (5, 0), (0, 0), (1, 40), (57, 3)]:
        features, boxes = rcnn_inputs(counts, seed=sum(counts) + 7)
        leaves = {f"features_{name}": f for name, f in features.items()}
        leaves.update({f"boxes_{k}": b for k, b in enumerate(boxes)})
        (actual,) = session.run(None, {name: leaves[name].numpy() for name in inputs})
        expected = model(features, boxes)
        assert actual.shape == (sum(counts), 3, 7, 7), counts
        assert_close(actual, expected.numpy(), "same_precision")

