"""Corner pooling workloads (workloads.md: corner_pool): opbridge::CornerPool against PyTorch eager
(torch.cummax with flips, mmcv's CornerPool.forward) and, as ORT has no such op, the standard-ONNX
log-step scan of values only run in ORT (see bench/cummax.py)."""

from __future__ import annotations

import numpy as np

from opbridge.bench.cummax import log_step_scan_model
from opbridge.bench.harness import F32, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine

# mmcv's mode codes, the axis each scans and whether from the far end (top, left).
MODES = {"top": (0, 2, True), "bottom": (1, 2, False), "left": (2, 3, True), "right": (3, 3, False)}


def _torch_corner_pool(x, dim, flip):
    import torch

    t = as_tensor(x)
    if flip:
        t = t.flip(dim)
    pooled = torch.cummax(t, dim)[0]
    return pooled.flip(dim) if flip else pooled


def corner_pool(threads: int) -> list[Case]:
    """corner_pool: [1,128,128,128], the 4 modes."""
    x = data_rng(22).standard_normal(sized((1, 128, 128, 128), (1, 4, 16, 16)), dtype=np.float32)
    cases = []
    for name, (mode, dim, flip) in MODES.items():
        ours = one_node_model("CornerPool", [("input", F32, x.shape)], [("output", F32, x.shape)], domain="opbridge",
                              mode=mode)
        cases.append(Case(
            name=f"corner_pool {name}",
            opbridge=ort_engine(ours, {"input": x}, threads),
            ort=ort_engine(log_step_scan_model(x.shape, dim, False, flip, False), {"x": x}, threads),
            torch=torch_engine(_torch_corner_pool, x, dim, flip),
        ))
    return cases


WORKLOADS = {
    "corner_pool": corner_pool,
}
