"""Whole-model workloads (workloads.md: detector.fasterrcnn).

detector.fasterrcnn: torchvision's fasterrcnn_resnet50_fpn with random weights (weights=None,
weights_backbone=None), eval, box_score_thresh 0.05, one 800 x 800 image. Three engines:
  opbridge  the model exported by opbridge.export (dynamo), run in ORT with the library;
  ORT       the model as PyTorch's plain export writes it: torch.onnx.export with the legacy
            exporter (the dynamo exporter, PyTorch's default, cannot export torchvision's
            detectors), standard ONNX ops (RoiAlign per level, NonMaxSuppression), run in ORT;
  torch     the model in eager PyTorch.

The ONNX files are exported once by the process that builds the cases (it needs torch) and kept
in a cache folder, where the memory children (which must not import torch) find them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

import numpy as np

from opbridge.bench.harness import Case, data_rng, ort_engine, torch_engine

IMAGE = 800
CACHE = Path(os.environ.get("OPBRIDGE_BENCH_CACHE", Path(tempfile.gettempdir()) / "opbridge-bench"))


def _image() -> np.ndarray:
    return data_rng(41).uniform(0, 1, (3, IMAGE, IMAGE)).astype(np.float32)


def _fasterrcnn():
    import torch
    from torchvision.models import detection

    torch.manual_seed(0)
    return detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, box_score_thresh=0.05).eval()


def _source_key() -> str:
    """A digest of opbridge's Python sources, so that a cached export is redone after the export
    code changes."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha1()
    for source in sorted(package.rglob("*.py")):
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def _export_once(path: Path, export) -> Path:
    """Runs export(path) unless the file is there (a memory child, or a second thread count)."""
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        export(tmp)
        tmp.replace(path)
    return path


def _opbridge_export(path):
    import torch

    import opbridge

    opbridge.export(_fasterrcnn(), ([torch.from_numpy(_image())],), path, exporter="dynamo")


def _plain_export(path):
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_fasterrcnn(), ([torch.from_numpy(_image())],), str(path), dynamo=False, opset_version=17)


_EAGER = {}


def _eager(image):
    import torch

    if "model" not in _EAGER:
        _EAGER["model"] = _fasterrcnn()
    out = _EAGER["model"]([torch.from_numpy(image)])[0]
    return [out["boxes"], out["labels"], out["scores"]]


def detector_fasterrcnn(threads: int) -> list[Case]:
    import onnx

    image = _image()
    key = _source_key()
    ours = onnx.load(str(_export_once(CACHE / f"fasterrcnn_opbridge_{key}.onnx", _opbridge_export)))
    plain = onnx.load(str(_export_once(CACHE / f"fasterrcnn_plain_legacy_{key}.onnx", _plain_export)))
    return [Case(
        name="detector.fasterrcnn 800x800",
        opbridge=ort_engine(ours, {ours.graph.input[0].name: image}, threads),
        ort=ort_engine(plain, {plain.graph.input[0].name: image}, threads),
        torch=torch_engine(_eager, image),
        check_rtol=1e-4, check_atol=1e-2,  # opbridge's "detector" tolerance (tolerances.py)
    )]


WORKLOADS = {"detector.fasterrcnn": detector_fasterrcnn}
