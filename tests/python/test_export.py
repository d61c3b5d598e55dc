"""Export round trips: PyTorch models using opbridge's ops, exported with each exporter, run in
ORT with the library, compared with eager PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
import torchvision

import opbridge
import opbridge.ops
from graphs import EXPORTERS
from opbridge.demo import DemoDetector, example_inputs
from opbridge.export import custom_nodes


class TorchvisionRoiAlign(torch.nn.Module):
    def __init__(self, sampling_ratio=0, aligned=True):
        super().__init__()
        self.sampling_ratio, self.aligned = sampling_ratio, aligned

    def forward(self, x, rois):
        return torchvision.ops.roi_align(x, rois, (5, 4), 0.5, self.sampling_ratio, self.aligned)


class TorchvisionRoiAlignModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = torchvision.ops.RoIAlign((3, 3), spatial_scale=0.25, sampling_ratio=2, aligned=False)

    def forward(self, x, rois):
        return self.pool(x, rois)


class MaxRoiAlign(torch.nn.Module):
    def forward(self, x, rois):
        return opbridge.ops.roi_align(x, rois, 3, spatial_scale=0.5, sampling_ratio=2, aligned=True, mode="max")


class GridSample(torch.nn.Module):
    def __init__(self, mode, padding, align_corners):
        super().__init__()
        self.args = (mode, padding, align_corners)

    def forward(self, x, grid):
        return F.grid_sample(x, grid, *self.args)


class SoftNms(torch.nn.Module):
    def __init__(self, method):
        super().__init__()
        self.method = method

    def forward(self, boxes, scores):
        return opbridge.ops.soft_nms(boxes, scores, 0.4, 0.5, 0.01, self.method)


def roi_inputs(rois=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, 16, 20, generator=g)
    xy = torch.rand(rois, 2, generator=g) * 30
    boxes = torch.cat([xy, xy + torch.rand(rois, 2, generator=g) * 20 + 1], 1)
    batch = torch.randint(0, 2, (rois, 1), generator=g).float()
    return x, torch.cat([batch, boxes], 1)


def nms_inputs(count=60, seed=0):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(count, 2, generator=g) * 100
    boxes = torch.cat([xy, xy + torch.rand(count, 2, generator=g) * 40 + 5], 1)
    return boxes, torch.rand(count, generator=g)


def check(model, args, exporter, expect_nodes):
    report = opbridge.verify(model, args, exporter=exporter, print_report=False)
    assert report.ok, str(report)
    assert sorted(set(report.custom_ops)) == sorted(expect_nodes)
    return report


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("model", [TorchvisionRoiAlign(0, True), TorchvisionRoiAlign(2, False), TorchvisionRoiAlignModule()])
def test_torchvision_roi_align(exporter, model):
    check(model, roi_inputs(), exporter, ["opbridge::RoiAlign"])


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_roi_align_max_mode(exporter):
    check(MaxRoiAlign(), roi_inputs(), exporter, ["opbridge::RoiAlign"])


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("mode,padding,align_corners", [
    ("bilinear", "zeros", False), ("nearest", "border", True), ("bicubic", "reflection", False),
    ("bilinear", "reflection", True),
])
def test_grid_sample(exporter, mode, padding, align_corners):
    g = torch.Generator().manual_seed(1)
    args = (torch.randn(2, 3, 9, 11, generator=g), torch.rand(2, 6, 7, 2, generator=g) * 2.4 - 1.2)
    check(GridSample(mode, padding, align_corners), args, exporter, ["opbridge::GridSample"])


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("mode,padding,align_corners", [
    ("bilinear", "zeros", False), ("nearest", "border", True), ("bilinear", "reflection", True),
])
def test_volumetric_grid_sample(exporter, mode, padding, align_corners):
    """F.grid_sample on 5-D input (aten's grid_sampler_3d) reaches the same node, with the output's
    5-D shape declared, and verifies against eager; the volume's depth is a dynamic axis."""
    g = torch.Generator().manual_seed(2)
    args = (torch.randn(2, 3, 5, 9, 11, generator=g), torch.rand(2, 4, 6, 7, 3, generator=g) * 2.4 - 1.2)
    report = opbridge.verify(GridSample(mode, padding, align_corners), args, exporter=exporter, print_report=False,
                             dynamic_axes={"x": {2: "depth"}, "grid": {1: "depth_out"}})
    assert report.ok, str(report)
    assert report.custom_ops == ["opbridge::GridSample"] and report.outputs[0].ort_shape == (2, 3, 4, 6, 7)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("method", ["naive", "linear", "gaussian"])
def test_soft_nms(exporter, method):
    check(SoftNms(method), nms_inputs(), exporter, ["opbridge::SoftNonMaxSuppression"])


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_demo_detector(exporter):
    report = check(DemoDetector(), example_inputs(image_size=128, num_proposals=120), exporter,
                   ["opbridge::DeformConv2d", "opbridge::GridSample", "opbridge::RoiAlign",
                    "opbridge::SoftNonMaxSuppression"])
    assert report.outputs[0].ort_shape[0] > 1  # soft-NMS kept several proposals


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_dynamic_axes(exporter):
    """Exported with 6 rois, run with 11: the rois count is a dim of the graph, not a constant."""
    model = TorchvisionRoiAlign()
    proto = opbridge.export(model, roi_inputs(6), exporter=exporter, dynamic_axes={"rois": {0: "num_rois"}},
                            output_names=["pooled"])
    session = opbridge.create_session(proto)
    assert session.get_inputs()[1].shape[0] == "num_rois"
    x, rois = roi_inputs(11, seed=5)
    (actual,) = session.run(None, {"x": x.numpy(), "rois": rois.numpy()})
    np.testing.assert_allclose(actual, model(x, rois).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_mmcv_compat_identities(exporter, tmp_path):
    """compat="mmcv" writes the node types mmcv 1.x writes; ORT with opbridge runs them."""
    path = tmp_path / "model.onnx"
    proto = opbridge.export(TorchvisionRoiAlign(), roi_inputs(), path, exporter=exporter, compat="mmcv")
    assert custom_nodes(proto) == ["mmcv::MMCVRoiAlign"]
    assert {o.domain for o in proto.opset_import} >= {"mmcv"} and "opbridge" not in {o.domain for o in proto.opset_import}
    x, rois = roi_inputs()
    (actual,) = opbridge.create_session(path).run(None, {"x": x.numpy(), "rois": rois.numpy()})
    np.testing.assert_allclose(actual, TorchvisionRoiAlign()(x, rois).numpy(), rtol=1e-5, atol=1e-5)


def test_compat_without_identity_is_an_error():
    with pytest.raises(ValueError, match="opbridge::RoiAlign has no mmdeploy identity"):
        opbridge.export(TorchvisionRoiAlign(), roi_inputs(), compat="mmdeploy")


def test_writes_one_self_contained_file(tmp_path):
    path = tmp_path / "demo.onnx"
    opbridge.export(DemoDetector(), example_inputs(image_size=64, num_proposals=20), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.onnx"]
    onnx.checker.check_model(onnx.load(str(path)))


def test_legacy_override_is_scoped_to_the_call():
    """After opbridge's legacy export, torch's own legacy export of roi_align and grid_sample
    gives the standard ONNX ops again (opbridge does not leave global registrations behind)."""
    opbridge.export(TorchvisionRoiAlign(), roi_inputs(), exporter="legacy")
    import io

    for model, args in [(TorchvisionRoiAlign(), roi_inputs()),
                        (GridSample("bilinear", "zeros", False), (torch.randn(1, 1, 4, 4), torch.zeros(1, 2, 2, 2)))]:
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, args, buffer, dynamo=False, opset_version=17)
        types = [n.op_type for n in onnx.load_from_string(buffer.getvalue()).graph.node]
        assert ("RoiAlign" in types) or ("GridSample" in types), types


def test_unknown_exporter_and_bad_dynamic_axes():
    with pytest.raises(ValueError, match="exporter must be one of"):
        opbridge.export(TorchvisionRoiAlign(), roi_inputs(), exporter="onnxscript")
    with pytest.raises(ValueError, match="not forward\\(\\) parameters"):
        opbridge.export(TorchvisionRoiAlign(), roi_inputs(), dynamic_axes={"boxes": {0: "n"}})


class DeformConv(torch.nn.Module):
    """torchvision's DeformConv2d with offsets (and a mask) predicted by ordinary convolutions."""

    def __init__(self, modulated: bool, bias: bool = True):
        super().__init__()
        self.modulated = modulated
        self.conv = torchvision.ops.DeformConv2d(4, 6, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2,
                                                 bias=bias)
        self.offset = torch.nn.Conv2d(4, 2 * 2 * 9, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2))
        self.mask = torch.nn.Conv2d(4, 2 * 9, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2))

    def forward(self, x):
        return self.conv(x, self.offset(x), torch.sigmoid(self.mask(x)) if self.modulated else None)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("modulated,bias", [(True, True), (True, False), (False, True), (False, False)])
def test_torchvision_deform_conv2d(exporter, modulated, bias):
    torch.manual_seed(0)
    check(DeformConv(modulated, bias), (torch.randn(2, 4, 11, 13),), exporter, ["opbridge::DeformConv2d"])


def test_deform_conv2d_as_standard_onnx_deform_conv():
    """standard_ops=("deform_conv",) writes ONNX DeformConv (opset 19), which ORT 1.30 runs itself."""
    import onnxruntime as ort

    torch.manual_seed(0)
    model, x = DeformConv(True).eval(), torch.randn(1, 4, 9, 9)
    proto = opbridge.export(model, (x,), standard_ops=("deform_conv",))
    assert "DeformConv" in [n.op_type for n in proto.graph.node] and not custom_nodes(proto)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (actual,) = session.run(None, {"x": x.numpy()})
    np.testing.assert_allclose(actual, model(x).detach().numpy(), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"standard_ops: \['deform_conv'\] have no standard-ONNX export with the legacy "
                       r"exporter; those that do: \['group_norm', 'instance_norm', 'inverse'\]"):
        opbridge.export(model, (x,), exporter="legacy", standard_ops=("deform_conv",))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_standard_ops_refuses_an_op_without_a_standard_onnx_form(exporter):
    # ONNX has no cummax: there is nothing standard to write, so export says so before tracing.
    class CumMax(torch.nn.Module):
        def forward(self, x):
            return torch.cummax(x, 1).values

    with pytest.raises(ValueError, match=rf"standard_ops: \['cummax'\] have no standard-ONNX export with the "
                                         rf"{exporter} exporter; those that do: \["):
        opbridge.export(CumMax(), (torch.randn(2, 3),), exporter=exporter, standard_ops=("cummax",))


def test_deform_conv_has_no_one_to_one_compat_identity():
    with pytest.raises(ValueError, match="opbridge::DeformConv2d has no mmcv identity with the same inputs"):
        opbridge.export(DeformConv(True), (torch.randn(1, 4, 9, 9),), compat="mmcv")


class TorchvisionNms(torch.nn.Module):
    """torchvision's nms and batched_nms after a score threshold, so that the number of boxes the
    NMS sees is data-dependent (what made torch.export fail inside batched_nms)."""

    def __init__(self, batched: bool):
        super().__init__()
        self.batched = batched

    def forward(self, boxes, scores, labels):
        keep = torch.where(scores > 0.3)[0]
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        if self.batched:
            return keep[torchvision.ops.batched_nms(boxes, scores, labels, 0.5)]
        return keep[torchvision.ops.nms(boxes, scores, 0.5)]


def nms_model_inputs(count=80, seed=0):
    boxes, scores = nms_inputs(count, seed)
    return boxes, scores, torch.randint(0, 4, (count,), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("batched", [False, True])
def test_torchvision_nms_and_batched_nms(exporter, batched):
    model = TorchvisionNms(batched)
    proto = opbridge.export(model, nms_model_inputs(), exporter=exporter,
                            dynamic_axes={n: {0: "boxes"} for n in ("boxes", "scores", "labels")})
    assert custom_nodes(proto) == ["opbridge::BatchedNms" if batched else "opbridge::Nms"]
    session = opbridge.create_session(proto)
    names = [i.name for i in session.get_inputs()]  # the legacy exporter drops an unused input
    for count, seed in [(80, 0), (200, 1), (3, 2), (0, 3)]:
        args = nms_model_inputs(count, seed)
        feeds = {n: a.numpy() for n, a in zip(["boxes", "scores", "labels"], args) if n in names}
        (actual,) = session.run(None, feeds)
        np.testing.assert_array_equal(actual, model(*args).numpy())


def test_batched_nms_patch_is_scoped_to_the_export():
    original = torchvision.ops.boxes.batched_nms
    opbridge.export(TorchvisionNms(True), nms_model_inputs(), exporter="dynamo")
    assert torchvision.ops.boxes.batched_nms is original and torchvision.ops.batched_nms is original


@pytest.mark.parametrize("batched", [False, True])
def test_nms_as_standard_onnx(batched):
    """standard_ops=("nms",) writes ONNX NonMaxSuppression (torchvision's coordinate trick for
    batched_nms); plain onnxruntime runs it."""
    import onnxruntime as ort

    model = TorchvisionNms(batched)
    proto = opbridge.export(model, nms_model_inputs(), standard_ops=("nms",),
                            dynamic_axes={n: {0: "boxes"} for n in ("boxes", "scores", "labels")})
    assert not custom_nodes(proto) and "NonMaxSuppression" in [n.op_type for n in proto.graph.node]
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    for count, seed in [(80, 0), (0, 3)]:
        args = nms_model_inputs(count, seed)
        feeds = {n: a.numpy() for n, a in zip(["boxes", "scores", "labels"], args) if n in names}
        (actual,) = session.run(None, feeds)
        np.testing.assert_array_equal(np.sort(actual), np.sort(model(*args).numpy()))


class MulticlassNms(torch.nn.Module):
    def forward(self, boxes, scores):
        return opbridge.ops.multiclass_nms(boxes, scores, 0.5, 0.2, 3)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_multiclass_nms(exporter):
    g = torch.Generator().manual_seed(4)
    boxes = torch.stack([nms_inputs(30, s)[0] for s in range(2)])
    scores = torch.rand(2, 5, 30, generator=g)
    proto = opbridge.export(MulticlassNms(), (boxes, scores), exporter=exporter)
    assert custom_nodes(proto) == ["opbridge::MulticlassNms"]
    (actual,) = opbridge.create_session(proto).run(None, {"boxes": boxes.numpy(), "scores": scores.numpy()})
    np.testing.assert_array_equal(actual, MulticlassNms()(boxes, scores).numpy())


def test_nms_compat_mmcv():
    proto = opbridge.export(TorchvisionNms(False), nms_model_inputs(), compat="mmcv")
    assert custom_nodes(proto) == ["mmcv::NonMaxSuppression"]
    with pytest.raises(ValueError, match="opbridge::BatchedNms has no mmcv identity"):
        opbridge.export(TorchvisionNms(True), nms_model_inputs(), compat="mmcv")
