"""The eager PyTorch ops compute on their inputs' device: every tensor they make is made there.

The GPU bench found three that made CPU tensors next to CUDA inputs and raised (RoIAlign's max mode,
the rotated NMS family, TRTBatchedNMS). A machine without a GPU catches the same mistake: under
`torch.device("meta")` a tensor made without a device is a meta tensor, and mixing it with the CPU
inputs raises just as a CPU tensor next to CUDA inputs does."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
import torch
from torch._library.custom_ops import CustomOpDef

import opbridge.ops

from opbridge.ops.nms import batched_nms, multiclass_nms
from opbridge.ops.nms_match import nms_match
from opbridge.ops.nms_rotated import batched_nms_rotated, multiclass_nms_rotated, nms_rotated
from opbridge.ops.roi_align import roi_align, roi_align_reference
from opbridge.ops.roi_align_rotated import roi_align_rotated
from opbridge.ops.rotated_feature_align import rotated_feature_align
from opbridge.ops.soft_nms import soft_nms
from opbridge.ops.trt_batched_nms import trt_batched_nms, trt_batched_rotated_nms


def _boxes(n: int) -> torch.Tensor:
    """n overlapping axis-aligned boxes (x1, y1, x2, y2)."""
    xy = torch.rand(n, 2, generator=torch.Generator().manual_seed(n)) * 8
    return torch.cat([xy, xy + 4 + xy.flip(1) / 4], 1)


def _rotated(n: int) -> torch.Tensor:
    """n overlapping rotated boxes (cx, cy, w, h, theta)."""
    g = torch.Generator().manual_seed(n)
    return torch.cat([torch.rand(n, 2, generator=g) * 4 + 4, torch.rand(n, 2, generator=g) * 3 + 3,
                      torch.rand(n, 1, generator=g)], 1)


def _scores(*shape: int) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(sum(shape)))


FEATURES = torch.rand(1, 2, 12, 12, generator=torch.Generator().manual_seed(0))
ROIS = torch.tensor([[0, 1.0, 1.0, 9.0, 7.0], [0, 2.0, 3.0, 5.0, 11.0]])
ROTATED_ROIS = torch.tensor([[0, 6.0, 6.0, 5.0, 3.0, 0.4]])

# name -> (op, its arguments), the arguments made before the meta device is set.
CALLS = {
    "roi_align avg": lambda: (roi_align, (FEATURES, ROIS, 2, 1.0, 2, True, "avg")),
    "roi_align max": lambda: (roi_align, (FEATURES, ROIS, 2, 1.0, 2, True, "max")),
    "roi_align_reference max": lambda: (roi_align_reference, (FEATURES, ROIS, 2, 2, 1.0, 2, True, "max")),
    "roi_align_rotated": lambda: (roi_align_rotated, (FEATURES, ROTATED_ROIS, 2, 1.0, 2)),
    "rotated_feature_align": lambda: (rotated_feature_align, (FEATURES, _scores(1, 12, 12, 5) * 4, 1.0, 5)),
    "batched_nms": lambda: (batched_nms, (_boxes(6), _scores(6), torch.tensor([0, 1, 0, 1, 0, 1]), 0.3)),
    "multiclass_nms": lambda: (multiclass_nms, (_boxes(6)[None], _scores(1, 2, 6), 0.3, 0.1)),
    "nms_match": lambda: (nms_match, (_boxes(6)[None], _scores(1, 2, 6), 0.3, 0.1)),
    "nms_rotated": lambda: (nms_rotated, (_rotated(6), _scores(6), 0.2)),
    "batched_nms_rotated": lambda: (batched_nms_rotated,
                                    (_rotated(6), _scores(6), torch.tensor([0, 1, 0, 1, 0, 1]), 0.2)),
    "multiclass_nms_rotated": lambda: (multiclass_nms_rotated, (_rotated(6)[None], _scores(1, 2, 6), 0.2, 0.1)),
    "soft_nms": lambda: (soft_nms, (_boxes(6), _scores(6), 0.3)),
    "trt_batched_nms": lambda: (trt_batched_nms, (_boxes(6)[None, :, None], _scores(1, 6, 2), 4, 0.3, 0.1)),
    "trt_batched_rotated_nms": lambda: (trt_batched_rotated_nms,
                                        (_rotated(6)[None, :, None], _scores(1, 6, 2), 4, 0.2, 0.1)),
}


def _run_custom_op_bodies_inline(monkeypatch):
    """torch.ops.opbridge.<op> calls the op's Python body directly: the dispatcher runs a custom op's
    body outside the caller's torch function modes, `torch.device("meta")` among them."""
    for info in pkgutil.iter_modules(opbridge.ops.__path__):
        module = importlib.import_module(f"opbridge.ops.{info.name}")
        for value in vars(module).values():
            if isinstance(value, CustomOpDef) and value._namespace == "opbridge":
                monkeypatch.setattr(torch.ops.opbridge, value._name, value._init_fn)


@pytest.mark.parametrize("name", list(CALLS))
def test_eager_op_makes_its_tensors_on_its_inputs_device(name, monkeypatch):
    _run_custom_op_bodies_inline(monkeypatch)
    op, args = CALLS[name]()
    expected = op(*args)  # on the CPU
    with torch.device("meta"):
        actual = op(*args)  # raises where the op makes a tensor without a device
    expected, actual = ((r if isinstance(r, tuple) else (r,)) for r in (expected, actual))
    assert len(actual) == len(expected)
    for e, a in zip(expected, actual):
        assert a.device.type == "cpu", f"{name} returned a {a.device.type} tensor"
        torch.testing.assert_close(a, e, equal_nan=True)
