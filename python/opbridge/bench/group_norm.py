"""Normalization workloads (workloads.md: norm): [8, 64, 128, 128], epsilon 1e-5.

norm.group: opbridge::GroupNorm with 32 groups against ORT's GroupNormalization-21 and
torch.nn.functional.group_norm. The instance normalization of the same input (norm.instance) is
in opbridge/bench/instance_norm.py; both use the data made here.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine

EPSILON = 1e-5


def norm_shape() -> tuple[int, int, int, int]:
    """[8, 64, 128, 128] (a smoke run: [2, 64, 16, 16])."""
    return sized((8, 64, 128, 128), (2, 64, 16, 16))


def norm_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The workload's input [8, 64, 128, 128] and a per-channel scale and bias, all N(0, 1)."""
    rng = data_rng(21)
    shape = norm_shape()
    x = rng.standard_normal(shape, dtype=np.float32)
    return x, rng.standard_normal(shape[1], dtype=np.float32), rng.standard_normal(shape[1], dtype=np.float32)


def norm_io(scale_name: str, bias_name: str) -> tuple[list, list]:
    """The (inputs, outputs) of a one-node normalization model of the workload's shape."""
    shape = norm_shape()
    c = [shape[1]]
    return [("input", F32, shape), (scale_name, F32, c), (bias_name, F32, c)], [("output", F32, shape)]


def _torch_group_norm(x, scale, bias, groups):
    import torch
    import torch.nn.functional as F

    return F.group_norm(as_tensor(x), groups, as_tensor(scale), as_tensor(bias), EPSILON)


def norm_group(threads: int) -> list[Case]:
    """norm.group: 32 groups of 2 channels."""
    x, scale, bias = norm_data()
    ours = one_node_model("GroupNorm", *norm_io("scale", "bias"), domain="opbridge", num_groups=32, epsilon=EPSILON)
    builtin = one_node_model("GroupNormalization", *norm_io("scale", "bias"), opset=21, num_groups=32, epsilon=EPSILON)
    feeds = {"input": x, "scale": scale, "bias": bias}
    return [Case(
        name="norm.group 32 groups",
        opbridge=ort_engine(ours, feeds, threads),
        ort=ort_engine(builtin, feeds, threads),
        torch=torch_engine(_torch_group_norm, x, scale, bias, 32),
    )]


WORKLOADS = {
    "norm.group": norm_group,
}
