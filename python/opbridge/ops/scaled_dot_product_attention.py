"""Scaled dot-product attention: mmdeploy's ``ScaledDotProductAttentionTRT`` (TensorRT plugin) as a
CPU op.

mmdeploy's TensorRT rewrite of ``F._scaled_dot_product_attention`` (nn.MultiheadAttention's inner
step) writes one ``mmdeploy::ScaledDotProductAttentionTRT`` node (q, k, v, an optional additive
mask; outputs the result and the attention weights). opbridge registers that node (and
``opbridge::ScaledDotProductAttention``) so that ONNX files written for TensorRT run and verify on
the CPU. PyTorch's exporters write attention with MatMul and Softmax, so there is no export mapping.
"""

from __future__ import annotations

from opbridge.ops._onnx import ExportMapping

EXPORT = ExportMapping(kernel="scaled_dot_product_attention")
