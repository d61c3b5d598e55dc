"""Models built on issue 27's CUDA kernels, exported by opbridge.export and run in an ONNX Runtime
session with the CUDA execution provider: a Deformable-DETR encoder layer (multi-scale deformable
attention, both identities) and a ResNet basic block with a modulated deformable convolution
(opbridge.bench.models builds both; the GPU bench times them). Every opbridge node on the GPU with no
copy between the CPU and the GPU next to it, and the CPU session's outputs within the model tolerance
(both sessions in float32: CUDA_FULL_FLOAT32)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import opbridge
from opbridge._library import CUDA_FULL_FLOAT32
from opbridge.bench.models import dcn_block, dcn_block_input
from opbridge.export import custom_nodes
from opbridge.placement import cuda_placement
from opbridge.tolerances import tolerance
from test_multi_scale_deformable_attention import IDENTITIES, layer_inputs


@pytest.mark.parametrize("compat,identity", [(None, IDENTITIES[0]), ("mmdeploy", IDENTITIES[1])])
def test_deformable_detr_layer_runs_on_the_gpu_with_the_cpu_sessions_outputs(compat, identity):
    torch.manual_seed(3)
    layer = opbridge.ops.MultiScaleDeformableAttention(embed_dims=256, num_heads=8, num_levels=4, num_points=4).eval()
    rng = np.random.default_rng(59)
    shapes = ((32, 40), (16, 20), (8, 10), (4, 5))
    # The legacy exporter: the device machines run an older PyTorch than the pins (see DEVELOPERS.md).
    proto = opbridge.export(layer, layer_inputs(rng, queries=300, embed=256, shapes=shapes), exporter="legacy",
                            compat=compat, dynamic_axes={"query": {1: "q"}, "reference_points": {1: "q"}})
    assert custom_nodes(proto) == [identity]
    placement = cuda_placement(proto)
    assert placement.opbridge_nodes == 1 and placement.all_opbridge_nodes_on_gpu, placement
    cpu = opbridge.create_session(proto)
    gpu = opbridge.create_session(proto, providers=(CUDA_FULL_FLOAT32,))
    names = [i.name for i in cpu.get_inputs()]
    for queries in (300, 1, 900):
        feeds = {name: t.numpy() for name, t in zip(names, layer_inputs(rng, queries=queries, embed=256,
                                                                         shapes=shapes))}
        (expected,), (actual,) = cpu.run(None, feeds), gpu.run(None, feeds)
        tol = tolerance("model", expected.dtype)
        np.testing.assert_allclose(actual, expected, rtol=tol.rtol, atol=tol.atol, err_msg=f"{queries} queries")


def test_deformable_resnet_block_runs_on_the_gpu_with_the_cpu_sessions_outputs():
    rng = np.random.default_rng(60)
    block = dcn_block(64)
    x = dcn_block_input(rng, 64, 40, 56)
    proto = opbridge.export(block, (torch.from_numpy(x),), exporter="legacy", dynamic_axes={"x": {2: "h", 3: "w"}})
    assert custom_nodes(proto) == ["opbridge::DeformConv2d"]
    placement = cuda_placement(proto)
    assert placement.opbridge_nodes == 1 and placement.all_opbridge_nodes_on_gpu, placement
    cpu = opbridge.create_session(proto)
    gpu = opbridge.create_session(proto, providers=(CUDA_FULL_FLOAT32,))
    name = cpu.get_inputs()[0].name
    for height, width in ((40, 56), (17, 23)):
        feeds = {name: dcn_block_input(rng, 64, height, width)}
        (expected,), (actual,) = cpu.run(None, feeds), gpu.run(None, feeds)
        tol = tolerance("model", expected.dtype)
        np.testing.assert_allclose(actual, expected, rtol=tol.rtol, atol=tol.atol, err_msg=f"{height} x {width}")
