"""GatherTopk workloads (workloads.md has none for this op; the shapes are mmdet's pre-NMS top-k of
one detector level, as mmdeploy exports it for TensorRT):

* gather_topk.scores: data [2, 20000, 80] float32 (class scores of 20000 anchors per image),
  indices [2, 1000] int64 -> [2, 1000, 80];
* gather_topk.boxes: data [2, 20000, 4] float32 (their boxes), the same indices -> [2, 1000, 4].

opbridge::GatherTopk against the graph torch.onnx.export writes for ``x[batch_inds, inds, ...]``
(the function mmdeploy's node replaces), with either exporter, in ORT, and against PyTorch eager.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import (F32, I64, Case, as_tensor, data_rng, export_once, one_node_model, ort_engine, sized,
                                    torch_engine)

BATCH = 2


def _sizes() -> tuple[int, int]:
    """(anchors, picks) per image."""
    return sized((20000, 1000), (500, 50))


def _inputs(channels: int, salt: int) -> tuple[np.ndarray, np.ndarray]:
    rng = data_rng(salt)
    anchors, picks = _sizes()
    data = rng.standard_normal((BATCH, anchors, channels), dtype=np.float32)
    indices = np.stack([rng.permutation(anchors)[:picks] for _ in range(BATCH)]).astype(np.int64)
    return data, indices


def _gather(x, inds):
    import torch

    batch_inds = torch.arange(x.shape[0], device=x.device).unsqueeze(-1)
    return x[batch_inds, inds, ...]


def _module():
    import torch

    class GatherTopk(torch.nn.Module):
        def forward(self, x, inds):
            return _gather(x, inds)

    return GatherTopk().eval()


def _plain_export(exporter: str, data: np.ndarray, indices: np.ndarray):
    """torch.onnx.export of x[batch_inds, inds, ...] with standard ONNX ops; inputs data and indices."""

    def export(path):
        import warnings

        import torch

        args = (torch.from_numpy(data), torch.from_numpy(indices))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                torch.onnx.export(_module(), args, str(path), dynamo=True, input_names=["data", "indices"],
                                  external_data=False, report=False, verbose=False)
            else:
                torch.onnx.export(_module(), args, str(path), dynamo=False, opset_version=17,
                                  input_names=["data", "indices"])

    return export


def _torch_gather(data, indices):
    import torch

    return _gather(as_tensor(data), as_tensor(indices))


def _cases(name: str, channels: int, salt: int, threads: int) -> list[Case]:
    import onnx

    data, indices = _inputs(channels, salt)
    ours = one_node_model("GatherTopk", [("data", F32, list(data.shape)), ("indices", I64, list(indices.shape))],
                          [("output", F32, [BATCH, indices.shape[1], channels])], domain="mmdeploy")
    feeds = {"data": data, "indices": indices}
    cases = []
    for exporter in ("dynamo", "legacy"):
        plain = onnx.load(str(export_once(f"{name}_plain_{exporter}", _plain_export(exporter, data, indices))))
        cases.append(Case(
            name=f"{name} {list(data.shape)} vs {exporter} export",
            opbridge=ort_engine(ours, feeds, threads),
            ort=ort_engine(plain, feeds, threads),
            torch=torch_engine(_torch_gather, data, indices),
        ))
    return cases


def gather_topk_scores(threads: int) -> list[Case]:
    """gather_topk.scores: [2, 20000, 80] scores, 1000 picks per image."""
    return _cases("gather_topk.scores", 80, 61, threads)


def gather_topk_boxes(threads: int) -> list[Case]:
    """gather_topk.boxes: [2, 20000, 4] boxes, 1000 picks per image."""
    return _cases("gather_topk.boxes", 4, 62, threads)


WORKLOADS = {"gather_topk.scores": gather_topk_scores, "gather_topk.boxes": gather_topk_boxes}
