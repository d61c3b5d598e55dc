"""Attention workload (workloads.md has none for this op):

* attention.detr: q, k, v [8, 900, 32] float32, no mask -> out [8, 900, 32], attn [8, 900, 900].
  B = 8 is one image times 8 heads of a 256-wide transformer (E = 256 / 8 = 32); Nt = Ns = 900 is
  the query self-attention of DINO / DN-DETR decoders (900 queries), the largest attention those
  detectors run outside the encoder (whose deformable attention is another op).

mmdeploy::ScaledDotProductAttentionTRT against the graph torch.onnx.export writes for mmdeploy's
PyTorch forward (Div, MatMul, Softmax, MatMul), with either exporter, in ORT, and against eager.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, as_tensor, data_rng, export_once, one_node_model, ort_engine, sized, torch_engine

def _forward(q, k, v):
    import math

    import torch

    attn = torch.bmm(q / math.sqrt(q.shape[-1]), k.transpose(-2, -1)).softmax(-1)
    return torch.bmm(attn, v), attn


def _module():
    import torch

    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return _forward(q, k, v)

    return Attention().eval()


def _plain_export(exporter: str, feeds: dict):
    def export(path):
        import warnings

        import torch

        args = tuple(torch.from_numpy(feeds[n]) for n in ("q", "k", "v"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                torch.onnx.export(_module(), args, str(path), dynamo=True, input_names=["q", "k", "v"],
                                  external_data=False, report=False, verbose=False)
            else:
                torch.onnx.export(_module(), args, str(path), dynamo=False, opset_version=17,
                                  input_names=["q", "k", "v"])

    return export


def _torch_attention(q, k, v):
    return _forward(as_tensor(q), as_tensor(k), as_tensor(v))


def attention_detr(threads: int) -> list[Case]:
    """attention.detr: q, k, v [8, 900, 32]."""
    import onnx

    shape = sized((8, 900, 32), (2, 64, 16))
    rng = data_rng(90)
    feeds = {n: rng.standard_normal(shape, dtype=np.float32) for n in ("q", "k", "v")}
    ours = one_node_model("ScaledDotProductAttentionTRT", [(n, F32, list(shape)) for n in ("q", "k", "v")],
                          [("output", F32, list(shape)), ("attn", F32, [shape[0], shape[1], shape[1]])],
                          domain="mmdeploy")
    cases = []
    for exporter in ("dynamo", "legacy"):
        plain = onnx.load(str(export_once(f"attention_detr_plain_{exporter}", _plain_export(exporter, feeds))))
        cases.append(Case(
            name=f"attention.detr {list(shape)} vs {exporter} export",
            opbridge=ort_engine(ours, feeds, threads),
            ort=ort_engine(plain, feeds, threads),
            torch=torch_engine(_torch_attention, feeds["q"], feeds["k"], feeds["v"]),
        ))
    return cases


WORKLOADS = {"attention.detr": attention_detr}
