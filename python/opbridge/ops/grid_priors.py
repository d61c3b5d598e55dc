"""Grid priors: mmdeploy's ``GridPriorsTRT`` (TensorRT plugin) as a CPU op.

mmdeploy's TensorRT rewrite of mmdet's ``AnchorGenerator.single_level_grid_priors`` writes one
``mmdeploy::GridPriorsTRT`` node (base anchors, two ``ConstantOfShape`` zeros whose lengths are
the feature map's height and width, ``stride_h`` and ``stride_w``). opbridge registers that node
(and ``opbridge::GridPriors``) so that ONNX files written for TensorRT run and verify on the CPU.
The PyTorch side is mmdet's own formula (arange, meshgrid, add), which PyTorch's exporters write
with standard ONNX ops, so there is no export mapping.
"""

from __future__ import annotations

from opbridge.ops._onnx import ExportMapping

EXPORT = ExportMapping(kernel="grid_priors")
