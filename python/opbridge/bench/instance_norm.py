"""Normalization workloads (workloads.md: norm): norm.instance, opbridge::InstanceNorm of
[8, 64, 128, 128] (epsilon 1e-5) against ORT's InstanceNormalization and
torch.nn.functional.instance_norm. The data and norm.group are in opbridge/bench/group_norm.py."""

from __future__ import annotations

from opbridge.bench.group_norm import EPSILON, norm_data, norm_io
from opbridge.bench.harness import Case, as_tensor, one_node_model, ort_engine, torch_engine


def _torch_instance_norm(x, scale, bias):
    import torch
    import torch.nn.functional as F

    return F.instance_norm(as_tensor(x), weight=as_tensor(scale), bias=as_tensor(bias), eps=EPSILON)


def norm_instance(threads: int) -> list[Case]:
    """norm.instance: one plane of 128 x 128 per (sample, channel)."""
    x, scale, bias = norm_data()
    ours = one_node_model("InstanceNorm", *norm_io("scale", "B"), domain="opbridge", epsilon=EPSILON)
    builtin = one_node_model("InstanceNormalization", *norm_io("scale", "B"), epsilon=EPSILON)
    feeds = {"input": x, "scale": scale, "B": bias}
    return [Case(
        name="norm.instance",
        opbridge=ort_engine(ours, feeds, threads),
        ort=ort_engine(builtin, feeds, threads),
        torch=torch_engine(_torch_instance_norm, x, scale, bias),
    )]


WORKLOADS = {
    "norm.instance": norm_instance,
}
