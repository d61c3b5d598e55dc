"""opbridge::HeatmapsToKeypoints through the built library in ORT, against torchvision's
heatmaps_to_keypoints (bit for bit on CPUs with AVX2, where PyTorch fuses multiply-adds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torchvision.models.detection import roi_heads

import opbridge.ops
from graphs import EXPORTERS, assert_close, one_node_model, pytorch_interpolation_is_fused, run, run_error


def keypoints_model():
    return one_node_model("opbridge::HeatmapsToKeypoints", {}, ["maps", "rois"], ["keypoints", "scores"])


def maps_and_rois(count, keypoints=17, size=56, seed=0):
    g = torch.Generator().manual_seed(seed)
    maps = torch.randn(count, keypoints, size, size, generator=g)
    xy = torch.rand(count, 2, generator=g) * 300
    wh = torch.exp(torch.rand(count, 2, generator=g) * np.log(500)) + 0.2
    return maps, torch.cat([xy, xy + wh], 1)


def assert_matches_torchvision(xy, scores, expected_xy, expected_scores) -> None:
    """Bit for bit where PyTorch's bicubic interpolation is fused (every CPU with AVX2); elsewhere the
    scores within the tolerance table (a maximum, and so xy, may move to a nearly equal neighbour)."""
    if pytorch_interpolation_is_fused():
        np.testing.assert_array_equal(xy, expected_xy.numpy())
        np.testing.assert_array_equal(scores, expected_scores.numpy())
    else:
        assert_close(scores, expected_scores.numpy(), "same_precision", "heatmaps_to_keypoints")


@pytest.mark.parametrize("count,keypoints,size", [(0, 17, 56), (1, 17, 56), (12, 17, 56), (5, 3, 9), (3, 1, 1)])
def test_matches_torchvision(count, keypoints, size):
    maps, rois = maps_and_rois(count, keypoints, size, seed=count + size)
    if count:
        maps[0, 0] = 1.0  # a heatmap of ties: the first maximum wins
    expected_xy, expected_scores = roi_heads.heatmaps_to_keypoints(maps, rois)
    xy, scores = run(keypoints_model(), {"maps": maps.numpy(), "rois": rois.numpy()})
    assert xy.shape == (count, keypoints, 3) and scores.shape == (count, keypoints)
    assert_matches_torchvision(xy, scores, expected_xy, expected_scores)
    eager_xy, eager_scores = opbridge.ops.heatmaps_to_keypoints(maps, rois)
    np.testing.assert_array_equal(eager_xy.numpy(), expected_xy.numpy())


def test_non_finite_roi_gives_nan():
    maps, rois = maps_and_rois(2)
    rois[1, 2] = float("nan")
    xy, scores = run(keypoints_model(), {"maps": maps.numpy(), "rois": rois.numpy()})
    assert np.all(np.isnan(xy[1, :, :2])) and np.all(xy[1, :, 2] == 1) and np.all(np.isnan(scores[1]))
    expected_xy, expected_scores = roi_heads.heatmaps_to_keypoints(maps[:1], rois[:1])
    assert_matches_torchvision(xy[:1], scores[:1], expected_xy, expected_scores)


@pytest.mark.parametrize("maps,rois,message", [
    ((2, 17, 56), (2, 4), "maps must have shape [R, K, H, W] with H, W >= 1"),
    ((2, 17, 0, 56), (2, 4), "maps must have shape [R, K, H, W] with H, W >= 1"),
    ((2, 17, 56, 56), (3, 4), "rois must have shape [R, 4] with R = 2"),
])
def test_bad_shapes(maps, rois, message):
    feeds = {"maps": np.zeros(maps, np.float32), "rois": np.zeros(rois, np.float32)}
    assert "opbridge::HeatmapsToKeypoints: " + message in run_error(keypoints_model(), feeds)


def test_oversized_roi_is_an_error():
    maps = np.zeros((1, 1, 56, 56), np.float32)
    rois = np.array([[0, 0, 1e5, 1e5]], np.float32)
    assert "opbridge::HeatmapsToKeypoints: " in run_error(keypoints_model(), {"maps": maps, "rois": rois})
    assert "67108864" in run_error(keypoints_model(), {"maps": maps, "rois": rois})


class Decode(torch.nn.Module):
    def forward(self, maps, rois):
        return opbridge.ops.heatmaps_to_keypoints(maps, rois)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_round_trip(exporter):
    maps, rois = maps_and_rois(4)
    proto = opbridge.export(Decode(), (maps, rois), exporter=exporter, dynamic_axes={"maps": {0: "r"}, "rois": {0: "r"}})
    assert [n.op_type for n in proto.graph.node if n.domain == "opbridge"] == ["HeatmapsToKeypoints"]
    session = opbridge.create_session(proto)
    for count in (4, 0, 7):
        maps, rois = maps_and_rois(count, seed=count)
        xy, scores = session.run(None, {"maps": maps.numpy(), "rois": rois.numpy()})
        expected_xy, expected_scores = roi_heads.heatmaps_to_keypoints(maps, rois)
        assert_matches_torchvision(xy, scores, expected_xy, expected_scores)
