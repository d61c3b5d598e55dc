"""Deformable convolution workloads (workloads.md: dcn.large, dcn.groups, dcn.small): opbridge::DeformConv2d
against ORT's DeformConv (opset 19) and torchvision.ops.deform_conv2d, with GFLOP/s and a plain sgemm."""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine


def _torchvision_deform_conv(x, offset, weight, bias, mask, stride, padding, dilation):
    import torch
    import torchvision

    t = lambda a: None if a is None else as_tensor(a)  # noqa: E731
    return torchvision.ops.deform_conv2d(t(x), t(offset), t(weight), t(bias), stride, padding, dilation, t(mask))


_SGEMM_OPERANDS: dict = {}


def _plain_sgemm(m, k, n):
    """torch.mm of an [m, k] by a [k, n] float32 matrix; the operands are made on the first call
    (not when the case is built, so that memory children do not count them)."""
    import torch

    if (m, k, n) not in _SGEMM_OPERANDS:
        rng = data_rng(12)
        _SGEMM_OPERANDS[(m, k, n)] = (as_tensor(rng.standard_normal((m, k), dtype=np.float32)),
                                      as_tensor(rng.standard_normal((k, n), dtype=np.float32)))
    a, b = _SGEMM_OPERANDS[(m, k, n)]
    return torch.mm(a, b)


def _dcn_cases(name, threads, n, c, h, w, c_out, k, stride, padding, dilation, groups, dgroups, variants):
    """Deformable-convolution cases: opbridge::DeformConv2d, ORT's DeformConv (opset 19) and
    torchvision, with and without mask; flops for GFLOP/s and a plain sgemm of the GEMM shape."""
    rng = data_rng(11)
    out_h = (h + 2 * padding[0] - dilation[0] * (k - 1) - 1) // stride[0] + 1
    out_w = (w + 2 * padding[1] - dilation[1] * (k - 1) - 1) // stride[1] + 1
    x = rng.standard_normal((n, c, h, w), dtype=np.float32)
    weight = (rng.standard_normal((c_out, c // groups, k, k)) / np.sqrt(c * k * k / groups)).astype(np.float32)
    bias = rng.standard_normal(c_out).astype(np.float32)
    offset = (rng.standard_normal((n, 2 * dgroups * k * k, out_h, out_w)) * 2).astype(np.float32)
    mask = (1 / (1 + np.exp(-rng.standard_normal((n, dgroups * k * k, out_h, out_w))))).astype(np.float32)
    gemm_m, gemm_k, gemm_n = c_out // groups, c // groups * k * k, out_h * out_w
    flops = 2.0 * n * groups * gemm_m * gemm_k * gemm_n
    cases = []
    for modulated in variants:
        feeds = {"input": x, "offset": offset, "weight": weight, "bias": bias}
        ours_inputs = [("input", F32, list(x.shape)), ("offset", F32, list(offset.shape)), ("weight", F32, list(weight.shape))]
        builtin_inputs = [("input", F32, list(x.shape)), ("weight", F32, list(weight.shape)),
                          ("offset", F32, list(offset.shape)), ("bias", F32, [c_out])]
        if modulated:
            feeds["mask"] = mask
            ours_inputs.append(("mask", F32, list(mask.shape)))
            builtin_inputs.append(("mask", F32, list(mask.shape)))
        else:
            ours_inputs.append(("", F32, None))
        ours_inputs.append(("bias", F32, [c_out]))
        out = [("output", F32, [n, c_out, out_h, out_w])]
        ours = one_node_model("DeformConv2d", ours_inputs, out, domain="opbridge", stride=list(stride),
                               padding=list(padding), dilation=list(dilation), groups=groups, deform_groups=dgroups)
        builtin = one_node_model("DeformConv", builtin_inputs, out, opset=19, dilations=list(dilation), group=groups,
                                  kernel_shape=[k, k], offset_group=dgroups, strides=list(stride),
                                  pads=[padding[0], padding[1], padding[0], padding[1]])
        cases.append(Case(
            name=f"{name} {'modulated' if modulated else 'plain'}",
            opbridge=ort_engine(ours, feeds, threads),
            ort=ort_engine(builtin, feeds, threads),
            torch=torch_engine(_torchvision_deform_conv, x, offset, weight, bias, mask if modulated else None,
                                stride, padding, dilation),
            flops=flops,
            sgemm=torch_engine(_plain_sgemm, gemm_m, gemm_k, gemm_n) if groups * n == 1 else None,
        ))
    return cases


def dcn_large(threads: int) -> list[Case]:
    """dcn.large: [1,256,100,152], 256 -> 256 channels, 3x3, stride 1, pad 1 (DCNv2 and DCNv1)."""
    c, h, w = sized((256, 100, 152), (16, 20, 30))
    return _dcn_cases("dcn.large", threads, 1, c, h, w, c, 3, (1, 1), (1, 1), (1, 1), 1, 1, (True, False))


def dcn_groups(threads: int) -> list[Case]:
    """dcn.groups: [2,64,64,64], weight [64,32,3,3], stride (2,1), pad (1,2), dil (1,2), groups 2, deform groups 4."""
    c, h, w = sized((64, 64, 64), (8, 16, 16))
    return _dcn_cases("dcn.groups", threads, 2, c, h, w, c, 3, (2, 1), (1, 2), (1, 2), 2, 4, (True,))


def dcn_small(threads: int) -> list[Case]:
    """dcn.small: [1,3,32,32], weight [8,3,3,3] (K = 27), defaults."""
    return _dcn_cases("dcn.small", threads, 1, 3, 32, 32, 8, 3, (1, 1), (0, 0), (1, 1), 1, 1, (True,))


WORKLOADS = {
    "dcn.large": dcn_large,
    "dcn.groups": dcn_groups,
    "dcn.small": dcn_small,
}
