"""Gather of top-k rows: mmdeploy's ``GatherTopk`` (TensorRT plugin) as a CPU op.

mmdeploy's TensorRT rewrite of mmdet's ``__gather_topk`` writes ``x[batch_inds, inds, ...]``
(``batch_inds = arange(B)[:, None]``, inds from ``topk``) as one ``mmdeploy::GatherTopk`` node.
opbridge registers that node (and ``opbridge::GatherTopk``) so that ONNX files written for
TensorRT run and verify on the CPU. PyTorch has its own function for this (advanced indexing),
which its exporters already write with standard ONNX ops, so there is no export mapping.
"""

from __future__ import annotations

from opbridge.ops._onnx import ExportMapping

EXPORT = ExportMapping(kernel="gather_topk")
