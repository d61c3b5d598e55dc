"""Deformable convolution: ONNX export mappings for torchvision.ops.deform_conv2d / DeformConv2d.

torchvision.ops.deform_conv2d reaches both exporters as torchvision::deform_conv2d, always with a
mask and a bias tensor (zeros when the caller gave none) and a use_mask flag. The mapping emits
opbridge::DeformConv2d(input, offset, weight, [mask], bias), leaving the mask out when use_mask is
false. PyTorch has the op already, so there is no torch-side op here.
"""

from __future__ import annotations

from typing import Sequence

import torch
import torchvision  # noqa: F401  (registers torch.ops.torchvision.deform_conv2d)
from onnxscript import FLOAT

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper


# Scripted functions cannot build list attributes from int parameters, so the lists are made by
# the Python dispatcher below and passed in whole.
@onnxscript.script(WRAPPERS)
def _modulated_onnx(
    input: FLOAT, offset: FLOAT, weight: FLOAT, mask: FLOAT, bias: FLOAT, stride: Sequence[int],
    padding: Sequence[int], dilation: Sequence[int], groups: int, deform_groups: int,
) -> FLOAT:
    return OPBRIDGE.DeformConv2d(
        input, offset, weight, mask, bias, stride=stride, padding=padding, dilation=dilation, groups=groups,
        deform_groups=deform_groups,
    )


@onnxscript.script(WRAPPERS)
def _unmodulated_onnx(
    input: FLOAT, offset: FLOAT, weight: FLOAT, bias: FLOAT, stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], groups: int, deform_groups: int,
) -> FLOAT:
    return OPBRIDGE.DeformConv2d(
        input, offset, weight, None, bias, stride=stride, padding=padding, dilation=dilation, groups=groups,
        deform_groups=deform_groups,
    )


def _deform_conv2d_onnx(
    input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups,
    offset_groups, use_mask,
):
    """Dynamo translation of torchvision::deform_conv2d (parameter names are the op schema's)."""
    attrs = dict(stride=[int(stride_h), int(stride_w)], padding=[int(pad_h), int(pad_w)],
                 dilation=[int(dilation_h), int(dilation_w)], groups=int(groups), deform_groups=int(offset_groups))
    if use_mask:
        return _modulated_onnx(input, offset, weight, mask, bias, **attrs)
    return _unmodulated_onnx(input, offset, weight, bias, **attrs)


def _deform_conv2d_symbolic(
    g, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups,
    offset_groups, use_mask,
):
    helper = symbolic_helper()
    i = lambda v: helper._parse_arg(v, "i")  # noqa: E731
    use_mask = helper._parse_arg(use_mask, "b")
    inputs = [input, offset, weight, mask if use_mask else helper._optional_input_placeholder_tensor(g), bias]
    out = g.op(
        "opbridge::DeformConv2d", *inputs, stride_i=[i(stride_h), i(stride_w)], padding_i=[i(pad_h), i(pad_w)],
        dilation_i=[i(dilation_h), i(dilation_w)], groups_i=i(groups), deform_groups_i=i(offset_groups),
    )
    size = helper._get_tensor_dim_size
    out.setType(input.type().with_sizes([size(input, 0), size(weight, 0), size(offset, 2), size(offset, 3)]))
    return out


EXPORT = ExportMapping(
    kernel="deform_conv",
    dynamo={torch.ops.torchvision.deform_conv2d.default: _deform_conv2d_onnx},
    legacy={"torchvision::deform_conv2d": _deform_conv2d_symbolic},
    standard_exporters=("dynamo",),
)
