"""Whole-model workloads (workloads.md: detector.fasterrcnn; detector.maskrcnn, the same for Mask R-CNN).

detector.fasterrcnn / detector.maskrcnn: torchvision's fasterrcnn_resnet50_fpn / maskrcnn_resnet50_fpn
with random weights (weights=None, weights_backbone=None), eval, box_score_thresh 0.05, one
800 x 800 image. Three engines:
  opbridge  the model exported by opbridge.export (dynamo), run in ORT with the library;
  ORT       the model as PyTorch's plain export writes it: torch.onnx.export with the legacy
            exporter (the dynamo exporter, PyTorch's default, cannot export torchvision's
            detectors), standard ONNX ops (RoiAlign per level, NonMaxSuppression), run in ORT;
  torch     the model in eager PyTorch.

The ONNX files are exported once by the process that builds the cases (it needs torch) and kept
in a cache folder, where the memory children (which must not import torch) find them.
"""

from __future__ import annotations

import functools

import numpy as np

from opbridge.bench import harness
from opbridge.bench.harness import Case, as_tensor, data_rng, export_once, ort_engine, sized, torch_engine

# workload id -> (torchvision.models.detection builder, the eager outputs compared, in the exports' order)
DETECTORS = {
    "detector.fasterrcnn": ("fasterrcnn_resnet50_fpn", ("boxes", "labels", "scores")),
    "detector.maskrcnn": ("maskrcnn_resnet50_fpn", ("boxes", "labels", "scores", "masks")),
}


def _side() -> int:
    """The image's side: 800 (a smoke run: 160, and the detector's resize set to keep it)."""
    return sized(800, 160)


def _image() -> np.ndarray:
    return data_rng(41).uniform(0, 1, (3, _side(), _side())).astype(np.float32)


def _detector(builder: str):
    import torch
    from torchvision.models import detection

    torch.manual_seed(0)
    resize = sized({}, {"min_size": _side(), "max_size": _side()})
    return getattr(detection, builder)(weights=None, weights_backbone=None, box_score_thresh=0.05, **resize).eval()


def _opbridge_export(builder: str):
    def export(path):
        import torch

        import opbridge

        opbridge.export(_detector(builder), ([torch.from_numpy(_image())],), path, exporter="dynamo")

    return export


def _plain_export(builder: str):
    def export(path):
        import warnings

        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(_detector(builder), ([torch.from_numpy(_image())],), str(path), dynamo=False,
                              opset_version=17)

    return export


_EAGER = {}


def _eager(builder: str, outputs: tuple[str, ...], image):
    import torch

    if builder not in _EAGER:
        _EAGER[builder] = _detector(builder).to(harness.DEVICE)
    out = _EAGER[builder]([as_tensor(image)])[0]
    return [out[name] for name in outputs]


def _detector_cases(workload: str, threads: int) -> list[Case]:
    import onnx

    builder, outputs = DETECTORS[workload]
    image = _image()
    name = builder.split("_")[0]
    ours = onnx.load(str(export_once(f"{name}_opbridge", _opbridge_export(builder))))
    plain = onnx.load(str(export_once(f"{name}_plain_legacy", _plain_export(builder))))
    return [Case(
        name=f"{workload} {_side()}x{_side()}",
        opbridge=ort_engine(ours, {ours.graph.input[0].name: image}, threads),
        ort=ort_engine(plain, {plain.graph.input[0].name: image}, threads),
        torch=torch_engine(_eager, builder, outputs, image),
        check_rtol=1e-4, check_atol=1e-2,  # opbridge's "detector" tolerance (tolerances.py)
    )]


WORKLOADS = {workload: functools.partial(_detector_cases, workload) for workload in DETECTORS}
