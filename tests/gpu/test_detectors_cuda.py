"""torchvision's detectors, exported by opbridge.export, in an ONNX Runtime session with the CUDA
execution provider: every opbridge node on the GPU (no copy between the CPU and the GPU next to
one) and the outputs of the CPU session within the detector tolerance; and opbridge.verify on the
GPU against PyTorch on CUDA. The families, weights and images are test_detectors.py's: one builder
of each family (BASE_FAMILIES), since the variants add only layers ORT's own kernels run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import opbridge
from opbridge._library import CUDA_FULL_FLOAT32
from opbridge.placement import cuda_placement
from opbridge.tolerances import tolerance
from test_detectors import BASE_FAMILIES, EXPECTED_NODES, FAMILIES, build, image

# float32 on the GPU too (TF32 off): the comparison is with the CPU session's float32.
CUDA = (CUDA_FULL_FLOAT32,)


@pytest.mark.parametrize("name", BASE_FAMILIES)
def test_detector_runs_on_the_gpu_with_the_cpu_sessions_outputs(name):
    family = FAMILIES[name]
    model = build(family)
    # The legacy exporter: the device machines run an older PyTorch than the pins (see DEVELOPERS.md).
    proto = opbridge.export(model, ([image(family.detect)],), exporter="legacy")
    placement = cuda_placement(proto)
    assert placement.opbridge_nodes >= len(EXPECTED_NODES[name]), placement
    assert placement.all_opbridge_nodes_on_gpu, placement
    cpu = opbridge.create_session(proto)
    gpu = opbridge.create_session(proto, providers=CUDA)
    for kind in (family.detect, family.nothing):
        feeds = {cpu.get_inputs()[0].name: image(kind).numpy()}
        expected, actual = cpu.run(None, feeds), gpu.run(None, feeds)
        for k, (e, a) in enumerate(zip(expected, actual)):
            assert e.shape == a.shape and e.dtype == a.dtype, f"{name} output {k} on {kind}: {a.shape} vs {e.shape}"
            tol = tolerance("detector", e.dtype)
            np.testing.assert_allclose(a, e, rtol=tol.rtol, atol=tol.atol, err_msg=f"{name} output {k} on {kind}")


def test_verify_on_the_gpu_against_pytorch_on_cuda():
    if not torch.cuda.is_available():
        pytest.skip(f"this PyTorch ({torch.__version__}) has no CUDA device: verify(device='cuda') needs one")
    family = FAMILIES["fasterrcnn"]
    report = opbridge.verify(build(family), ([image(family.detect)],), exporter="legacy", comparison="detector",
                             device="cuda", more_args=[([image(family.nothing)],)], print_report=False)
    assert report.placement.all_opbridge_nodes_on_gpu and report.ok, str(report)
    assert "device: cuda" in str(report)


@pytest.mark.parametrize("name", BASE_FAMILIES)
def test_batched_detector_runs_on_the_gpu_with_the_cpu_sessions_outputs(name):
    """The export on a batch of images (opbridge.detection.BatchedDetector) in a CUDA session: every
    opbridge node on the GPU, and the CPU session's outputs within the detector tolerance at N = 3
    (images with detections and one without) and N = 1."""
    family = FAMILIES[name]
    model = build(family)
    batch = torch.stack([image(family.detect), image(family.nothing), image(family.detect)])
    proto = opbridge.export(model, (batch[:2],), exporter="legacy")
    placement = cuda_placement(proto)
    assert placement.all_opbridge_nodes_on_gpu, placement
    cpu = opbridge.create_session(proto)
    gpu = opbridge.create_session(proto, providers=CUDA)
    for images in (batch, batch[:1]):
        feeds = {"images": images.numpy()}
        expected, actual = cpu.run(None, feeds), gpu.run(None, feeds)
        for output, e, a in zip(cpu.get_outputs(), expected, actual):
            assert e.shape == a.shape and e.dtype == a.dtype, f"{name} {output.name}: {a.shape} vs {e.shape}"
            tol = tolerance("detector", e.dtype)
            np.testing.assert_allclose(a, e, rtol=tol.rtol, atol=tol.atol, err_msg=f"{name} {output.name}, N={len(images)}")
