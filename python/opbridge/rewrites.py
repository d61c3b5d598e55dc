"""Rewrites of torchvision's detection code that opbridge.export applies while it exports.

torchvision's detection models branch in Python on sizes that depend on the data (how many
proposals survive, how many detections an image has), which torch.export cannot trace. Each
rewrite here replaces one such function or method, for the duration of an export only, by one
that computes the same results without the branch. The ops that need a kernel of their own
(batched NMS, multi-scale RoIAlign, mask pasting, keypoint decoding) are replaced in their op's
module (opbridge/ops/<kernel>.py) instead; this module holds the rewrites that need no op.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torchvision.models.detection import _utils as det_utils
from torchvision.models.detection import faster_rcnn, mask_rcnn, transform

from opbridge.ops._onnx import AttributePatch


def _box_coder_decode(self, rel_codes: torch.Tensor, boxes: list[torch.Tensor]) -> torch.Tensor:
    """torchvision's BoxCoder.decode without its `if box_sum > 0` branches.

    torchvision reshapes rel_codes to (box_sum, -1) and the decoded boxes to (box_sum, -1, 4)
    only when there are boxes, because reshape cannot infer -1 from zero elements. The first
    reshape does not change the 2-D rel_codes every caller passes; the second is written as an
    unflatten of the last dimension, which needs no count. With no boxes the result is
    [0, classes, 4] instead of torchvision's [0, classes * 4]: both hold nothing, and the callers
    (RPN filtering, box post-processing) reshape them to the same empty results.
    """
    concat_boxes = torch.cat(boxes, dim=0)
    if rel_codes.dim() != 2:
        rel_codes = rel_codes.reshape(concat_boxes.shape[0], -1)
    pred_boxes = self.decode_single(rel_codes, concat_boxes)
    return pred_boxes.unflatten(-1, (-1, 4))


def _batch_norm_eval(layer: torch.nn.BatchNorm2d, x: torch.Tensor) -> torch.Tensor:
    """An eval-mode BatchNorm2d as the arithmetic it is: (x - mean) / sqrt(var + eps) * w + b."""
    shape = (1, -1, 1, 1)
    scale = torch.rsqrt(layer.running_var + layer.eps)
    if layer.weight is not None:
        scale = scale * layer.weight
    x = (x - layer.running_mean.reshape(shape)) * scale.reshape(shape)
    return x + layer.bias.reshape(shape) if layer.bias is not None else x


def _run_without_batch_norm_op(module: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    if isinstance(module, torch.nn.BatchNorm2d) and not module.training:
        return _batch_norm_eval(module, x)
    if isinstance(module, torch.nn.Sequential):
        for layer in module:
            x = _run_without_batch_norm_op(layer, x)
        return x
    return module(x)


def _head_forward_without_batch_norm_op(self, x: torch.Tensor) -> torch.Tensor:
    """The forward of a RoI head that is a Sequential with batch norms (fasterrcnn_resnet50_fpn_v2's
    box head FastRCNNConvFCHead, maskrcnn_resnet50_fpn_v2's mask head MaskRCNNHeads: convolutions
    each followed by a BatchNorm2d), with the batch norms written out. The heads' input holds one
    row per RoI, a data-dependent count (the proposals, the detections: Min(100, u5)), and
    torch.export cannot trace aten.batch_norm on it: the op guards on its input being empty
    (GuardOnDataDependentSymNode on Eq(50176*Min(100, u5), 0) in the mask head). The arithmetic is
    the batch norm's; only its rounding can differ, by float32 ulps. The batched export's heads see
    the same data-dependent counts (the kept proposals and detections of all images)."""
    for layer in self:
        x = _run_without_batch_norm_op(layer, x)
    return x


def _batch_images(self, images: list[torch.Tensor], size_divisible: int = 32) -> torch.Tensor:
    """GeneralizedRCNNTransform.batch_images with each image padded by F.pad, instead of copied into
    a zero tensor: the copy exports as a ScatterElements over the whole batch (31 ms of Faster
    R-CNN's 1.3 s in ORT at 800 x 800), the padding as a Pad. The values are the same: the image,
    then zeros up to the batch's size rounded up to a multiple of size_divisible.

    Under the legacy exporter's tracer this keeps torchvision's own tracing path (which pads with
    F.pad too): the Python arithmetic below on traced sizes would become constants there, baking
    the example's padded size into the graph (found by verify's check at other image sizes)."""
    if torch.jit.is_tracing():
        return self._onnx_batch_images(images, size_divisible)
    max_size = self.max_by_axis([list(img.shape) for img in images])
    stride = float(size_divisible)
    max_size = list(max_size)
    max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
    max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)
    padded = [F.pad(img, (0, max_size[2] - img.shape[2], 0, max_size[1] - img.shape[1], 0, max_size[0] - img.shape[0]))
              for img in images]
    return torch.stack(padded)


PATCHES = (
    AttributePatch(det_utils.BoxCoder, "decode", _box_coder_decode),
    AttributePatch(faster_rcnn.FastRCNNConvFCHead, "forward", _head_forward_without_batch_norm_op),
    AttributePatch(mask_rcnn.MaskRCNNHeads, "forward", _head_forward_without_batch_norm_op),
    AttributePatch(transform.GeneralizedRCNNTransform, "batch_images", _batch_images),
)
