"""Instance normalization: ONNX export mappings for torch.nn.InstanceNorm1d/2d/3d and
torch.nn.functional.instance_norm.

F.instance_norm reaches both exporters as aten::instance_norm. When it normalizes by the input's
own statistics (use_input_stats, the case of every InstanceNorm module without
track_running_stats, and of F.instance_norm without running stats) the mapping emits
``opbridge::InstanceNorm(input, scale, B)``, with scale 1 and B 0 where the caller gave no
weight or bias (the op's inputs are required, as ONNX InstanceNormalization's are). Normalizing
by running statistics is a batch normalization: that case keeps PyTorch's own translation.

``opbridge.export(..., standard_ops=("instance_norm",))`` (either exporter) writes ONNX
InstanceNormalization as PyTorch does; so does ``compat``, since mmcv and mmdeploy export it so
for ONNX Runtime (their instance norm plugins are TensorRT's).
"""

from __future__ import annotations

import torch
from onnxscript import FLOAT
from onnxscript import opset18 as op

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, ExportMapping, symbolic_helper


@onnxscript.script(WRAPPERS)
def _instance_norm_onnx(input: FLOAT, weight: FLOAT, bias: FLOAT, eps: float) -> FLOAT:
    return OPBRIDGE.InstanceNorm(input, weight, bias, epsilon=eps)


def _instance_norm_dispatch(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                            cudnn_enabled):
    """Dynamo translation of aten::instance_norm (parameter names are the op schema's)."""
    if not use_input_stats:
        from onnxscript.function_libs.torch_lib.ops.core import aten_instance_norm

        return aten_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                                  cudnn_enabled)
    channels = op.Shape(input, start=1, end=2)
    if weight is None:
        weight = op.Expand(op.Constant(value_floats=[1.0]), channels)
    if bias is None:
        bias = op.Expand(op.Constant(value_floats=[0.0]), channels)
    return _instance_norm_onnx(input, weight, bias, eps=float(eps))


def _torch_instance_norm_symbolic():
    """torch's own legacy symbolic of aten::instance_norm (moved in torch 2.9; the old path is a shim)."""
    try:
        from torch.onnx._internal.torchscript_exporter import symbolic_opset9
    except ImportError:  # pragma: no cover - older torch
        from torch.onnx import symbolic_opset9
    return symbolic_opset9.instance_norm


def _instance_norm_symbolic(g, input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                            cudnn_enabled):
    helper = symbolic_helper()
    if not helper._parse_arg(use_input_stats, "b"):
        return _torch_instance_norm_symbolic()(g, input, weight, bias, running_mean, running_var, use_input_stats,
                                               momentum, eps, cudnn_enabled)
    channels = helper._slice_helper(g, g.op("Shape", input), axes=[0], starts=[1], ends=[2])
    if helper._is_none(weight):
        weight = g.op("Expand", g.op("Constant", value_t=torch.tensor([1.0])), channels)
    if helper._is_none(bias):
        bias = g.op("Expand", g.op("Constant", value_t=torch.tensor([0.0])), channels)
    out = g.op("opbridge::InstanceNorm", input, weight, bias, epsilon_f=helper._parse_arg(eps, "f"))
    out.setType(input.type())
    return out


EXPORT = ExportMapping(
    kernel="instance_norm",
    dynamo={torch.ops.aten.instance_norm.default: _instance_norm_dispatch},
    legacy={"aten::instance_norm": _instance_norm_symbolic},
    peers_export_standard=True,
    standard_exporters=("dynamo", "legacy"),
)
