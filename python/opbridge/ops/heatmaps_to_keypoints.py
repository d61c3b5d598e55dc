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
from torch import Tensor
from torchvision.models.detection import roi_heads

from opbridge.ops._onnx import ExportMapping, FunctionPatch
from opbridge.ops._one_node import OneNode

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

NODE = OneNode("opbridge::HeatmapsToKeypoints", torch.ops.opbridge.heatmaps_to_keypoints.default,
               sizes=lambda shapes: [[shapes.dim("maps", 0), shapes.dim("maps", 1), 3],
                                     [shapes.dim("maps", 0), shapes.dim("maps", 1)]])

EXPORT = ExportMapping(
    kernel="heatmaps_to_keypoints",
    dynamo=NODE.dynamo,
    legacy=NODE.legacy,
    patches=(FunctionPatch(roi_heads.heatmaps_to_keypoints, _heatmaps_to_keypoints_replacement),),
)
