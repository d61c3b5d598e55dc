"""Export round trips of opbridge.ops.roi_align_rotated: exported with each exporter, with a
dynamic number of RoIs, run in ORT with the library at other RoI counts (0 included), compared
with eager PyTorch; compat="mmcv" and "mmdeploy" write the peers' identity."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

import opbridge
import opbridge.ops
from graphs import EXPORTERS
from opbridge.export import custom_nodes


class RotatedRoiPool(torch.nn.Module):
    """A rotated RoI head's first step (as mmrotate's RoI extractors use RoIAlignRotated), with a
    non-square output, so that a swapped width would show."""

    def __init__(self, aligned=True, clockwise=False, sampling_ratio=2):
        super().__init__()
        self.args = dict(spatial_scale=0.25, sampling_ratio=sampling_ratio, aligned=aligned, clockwise=clockwise)

    def forward(self, features, rois):
        return opbridge.ops.roi_align_rotated(features, rois, (3, 5), **self.args)


def rotated_inputs(count, seed):
    g = torch.Generator().manual_seed(seed)
    features = torch.randn(2, 4, 24, 32, generator=g)
    centre = torch.rand(count, 2, generator=g) * torch.tensor([128.0, 96.0])
    sides = torch.rand(count, 2, generator=g) * 60 + 2
    theta = (torch.rand(count, 1, generator=g) - 0.5) * 4 * torch.pi
    batch = torch.randint(0, 2, (count, 1), generator=g).float()
    return features, torch.cat([batch, centre, sides, theta], 1)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("aligned,clockwise,sampling_ratio", [(True, False, 2), (False, True, 0)])
def test_exports_to_one_node_and_runs_at_every_roi_count(exporter, aligned, clockwise, sampling_ratio):
    model = RotatedRoiPool(aligned, clockwise, sampling_ratio)
    proto = opbridge.export(model, rotated_inputs(9, 0), exporter=exporter, dynamic_axes={"rois": {0: "num_rois"}})
    assert custom_nodes(proto) == ["opbridge::RoiAlignRotated"]
    node = next(n for n in proto.graph.node if n.domain == "opbridge")
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == dict(output_height=3, output_width=5, spatial_scale=pytest.approx(0.25),
                         sampling_ratio=sampling_ratio, aligned=int(aligned), clockwise=int(clockwise))
    session = opbridge.create_session(proto)
    for count, seed in [(0, 1), (1, 2), (40, 3)]:
        features, rois = rotated_inputs(count, seed)
        (actual,) = session.run(None, {"features": features.numpy(), "rois": rois.numpy()})
        expected = model(features, rois).numpy()
        assert actual.shape == expected.shape == (count, 4, 3, 5)
        np.testing.assert_allclose(actual, expected, **_tolerance())


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat", ["mmcv", "mmdeploy"])
def test_compat_writes_the_peers_identity(exporter, compat):
    """Unlike mmcv's own exporter, the width is the real one (5), not the height."""
    model = RotatedRoiPool()
    args = rotated_inputs(7, 4)
    proto = opbridge.export(model, args, exporter=exporter, compat=compat)
    assert custom_nodes(proto) == [f"{compat}::MMCVRoIAlignRotated"]
    node = next(n for n in proto.graph.node if n.domain == compat)
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert (attrs["output_height"], attrs["output_width"]) == (3, 5)
    (actual,) = opbridge.create_session(proto).run(None, {"features": args[0].numpy(), "rois": args[1].numpy()})
    np.testing.assert_allclose(actual, model(*args).numpy(), **_tolerance())


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_verify(exporter):
    report = opbridge.verify(RotatedRoiPool(), rotated_inputs(12, 5), exporter=exporter, print_report=False)
    assert report.ok, str(report)
    assert report.custom_ops == ["opbridge::RoiAlignRotated"]


def _tolerance():
    tol = opbridge.tolerances.tolerance("same_precision", "float32", "roi_align_rotated")
    return dict(rtol=tol.rtol, atol=tol.atol)
