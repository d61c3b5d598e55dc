"""Keypoint decoding: torchvision's heatmaps_to_keypoints (Keypoint R-CNN's last step) as a
PyTorch op and one ONNX node.

torchvision decodes each RoI's heatmaps in a Python loop, resizing them to the RoI's size (a
data-dependent shape) before taking their argmax: torch.export cannot trace that, and the legacy
exporter writes an ONNX Loop. Inside ``opbridge.export``, ``heatmaps_to_keypoints`` is replaced by
``opbridge.ops.heatmaps_to_keypoints``, a ``torch.library`` op whose eager implementation is
torchvision's function, which exports to ``opbridge::HeatmapsToKeypoints``; its kernel reproduces
torchvision's result bit for bit.
"""

from __future__ import annotations

import torch
from onnxscript import FLOAT
from torch import Tensor
from torchvision.models.detection import roi_heads

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, FunctionPatch, symbolic_helper

_TORCHVISION_HEATMAPS_TO_KEYPOINTS = roi_heads.heatmaps_to_keypoints


def heatmaps_to_keypoints(maps: Tensor, rois: Tensor) -> tuple[Tensor, Tensor]:
    """torchvision's heatmaps_to_keypoints: maps [R, K, H, W] (keypoint logits), rois [R, 4]
    (x1, y1, x2, y2) -> keypoints [R, K, 3] (x, y, 1) and their scores [R, K]."""
    return torch.ops.opbridge.heatmaps_to_keypoints(maps, rois)


@torch.library.custom_op("opbridge::heatmaps_to_keypoints", mutates_args=())
def _heatmaps_to_keypoints_op(maps: Tensor, rois: Tensor) -> tuple[Tensor, Tensor]:
    if maps.dim() != 4 or rois.shape != (maps.shape[0], 4):
        raise ValueError(f"heatmaps_to_keypoints: maps must be [R, K, H, W] and rois [R, 4], got "
                         f"{list(maps.shape)} and {list(rois.shape)}")
    xy, scores = _TORCHVISION_HEATMAPS_TO_KEYPOINTS(maps, rois)
    return xy.contiguous(), scores


@_heatmaps_to_keypoints_op.register_fake
def _(maps, rois):
    return maps.new_empty((maps.shape[0], maps.shape[1], 3)), maps.new_empty((maps.shape[0], maps.shape[1]))


def _heatmaps_to_keypoints_replacement(maps, rois):
    """What torchvision's heatmaps_to_keypoints becomes inside opbridge.export."""
    return heatmaps_to_keypoints(maps, rois)


# --- export mappings ----------------------------------------------------------------------------


@onnxscript.script(WRAPPERS)
def _heatmaps_to_keypoints_onnx(maps: FLOAT, rois: FLOAT) -> tuple[FLOAT, FLOAT]:
    keypoints, scores = OPBRIDGE.HeatmapsToKeypoints(maps, rois)
    return keypoints, scores


def _heatmaps_to_keypoints_symbolic(g, maps, rois):
    helper = symbolic_helper()
    keypoints, scores = g.op("opbridge::HeatmapsToKeypoints", maps, rois, outputs=2)
    r, k = helper._get_tensor_dim_size(maps, 0), helper._get_tensor_dim_size(maps, 1)
    keypoints.setType(maps.type().with_sizes([r, k, 3]))
    scores.setType(maps.type().with_sizes([r, k]))
    return keypoints, scores


EXPORT = ExportMapping(
    kernel="heatmaps_to_keypoints",
    dynamo={torch.ops.opbridge.heatmaps_to_keypoints.default: _heatmaps_to_keypoints_onnx},
    legacy={"opbridge::heatmaps_to_keypoints": _heatmaps_to_keypoints_symbolic},
    patches=(FunctionPatch(roi_heads.heatmaps_to_keypoints, _heatmaps_to_keypoints_replacement),),
)
