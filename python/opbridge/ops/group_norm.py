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

from opbridge.ops._onnx import ExportMapping
from opbridge.ops._one_node import OneNode

# Absent tensors are left out of the node (an absent scale before a present bias is an empty input).
NODE = OneNode("opbridge::GroupNorm", torch.ops.aten.group_norm.default, inputs={"scale": "weight"},
               attributes={"epsilon": "eps"})

EXPORT = ExportMapping(
    kernel="group_norm",
    dynamo=NODE.dynamo,
    legacy=NODE.legacy,
    peers_export_standard=True,
    standard_exporters=("dynamo", "legacy"),
)
