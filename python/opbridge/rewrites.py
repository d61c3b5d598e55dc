"""Rewrites of torchvision's detection code that opbridge.export applies while it exports.

torchvision's detection models branch in Python on sizes that depend on the data (how many
proposals survive, how many detections an image has), which torch.export cannot trace. Each
rewrite here replaces one such function or method, for the duration of an export only, by one
that computes the same results without the branch. The ops that need a kernel of their own
(batched NMS, multi-scale RoIAlign, mask pasting, keypoint decoding) are replaced in their op's
module (opbridge/ops/<kernel>.py) instead; this module holds the rewrites that need no op.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torchvision.models.detection import _utils as det_utils
from torchvision.models.detection import faster_rcnn, mask_rcnn, ssd, transform
from torchvision.ops import boxes as box_ops

from opbridge.detection import top_above
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
    # The largest size along each axis, and the height and width rounded up to a multiple of
    # size_divisible, in integer arithmetic with torch.sym_max: where the sizes are symbolic (the
    # dynamo exporter's dynamic height and width), Python's max and math.ceil would compare or
    # convert them, which torch.export's tracing either refuses or bakes in as the example's values.
    # On plain ints the values are torchvision's (ceil(size / stride) * stride).
    max_size = list(images[0].shape)
    for img in images[1:]:
        max_size = [torch.sym_max(a, b) for a, b in zip(max_size, img.shape)]
    max_size[1] = (max_size[1] + size_divisible - 1) // size_divisible * size_divisible
    max_size[2] = (max_size[2] + size_divisible - 1) // size_divisible * size_divisible
    padded = [F.pad(img, (0, max_size[2] - img.shape[2], 0, max_size[1] - img.shape[1], 0, max_size[0] - img.shape[0]))
              for img in images]
    return torch.stack(padded)


_torchvision_resize_image_and_masks = transform._resize_image_and_masks


def _resize_image_and_masks(image: torch.Tensor, self_min_size: int, self_max_size: int, target=None,
                            fixed_size=None):
    """torchvision's resize of an image to the transform's min_size / max_size with the scale's min
    and max taken by torch.sym_min / sym_max instead of Python's min and max: on an image whose
    height and width are dynamic those compare symbolic sizes, which torch.export's non-strict
    tracing refuses as control flow, so the dynamo exporter fell back to strict tracing (57 s of
    Faster R-CNN's 104 s verify on the 2-core development VM). On plain ints sym_min and sym_max are
    min and max: the same float64 scale as torchvision's. Under the legacy exporter's tracer, and for
    a fixed size or a target, torchvision's own code."""
    if torch.jit.is_tracing() or fixed_size is not None or target is not None:
        return _torchvision_resize_image_and_masks(image, self_min_size, self_max_size, target, fixed_size)
    height, width = image.shape[-2:]
    scale_factor = torch.sym_min(self_min_size / torch.sym_min(height, width),
                                 self_max_size / torch.sym_max(height, width))
    image = F.interpolate(image[None], scale_factor=scale_factor, mode="bilinear", recompute_scale_factor=True,
                          align_corners=False)[0]
    return image, target


def _ssd_postprocess_detections(self, head_outputs: dict[str, torch.Tensor], image_anchors: list[torch.Tensor],
                                image_shapes: list[tuple[int, int]]) -> list[dict[str, torch.Tensor]]:
    """SSD.postprocess_detections with all classes of an image at once, instead of a Python loop over
    them: torchvision's loop unrolls into the graph, a TopK and its gathers per class (90 for the COCO
    models): SSD300's legacy export had 3,276 nodes instead of 1,263, and its dynamo export took 72 s
    instead of 9 s (most of it in onnxscript's rewriter, on the 2-core development VM). The candidates
    are the same, in the same order: per class, the top topk_candidates of the scores above the
    threshold in descending order (top_above), class after class; then batched NMS and the first
    detections_per_img, as torchvision does."""
    pred_scores = F.softmax(head_outputs["cls_logits"], dim=-1)
    num_classes = pred_scores.size(-1)
    detections = []
    for boxes, scores, anchors, image_shape in zip(head_outputs["bbox_regression"], pred_scores, image_anchors,
                                                   image_shapes):
        boxes = box_ops.clip_boxes_to_image(self.box_coder.decode_single(boxes, anchors), image_shape)
        top, top_scores, valid = top_above(scores[:, 1:].t(), self.score_thresh, self.topk_candidates)
        labels = torch.arange(1, num_classes, device=scores.device)[:, None].expand_as(top)
        chosen = torch.where(valid.reshape(-1))[0]  # [classes - 1, k] row by row: class after class
        image_boxes = boxes[top.reshape(-1)[chosen]]
        image_scores, image_labels = top_scores.reshape(-1)[chosen], labels.reshape(-1)[chosen]
        keep = box_ops.batched_nms(image_boxes, image_scores, image_labels, self.nms_thresh)
        keep = keep[: self.detections_per_img]
        detections.append({"boxes": image_boxes[keep], "scores": image_scores[keep], "labels": image_labels[keep]})
    return detections


PATCHES = (
    AttributePatch(det_utils.BoxCoder, "decode", _box_coder_decode),
    AttributePatch(faster_rcnn.FastRCNNConvFCHead, "forward", _head_forward_without_batch_norm_op),
    AttributePatch(mask_rcnn.MaskRCNNHeads, "forward", _head_forward_without_batch_norm_op),
    AttributePatch(transform.GeneralizedRCNNTransform, "batch_images", _batch_images),
    AttributePatch(ssd.SSD, "postprocess_detections", _ssd_postprocess_detections),
    AttributePatch(transform, "_resize_image_and_masks", _resize_image_and_masks),
)
