"""Mask pasting: torchvision's paste_masks_in_image (Mask R-CNN's last step) as a PyTorch op and
one ONNX node.

torchvision pastes each mask with a Python loop over the detections, resizing it to its box's
size (a data-dependent shape): torch.export cannot trace that, and the legacy exporter writes an
ONNX Loop. Inside ``opbridge.export``, ``paste_masks_in_image`` is replaced by
``opbridge.ops.paste_masks``, a ``torch.library`` op whose eager implementation is torchvision's
function, which exports to ``opbridge::PasteMasks``; its kernel reproduces torchvision's result
bit for bit.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torchvision.models.detection import roi_heads

from opbridge.ops._onnx import ExportMapping, FunctionPatch, float32_of_half
from opbridge.ops._one_node import OneNode

# torchvision's function, kept before opbridge.export patches the module during an export.
_TORCHVISION_PASTE_MASKS = roi_heads.paste_masks_in_image


def paste_masks(masks: Tensor, boxes: Tensor, image_size, padding: int = 1) -> Tensor:
    """torchvision's paste_masks_in_image: masks [N, 1, M, M] (probabilities), boxes [N, 4]
    (x1, y1, x2, y2) in the image, image_size (height, width) -> [N, 1, height, width].

    image_size may be a pair of ints or an int64 tensor [2]. The op takes it as a tensor, so that
    an export with dynamic image sizes (either exporter) reads it from the graph."""
    if not isinstance(image_size, Tensor):
        image_size = torch.stack([torch.scalar_tensor(image_size[0], dtype=torch.int64),
                                  torch.scalar_tensor(image_size[1], dtype=torch.int64)])
    return torch.ops.opbridge.paste_masks(masks, boxes, image_size, int(padding))


@torch.library.custom_op("opbridge::paste_masks", mutates_args=())
def _paste_masks_op(masks: Tensor, boxes: Tensor, image_size: Tensor, padding: int) -> Tensor:
    if masks.dim() != 4 or masks.shape[1] != 1 or masks.shape[2] != masks.shape[3]:
        raise ValueError(f"paste_masks: masks must have shape [N, 1, M, M], got {list(masks.shape)}")
    if image_size.shape != (2,):
        raise ValueError(f"paste_masks: image_size must have shape [2], got {list(image_size.shape)}")
    height, width = (int(v) for v in image_size.tolist())
    # Half masks and boxes: torchvision's function in float32 on their values, rounded once, as
    # opbridge::PasteMasks computes.
    (masks, boxes), half = float32_of_half(masks, boxes)
    pasted = _TORCHVISION_PASTE_MASKS(masks, boxes, (height, width), padding)
    return pasted if half is None else pasted.to(half)


@_paste_masks_op.register_fake
def _(masks, boxes, image_size, padding):
    # The image size is data: the output's height and width are sizes known only at run time.
    ctx = torch.library.get_ctx()
    return masks.new_empty((masks.shape[0], 1, ctx.new_dynamic_size(), ctx.new_dynamic_size()))


def _paste_masks_replacement(masks, boxes, img_shape, padding=1):
    """What torchvision's paste_masks_in_image becomes inside opbridge.export."""
    return paste_masks(masks, boxes, (img_shape[0], img_shape[1]), padding)


# --- export mappings ----------------------------------------------------------------------------

NODE = OneNode("opbridge::PasteMasks", torch.ops.opbridge.paste_masks.default,
               sizes=lambda shapes: [[shapes.dim("masks", 0), 1, None, None]])

EXPORT = ExportMapping(
    kernel="paste_masks",
    dynamo=NODE.dynamo,
    legacy=NODE.legacy,
    patches=(FunctionPatch(roi_heads.paste_masks_in_image, _paste_masks_replacement),),
)
