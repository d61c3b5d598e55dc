"""opbridge::PasteMasks through the built library in ORT, against torchvision's
paste_masks_in_image (the op reproduces it bit for bit on CPUs with AVX2, where PyTorch fuses
multiply-adds; elsewhere to the last bits)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision.models.detection import roi_heads

import opbridge.ops
from graphs import (EXPORTERS, assert_matches_fused_interpolation, cast_around, one_node_model, round_to, run, run_error,
                    session_error)
from opbridge.tolerances import same_bits_but_nan, tolerance

TYPES = {"image_size": "int64"}


def paste_model(dtype="float32", **attrs):
    """The node with masks, boxes and output in `dtype` (bfloat16 behind casts from and to float32)."""
    model = one_node_model("opbridge::PasteMasks", attrs, ["masks", "boxes", "image_size"], ["output"],
                           input_types={**TYPES, "masks": dtype, "boxes": dtype})
    return cast_around(model, dtype, {"masks", "boxes"}, {"output"}) if dtype == "bfloat16" else model


def masks_and_boxes(count, image, mask=28, seed=0):
    """Masks and boxes as a detector gives them: boxes of 0.5 to 400 px clipped to the image (so
    that torchvision's own function accepts them; its expanded boxes still reach outside)."""
    g = torch.Generator().manual_seed(seed)
    masks = torch.rand(count, 1, mask, mask, generator=g)
    xy = torch.rand(count, 2, generator=g) * torch.tensor([image[1], image[0]])
    wh = torch.exp(torch.rand(count, 2, generator=g) * np.log(400)) + 0.5
    boxes = torch.cat([xy, xy + wh], 1)
    limit = torch.tensor([image[1], image[0], image[1], image[0]], dtype=torch.float32)
    return masks, torch.minimum(boxes, limit)


@pytest.mark.parametrize("count,image,mask,padding", [(0, (32, 48), 28, 1), (1, (64, 64), 28, 1), (7, (120, 90), 28, 1),
                                                      (30, (240, 320), 28, 1), (5, (50, 70), 9, 3), (4, (33, 17), 1, 0)])
def test_matches_torchvision(count, image, mask, padding):
    masks, boxes = masks_and_boxes(count, image, mask, seed=count)
    expected = roi_heads.paste_masks_in_image(masks, boxes, image, padding).numpy()
    feeds = {"masks": masks.numpy(), "boxes": boxes.numpy(), "image_size": np.array(image, np.int64)}
    (actual,) = run(paste_model(padding=padding), feeds)
    assert actual.shape == (count, 1, *image)
    assert_matches_fused_interpolation(actual, expected, "paste_masks")
    eager = opbridge.ops.paste_masks(masks, boxes, image, padding)
    np.testing.assert_array_equal(eager.numpy(), expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_is_the_float32_result_rounded_once(dtype):
    """float16 and bfloat16 masks and boxes: bit for bit the float32 op's output on the half values,
    rounded once; and torchvision's paste_masks_in_image in float32 on the half values, rounded, within
    the half tolerance."""
    image = (120, 90)
    masks, boxes = masks_and_boxes(12, image, seed=5)
    feeds = {"masks": masks.numpy(), "boxes": boxes.numpy()}
    size = {"image_size": np.array(image, np.int64)}
    got = run_half_with_size(paste_model(dtype=dtype), feeds, size, dtype)
    rounded = {name: round_to(value, dtype) for name, value in feeds.items()}
    (exact,) = run(paste_model(), {**rounded, **size})
    assert same_bits_but_nan(round_to(exact, dtype), got)
    expected = roi_heads.paste_masks_in_image(torch.from_numpy(rounded["masks"]), torch.from_numpy(rounded["boxes"]),
                                              image, 1).numpy()
    tol = tolerance("half", dtype)
    np.testing.assert_allclose(got, round_to(expected, dtype), rtol=tol.rtol, atol=tol.atol)
    # The PyTorch op on the half tensors (what a half model's export runs eagerly): torchvision's function
    # in float32 on their values, rounded once.
    half = getattr(torch, dtype)
    eager = opbridge.ops.paste_masks(torch.from_numpy(rounded["masks"]).to(half), torch.from_numpy(rounded["boxes"]).to(half),
                                     image, 1)
    assert eager.dtype == half
    np.testing.assert_array_equal(eager.float().numpy(), round_to(expected, dtype))


def run_half_with_size(model, feeds, size, dtype):
    """The op's output on the half-rounded masks and boxes (run_half), with the int64 image size."""
    rounded = {name: round_to(value, dtype) for name, value in feeds.items()}
    if dtype == "float16":
        rounded = {name: value.astype(np.float16) for name, value in rounded.items()}
    (out,) = run(model, {**rounded, **size})
    assert out.dtype == (np.float16 if dtype == "float16" else np.float32)
    return out.astype(np.float32)


def test_boxes_outside_or_not_finite_paste_nothing():
    masks = torch.ones(3, 1, 28, 28)
    boxes = torch.tensor([[200.0, 10, 260, 40], [float("nan"), 0, 5, 5], [0, 0, float("inf"), 10]])
    feeds = {"masks": masks.numpy(), "boxes": boxes.numpy(), "image_size": np.array([64, 64], np.int64)}
    (actual,) = run(paste_model(), feeds)
    assert np.all(actual == 0)


@pytest.mark.parametrize("feeds,message", [
    ({"masks": np.zeros((2, 1, 28, 27), np.float32)}, "masks must have shape [N, 1, M, M] (square masks"),
    ({"boxes": np.zeros((3, 4), np.float32)}, "boxes must have shape [N, 4] with N = 2 (one box per mask), got shape [3, 4]"),
    ({"image_size": np.array([64], np.int64)}, "image_size must have shape [2] (height, width), got shape [1]"),
    ({"image_size": np.array([64, -1], np.int64)}, "image_size[1] (the image width) must lie in [0, 1048576], got -1"),
    ({"masks": np.zeros((2, 1, 2047, 2047), np.float32)}, "masks of side 2047 with padding 1: the padded side must lie in [1, 2048]"),
])
def test_bad_inputs(feeds, message):
    base = {"masks": np.zeros((2, 1, 28, 28), np.float32), "boxes": np.zeros((2, 4), np.float32),
            "image_size": np.array([64, 64], np.int64)}
    base.update(feeds)
    assert "opbridge::PasteMasks: " + message in run_error(paste_model(), base)


def test_bad_padding():
    assert "opbridge::PasteMasks: padding must lie in [0, 2048], got -1" in session_error(paste_model(padding=-1))


class Paste(torch.nn.Module):
    def forward(self, masks, boxes, image):
        return opbridge.ops.paste_masks(masks, boxes, (image.shape[1], image.shape[2]))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_round_trip(exporter):
    """The mask count and the image size are dynamic: the node gets the size as data."""
    masks, boxes = masks_and_boxes(5, (60, 80))
    axes = {"masks": {0: "n"}, "boxes": {0: "n"}, "image": {1: "height", 2: "width"}}
    proto = opbridge.export(Paste(), (masks, boxes, torch.zeros(3, 60, 80)), exporter=exporter, dynamic_axes=axes)
    assert [n.op_type for n in proto.graph.node if n.domain == "opbridge"] == ["PasteMasks"]
    session = opbridge.create_session(proto)
    for count, image in [(5, (60, 80)), (0, (30, 40)), (9, (100, 50))]:
        masks, boxes = masks_and_boxes(count, image, seed=count)
        feeds = {"masks": masks.numpy(), "boxes": boxes.numpy(), "image": np.zeros((3, *image), np.float32)}
        (actual,) = session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})
        assert_matches_fused_interpolation(actual, roi_heads.paste_masks_in_image(masks, boxes, image).numpy(),
                                           "paste_masks")
