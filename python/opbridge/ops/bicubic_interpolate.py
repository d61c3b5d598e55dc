"""Bicubic interpolation: mmdeploy's ``TRTBicubicInterpolate`` (TensorRT plugin) as a CPU op.

mmdeploy's TensorRT rewrite of ``F.interpolate(mode="bicubic")`` writes one
``mmdeploy::TRTBicubicInterpolate`` node (``scale_factor`` floats, ``align_corners``). opbridge
registers that node (and ``opbridge::BicubicInterpolate``) so that ONNX files written for
TensorRT run and verify on the CPU. PyTorch's exporters write ``F.interpolate`` as a standard
ONNX Resize (cubic), so there is no export mapping.
"""

from __future__ import annotations

from opbridge.ops._onnx import ExportMapping

EXPORT = ExportMapping(kernel="bicubic_interpolate")
