"""Deformable convolution: ONNX export mappings for torchvision.ops.deform_conv2d / DeformConv2d.

torchvision.ops.deform_conv2d reaches both exporters as torchvision::deform_conv2d, always with a
mask and a bias tensor (zeros when the caller gave none) and a use_mask flag. The mapping emits
opbridge::DeformConv2d(input, offset, weight, [mask], bias), leaving the mask out when use_mask is
false. PyTorch has the op already, so there is no torch-side op here.
"""

from __future__ import annotations

import torch
import torchvision  # noqa: F401  (registers torch.ops.torchvision.deform_conv2d)

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode

NODE = OneNode(
    "opbridge::DeformConv2d", torch.ops.torchvision.deform_conv2d.default,
    inputs={"mask": lambda arguments: arguments.mask if arguments.use_mask else None},
    attributes={"stride": lambda arguments: [arguments.stride_h, arguments.stride_w],
                "padding": lambda arguments: [arguments.pad_h, arguments.pad_w],
                "dilation": lambda arguments: [arguments.dilation_h, arguments.dilation_w],
                "deform_groups": "offset_groups"},
    sizes=lambda shapes: [[shapes.dim("input", 0), shapes.dim("weight", 0), shapes.dim("offset", 2),
                           shapes.dim("offset", 3)]],
)

EXPORT = ExportMapping(
    kernel="deform_conv",
    dynamo=NODE.dynamo,
    legacy=NODE.legacy,
    standard_exporters=("dynamo",),
)
