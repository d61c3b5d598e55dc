"""Multi-level RoIAlign workload (workloads.md: roi_align.multilevel): opbridge::MultiScaleRoiAlign
against torchvision.ops.MultiScaleRoIAlign in eager PyTorch, and against the ONNX graph
torch.onnx.export writes for that module (a RoiAlign per level, with the gathers and scatters that
put each level's rows in place) run in the same ORT: one row with the dynamo exporter (PyTorch's
default), one with the legacy (TorchScript) exporter.

The pooler is the R-CNNs' (torchvision's detection models): maps "0".."3" of an 800x1216 image's
FPN, 7x7, sampling ratio 2, the default level mapper (canonical scale 224 at level 4), one image
whose box count is a dynamic dim of the exported graph, as in a detector's export.

aligned: workloads.md asks for aligned 1, but torchvision's MultiScaleRoIAlign has no aligned
parameter (it always pools with aligned=False, as the R-CNNs do), so neither competitor can pool
aligned RoIs. The workload is run with aligned 0, what the R-CNNs use.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import (F32, Case, as_tensor, data_rng, export_once, one_node_model, ort_engine, sized,
                                    torch_engine)

IMAGE = (800, 1216)  # (height, width)
STRIDES = (4, 8, 16, 32)
NAMES = ["0", "1", "2", "3"]  # the FPN's map names, as the R-CNNs pass them
OUT, SAMPLING = 7, 2


def _features() -> list[np.ndarray]:
    """The FPN maps of an 800x1216 image, strides 4 to 32: [1, 256, 200, 304] ... [1, 256, 25, 38]."""
    rng = data_rng(51)
    channels = sized(256, 8)
    return [rng.standard_normal((1, channels, IMAGE[0] // s, IMAGE[1] // s), dtype=np.float32) for s in STRIDES]


def _boxes(count: int) -> np.ndarray:
    """`count` boxes (x1, y1, x2, y2) inside the image, sides uniform in 16..512 px (the level
    mapper puts about 15%, 34%, 48% and 3% of them on the four levels)."""
    rng = data_rng(52)
    w = rng.uniform(16, 512, count)
    h = rng.uniform(16, 512, count)
    x1 = rng.uniform(0, IMAGE[1] - w)
    y1 = rng.uniform(0, IMAGE[0] - h)
    return np.stack([x1, y1, x1 + w, y1 + h], axis=1).astype(np.float32)


def _box_count() -> int:
    return sized(1000, 50)


def _pooler():
    import torch
    import torchvision

    class Pooler(torch.nn.Module):
        """MultiScaleRoIAlign as the R-CNN heads call it."""

        def __init__(self):
            super().__init__()
            self.pool = torchvision.ops.MultiScaleRoIAlign(NAMES, OUT, SAMPLING)

        def forward(self, features: dict, boxes: list):
            return self.pool(features, boxes, [IMAGE] * len(boxes))

    return Pooler().eval()


def _torch_args(features, boxes):
    import torch

    return ({name: as_tensor(f) for name, f in zip(NAMES, features)}, [as_tensor(boxes)])


def _plain_export(exporter: str):
    """torch.onnx.export of the pooler, with the box count dynamic; inputs f0..f3 and boxes."""

    def export(path):
        import warnings

        import torch

        args = _torch_args(_features(), _boxes(_box_count()))
        names = [f"f{k}" for k in range(len(NAMES))] + ["boxes"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                torch.onnx.export(_pooler(), args, str(path), dynamo=True, input_names=names,
                                  dynamic_shapes={"features": {n: None for n in NAMES}, "boxes": [{0: "boxes"}]},
                                  external_data=False, report=False, verbose=False)
            else:
                torch.onnx.export(_pooler(), args, str(path), dynamo=False, opset_version=17, input_names=names,
                                  dynamic_axes={"boxes": {0: "boxes"}})

    return export


_EAGER = {}


def _torchvision(features, boxes):
    if "pooler" not in _EAGER:
        _EAGER["pooler"] = _pooler()
    features, boxes = _torch_args(features, boxes)
    return _EAGER["pooler"](features, boxes)


def roi_align_multilevel(threads: int) -> list[Case]:
    """roi_align.multilevel: 1000 boxes of sides 16..512 on the 4 FPN maps of an 800x1216 image."""
    import onnx

    features, boxes = _features(), _boxes(_box_count())
    rois = np.concatenate([np.zeros((len(boxes), 1), np.float32), boxes], axis=1)
    inputs = [("rois", F32, list(rois.shape))] + [(f"f{k}", F32, list(f.shape)) for k, f in enumerate(features)]
    ours = one_node_model(
        "MultiScaleRoiAlign", inputs, [("output", F32, [len(rois), features[0].shape[1], OUT, OUT])], domain="opbridge",
        output_height=OUT, output_width=OUT, sampling_ratio=SAMPLING, spatial_scales=[1.0 / s for s in STRIDES],
        canonical_scale=224, canonical_level=4, aligned=0,
    )
    ours_feeds = {"rois": rois, **{f"f{k}": f for k, f in enumerate(features)}}
    plain_feeds = {"boxes": boxes, **{f"f{k}": f for k, f in enumerate(features)}}
    cases = []
    for exporter in ("dynamo", "legacy"):
        plain = onnx.load(str(export_once(f"multi_scale_roi_align_plain_{exporter}", _plain_export(exporter))))
        cases.append(Case(
            name=f"roi_align.multilevel vs {exporter} export",
            opbridge=ort_engine(ours, ours_feeds, threads),
            ort=ort_engine(plain, plain_feeds, threads),
            torch=torch_engine(_torchvision, features, boxes),
        ))
    return cases


WORKLOADS = {"roi_align.multilevel": roi_align_multilevel}
