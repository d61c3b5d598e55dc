"""BicubicInterpolate workload (workloads.md has none for this op; the shape is a mid-sized
feature-map upsampling):

* bicubic_interpolate: input [2, 64, 128, 128] float32, scale_factor (2, 2) -> [2, 64, 256, 256],
  align_corners 0 and 1.

mmdeploy::TRTBicubicInterpolate against the graph torch.onnx.export writes for
F.interpolate(mode="bicubic") (ONNX Resize, mode cubic, cubic_coeff_a -0.75), with either
exporter, in ORT, and against PyTorch eager.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import (F32, Case, as_tensor, data_rng, export_once, one_node_model, ort_engine, sized,
                                    torch_engine)

SCALE = 2.0


def _module(align_corners: bool):
    import torch

    class Upsample(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.interpolate(x, scale_factor=SCALE, mode="bicubic", align_corners=align_corners)

    return Upsample().eval()


def _plain_export(exporter: str, x: np.ndarray, align_corners: bool):
    def export(path):
        import warnings

        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                torch.onnx.export(_module(align_corners), (torch.from_numpy(x),), str(path), dynamo=True,
                                  input_names=["input"], external_data=False, report=False, verbose=False)
            else:
                torch.onnx.export(_module(align_corners), (torch.from_numpy(x),), str(path), dynamo=False,
                                  opset_version=17, input_names=["input"])

    return export


def _torch_bicubic(x, align_corners):
    import torch

    return torch.nn.functional.interpolate(as_tensor(x), scale_factor=SCALE, mode="bicubic",
                                           align_corners=align_corners)


def bicubic_interpolate(threads: int) -> list[Case]:
    """bicubic_interpolate: [2, 64, 128, 128] x 2, align_corners 0 and 1."""
    import onnx

    shape = sized((2, 64, 128, 128), (1, 4, 16, 16))
    x = data_rng(80).standard_normal(shape, dtype=np.float32)
    out_shape = [shape[0], shape[1], int(shape[2] * SCALE), int(shape[3] * SCALE)]
    cases = []
    for align in (0, 1):
        ours = one_node_model("TRTBicubicInterpolate", [("input", F32, list(shape))], [("output", F32, out_shape)],
                              domain="mmdeploy", scale_factor=[SCALE, SCALE], align_corners=align)
        for exporter in ("dynamo", "legacy"):
            plain = onnx.load(str(export_once(f"bicubic_interpolate_{align}_plain_{exporter}",
                                              _plain_export(exporter, x, bool(align)))))
            cases.append(Case(
                name=f"bicubic_interpolate align_corners={align} vs {exporter} export",
                opbridge=ort_engine(ours, {"input": x}, threads),
                ort=ort_engine(plain, {"input": x}, threads),
                torch=torch_engine(_torch_bicubic, x, bool(align)),
            ))
    return cases


WORKLOADS = {"bicubic_interpolate": bicubic_interpolate}
