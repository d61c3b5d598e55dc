"""Models built on issues 27's and 28's CUDA kernels, exported by opbridge.export and run in an ONNX
Runtime session with the CUDA execution provider: a Deformable-DETR encoder layer (multi-scale
deformable attention, both identities), a ResNet basic block with a modulated deformable convolution
(opbridge.bench.models builds both; the GPU bench times them), and a rotated detector head (rotated
RoIAlign and rotated multi-class NMS). Every opbridge node on the GPU with no
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


class RotatedDetectorHead(torch.nn.Module):
    """An mmrotate-like second stage's opbridge nodes: rotated RoIAlign of the proposals from a
    stride-8 map, and mmdeploy's rotated multi-class NMS over the proposals' boxes with their class
    scores (given as an input, so that both sessions' NMS sees the same bits: a classifier's matrix
    product may round differently on the GPU)."""

    def forward(self, feature, rois, scores):
        pooled = opbridge.ops.roi_align_rotated(feature, rois, 7, spatial_scale=0.125, sampling_ratio=2)
        boxes = rois[:, 1:].unsqueeze(0)  # [1, R, 5]
        return pooled, opbridge.ops.multiclass_nms_rotated(boxes, scores, 0.3, 0.2)


def rotated_head_inputs(rng, rois, classes=4):
    feature = rng.standard_normal((1, 32, 64, 64)).astype(np.float32)
    xy = rng.uniform(0, 512, (rois, 2))
    wh = rng.uniform(16, 160, (rois, 2))
    theta = rng.uniform(-np.pi, np.pi, (rois, 1))
    boxes = np.concatenate([np.zeros((rois, 1)), xy, wh, theta], 1).astype(np.float32)
    return feature, boxes, rng.uniform(0, 1, (1, classes, rois)).astype(np.float32)


def test_rotated_detector_head_runs_on_the_gpu_with_the_cpu_sessions_outputs():
    rng = np.random.default_rng(62)
    head = RotatedDetectorHead().eval()
    args = tuple(torch.from_numpy(a) for a in rotated_head_inputs(rng, 300))
    proto = opbridge.export(head, args, exporter="legacy", dynamic_axes={"rois": {0: "r"}, "scores": {2: "r"}})
    assert sorted(custom_nodes(proto)) == ["opbridge::MulticlassNmsRotated", "opbridge::RoiAlignRotated"]
    placement = cuda_placement(proto)
    assert placement.opbridge_nodes == 2 and placement.all_opbridge_nodes_on_gpu, placement
    cpu = opbridge.create_session(proto)
    gpu = opbridge.create_session(proto, providers=(CUDA_FULL_FLOAT32,))
    names = [i.name for i in cpu.get_inputs()]
    for count in (300, 1, 1000):
        feeds = dict(zip(names, rotated_head_inputs(rng, count)))
        (pooled, rows), (gpu_pooled, gpu_rows) = cpu.run(None, feeds), gpu.run(None, feeds)
        np.testing.assert_array_equal(gpu_pooled, pooled, err_msg=f"{count} RoIs")  # the CPU kernels' bits
        np.testing.assert_array_equal(gpu_rows, rows, err_msg=f"{count} RoIs")
