"""Group normalization: ONNX export mappings for torch.nn.GroupNorm / torch.nn.functional.group_norm.

F.group_norm reaches both exporters as aten::group_norm (torch.export keeps the composite op
aten.group_norm.default; it is not decomposed to native_group_norm), with weight and bias None
when the caller gave none. The mapping emits ``opbridge::GroupNorm(input, [scale], [bias])`` with
the attributes num_groups and epsilon, leaving absent tensors out. PyTorch has the op already, so
there is no torch-side op here.

``opbridge.export(..., standard_ops=("group_norm",))`` (either exporter) keeps PyTorch's own translation
instead: the Reshape -> InstanceNormalization -> Reshape -> Mul -> Add chain. With ``compat``
set, that chain is written too: it is how mmcv and mmdeploy export GroupNorm for ONNX Runtime.
"""

from __future__ import annotations

import torch
from onnxscript import FLOAT

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper


# One scripted function per combination of present tensors (a scripted function cannot leave an
# input out depending on a Python value).
@onnxscript.script(WRAPPERS)
def _group_norm_affine_onnx(input: FLOAT, weight: FLOAT, bias: FLOAT, num_groups: int, eps: float) -> FLOAT:
    return OPBRIDGE.GroupNorm(input, weight, bias, num_groups=num_groups, epsilon=eps)


@onnxscript.script(WRAPPERS)
def _group_norm_scale_onnx(input: FLOAT, weight: FLOAT, num_groups: int, eps: float) -> FLOAT:
    return OPBRIDGE.GroupNorm(input, weight, num_groups=num_groups, epsilon=eps)


@onnxscript.script(WRAPPERS)
def _group_norm_bias_onnx(input: FLOAT, bias: FLOAT, num_groups: int, eps: float) -> FLOAT:
    return OPBRIDGE.GroupNorm(input, None, bias, num_groups=num_groups, epsilon=eps)


@onnxscript.script(WRAPPERS)
def _group_norm_plain_onnx(input: FLOAT, num_groups: int, eps: float) -> FLOAT:
    return OPBRIDGE.GroupNorm(input, num_groups=num_groups, epsilon=eps)


def _group_norm_onnx(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Dynamo translation of aten::group_norm (parameter names are the op schema's)."""
    attrs = dict(num_groups=int(num_groups), eps=float(eps))
    if weight is not None and bias is not None:
        return _group_norm_affine_onnx(input, weight, bias, **attrs)
    if weight is not None:
        return _group_norm_scale_onnx(input, weight, **attrs)
    if bias is not None:
        return _group_norm_bias_onnx(input, bias, **attrs)
    return _group_norm_plain_onnx(input, **attrs)


def _group_norm_symbolic(g, input, num_groups, weight, bias, eps, cudnn_enabled):
    helper = symbolic_helper()
    args = helper._parse_arg
    inputs = [input]
    if not helper._is_none(bias):
        inputs += [helper._optional_input_placeholder_tensor(g) if helper._is_none(weight) else weight, bias]
    elif not helper._is_none(weight):
        inputs.append(weight)
    out = g.op("opbridge::GroupNorm", *inputs, num_groups_i=args(num_groups, "i"), epsilon_f=args(eps, "f"))
    out.setType(input.type())
    return out


EXPORT = ExportMapping(
    kernel="group_norm",
    dynamo={torch.ops.aten.group_norm.default: _group_norm_onnx},
    legacy={"aten::group_norm": _group_norm_symbolic},
    peers_export_standard=True,
    standard_exporters=("dynamo", "legacy"),
)
