"""Export round trips of the rotated NMS PyTorch ops (opbridge.ops.nms_rotated, batched_nms_rotated,
multiclass_nms_rotated): exported with each exporter, run in ORT with the library at several box
counts (0 included), compared exactly with eager PyTorch; and the mmdeploy identity.

The eager ops compute the exact IoU and the kernel mmcv's float32 one; they agree on boxes with
independent random angles (see test_nms_rotated.py)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

import opbridge
import opbridge.ops
from graphs import EXPORTERS
from opbridge.export import custom_nodes


class NmsRotated(torch.nn.Module):
    """nms_rotated after a score threshold, so that the number of boxes the NMS sees is
    data-dependent; clockwise=False, so that the attribute is written."""

    def forward(self, boxes, scores):
        keep = torch.where(scores > 0.3)[0]
        return keep[opbridge.ops.nms_rotated(boxes[keep], scores[keep], 0.4, clockwise=False)]


class BatchedNmsRotated(torch.nn.Module):
    def forward(self, boxes, scores, labels):
        keep = torch.where(scores > 0.3)[0]
        return keep[opbridge.ops.batched_nms_rotated(boxes[keep], scores[keep], labels[keep], 0.4)]


class MulticlassNmsRotated(torch.nn.Module):
    def forward(self, boxes, scores):
        return opbridge.ops.multiclass_nms_rotated(boxes, scores, 0.4, 0.2)


def rotated_boxes(count, seed, g=None):
    """Boxes in a 60 x 60 field (many overlap), each with its own random angle in [-2 pi, 2 pi]."""
    g = g or torch.Generator().manual_seed(seed)
    xy = torch.rand(count, 2, generator=g) * 60
    wh = torch.rand(count, 2, generator=g) * 20 + 4
    theta = (torch.rand(count, 1, generator=g) - 0.5) * 4 * torch.pi
    return torch.cat([xy, wh, theta], 1)


def nms_inputs(count, seed):
    g = torch.Generator().manual_seed(seed)
    boxes = rotated_boxes(count, seed, g)
    return boxes, torch.rand(count, generator=g), torch.randint(0, 3, (count,), generator=g)


def multiclass_inputs(batch, classes, count, seed):
    g = torch.Generator().manual_seed(seed)
    boxes = torch.stack([rotated_boxes(count, seed, g) for _ in range(batch)]) if batch else torch.zeros(0, count, 5)
    return boxes, torch.rand(batch, classes, count, generator=g)


def run_session(session, names, args):
    inputs = [i.name for i in session.get_inputs()]  # the legacy exporter drops an unused input
    (actual,) = session.run(None, {n: a.numpy() for n, a in zip(names, args) if n in inputs})
    return actual


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("batched", [False, True])
def test_nms_rotated_and_batched(exporter, batched):
    model = BatchedNmsRotated() if batched else NmsRotated()
    names = ["boxes", "scores", "labels"] if batched else ["boxes", "scores"]
    args = nms_inputs(60, 0)[: len(names)]
    proto = opbridge.export(model, args, exporter=exporter, dynamic_axes={n: {0: "boxes"} for n in names})
    assert custom_nodes(proto) == ["opbridge::NmsRotated"]
    node = next(n for n in proto.graph.node if n.domain == "opbridge")
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs["iou_threshold"] == pytest.approx(0.4) and attrs["clockwise"] == (1 if batched else 0)
    assert len(node.input) == (3 if batched else 2)
    session = opbridge.create_session(proto)
    for count, seed in [(60, 0), (150, 1), (3, 2), (1, 3), (0, 4)]:
        args = nms_inputs(count, seed)[: len(names)]
        expected = model(*args)
        if count >= 60:
            assert 0 < len(expected) < (args[1] > 0.3).sum()  # some suppression
        actual = run_session(session, names, args)
        assert actual.dtype == np.int64
        np.testing.assert_array_equal(actual, expected.numpy(), err_msg=f"count={count}")


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_multiclass_nms_rotated(exporter):
    model = MulticlassNmsRotated()
    proto = opbridge.export(model, multiclass_inputs(2, 3, 40, 0), exporter=exporter,
                            dynamic_axes={"boxes": {0: "batch", 1: "boxes"}, "scores": {0: "batch", 2: "boxes"}})
    assert custom_nodes(proto) == ["opbridge::MulticlassNmsRotated"]
    session = opbridge.create_session(proto)
    for shape, seed in [((2, 3, 40), 0), ((1, 3, 120), 1), ((2, 3, 1), 2), ((2, 3, 0), 3)]:
        args = multiclass_inputs(*shape, seed)
        expected = model(*args)
        actual = run_session(session, ["boxes", "scores"], args)
        assert actual.dtype == np.int64 and actual.shape[1] == 3
        np.testing.assert_array_equal(actual, expected.numpy(), err_msg=str(shape))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_multiclass_compat_mmdeploy(exporter):
    """compat="mmdeploy" writes mmdeploy::NMSRotated (same inputs, output and attributes)."""
    model = MulticlassNmsRotated()
    args = multiclass_inputs(2, 3, 40, 5)
    proto = opbridge.export(model, args, exporter=exporter, compat="mmdeploy")
    assert custom_nodes(proto) == ["mmdeploy::NMSRotated"]
    assert "opbridge" not in [o.domain for o in proto.opset_import] and \
        ("mmdeploy", 1) in [(o.domain, o.version) for o in proto.opset_import]
    node = next(n for n in proto.graph.node if n.domain == "mmdeploy")
    assert sorted(a.name for a in node.attribute) == ["iou_threshold", "score_threshold"]
    assert all(a.type == onnx.AttributeProto.FLOAT for a in node.attribute)
    actual = run_session(opbridge.create_session(proto), ["boxes", "scores"], args)
    np.testing.assert_array_equal(actual, model(*args).numpy())


@pytest.mark.parametrize("batched", [False, True])
def test_nms_rotated_has_no_mmdeploy_identity(batched):
    """opbridge::NmsRotated ([N, 5] boxes, IoU >= threshold) is not mmdeploy's NMSRotated."""
    model = BatchedNmsRotated() if batched else NmsRotated()
    args = nms_inputs(30, 0)[: 3 if batched else 2]
    with pytest.raises(ValueError, match=r"opbridge::NmsRotated has no mmdeploy identity with the same inputs, "
                                         r"outputs and attributes \(mmdeploy has mmdeploy::NMSRotated, which differ\)"):
        opbridge.export(model, args, exporter="legacy", compat="mmdeploy")
    with pytest.raises(ValueError, match=r"opbridge::NmsRotated has no mmcv identity .*\(mmcv has none\)"):
        opbridge.export(model, args, exporter="legacy", compat="mmcv")
