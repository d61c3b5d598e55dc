"""Whole-model workloads (workloads.md: detector.fasterrcnn; detector.maskrcnn, the same for Mask R-CNN;
and the two models of issue 27, model.deformable_detr_layer and model.dcn_block).

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
    # A smoke run keeps the ten best detections: with random weights, Mask R-CNN's 100 at 160 px hold
    # scores 1e-6 apart, whose order ORT's and PyTorch's rounding decide differently on different
    # CPUs (the check then compares luck); the first ten are at least 1e-4 apart, as is the eleventh.
    smoke = sized({}, {"min_size": _side(), "max_size": _side(), "box_detections_per_img": 10})
    return getattr(detection, builder)(weights=None, weights_backbone=None, box_score_thresh=0.05, **smoke).eval()


def _opbridge_export(builder: str, exporter: str = "dynamo", batched: bool = False):
    """opbridge.export of the detector on the image (a list [image]), or with `batched` on a batch
    of 2 (a dynamic batch axis: opbridge.detection)."""
    def export(path):
        import torch

        import opbridge

        images = torch.from_numpy(_batch(2)) if batched else [torch.from_numpy(_image())]
        opbridge.export(_detector(builder), (images,), path, exporter=exporter)

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
        cpu_column=False,
    )]


# --- detectors on a batch of images (opbridge.detection) -------------------------------------------
#
# detector.fasterrcnn.batch / detector.maskrcnn.batch: the detectors above on N = 1 and N = 4 images
# of 800 x 800 in one run. Engines:
#   opbridge  the batched export (opbridge.export of the detector on an [N, 3, H, W] batch), one run;
#   ORT       the single-image export (a list [image]), run once per image: what a user without the
#             batched export does;
#   torch     torchvision's model in eager PyTorch image by image, padded as the batched outputs.
# Both exports by the legacy exporter (the same for both, and quick). A row's times are per run
# of N images: the per-image time is the row's divided by N, and the ratios are per image too.

BATCHES = (1, 4)


def _batch(n: int) -> np.ndarray:
    """N copies of the single-image rows' image: with random weights, the scores of other images often
    tie within ORT's and PyTorch's rounding differences, and the check would compare luck."""
    return np.stack([_image()] * n)


_REFERENCES = {}


def _eager_padded(builder: str, images):
    from opbridge.detection import BatchedDetector

    if builder not in _REFERENCES:
        _REFERENCES[builder] = BatchedDetector(_detector(builder).to(harness.DEVICE)).reference()
    return list(_REFERENCES[builder](images).values())


def _batch_cases(workload: str, threads: int) -> list[Case]:
    import onnx

    builder = DETECTORS[workload.removesuffix(".batch")][0]
    name = builder.split("_")[0]
    batched = onnx.load(str(export_once(f"{name}_batched_legacy", _opbridge_export(builder, "legacy", batched=True))))
    single = onnx.load(str(export_once(f"{name}_opbridge_legacy", _opbridge_export(builder, "legacy"))))
    single_input = single.graph.input[0].name
    cases = []
    for n in sized(BATCHES, (1, 2)):
        images = _batch(n)
        cases.append(Case(
            name=f"{workload} {n}x{_side()}x{_side()}",
            opbridge=ort_engine(batched, {"images": images}, threads),
            ort=ort_engine(single, [{single_input: image} for image in images], threads),
            torch=torch_engine(_eager_padded, builder, images),
            ort_note=f"ORT: opbridge's single-image export, run {n} times",
            check_rtol=1e-4, check_atol=1e-2,  # opbridge's "detector" tolerance (tolerances.py)
            cpu_column=False,
        ))
    return cases


# --- the models of issue 27's CUDA kernels ---------------------------------------------------------
#
# model.deformable_detr_layer: a Deformable-DETR encoder layer (opbridge.ops.MultiScaleDeformableAttention,
#   256 channels, 8 heads, 4 levels of 4 points) over the FPN levels of a 512 x 640 image (64x80 ...
#   8x10, 6,800 values), one query per value.
# model.dcn_block: a torchvision ResNet basic block whose second convolution is a modulated
#   DeformConv2d (DCNv2, offsets and mask from a 3x3 convolution of the block's first output), 256
#   channels at 100 x 152 (dcn.large's shape).
# Both exported by opbridge.export (legacy exporter: the device machines' PyTorch is older than the
# pins) and run in ORT, against the module in eager PyTorch; tests/gpu/test_models_cuda.py runs the
# same modules. No plain-ONNX engine: ORT has neither op for these exports.

DETR_SHAPES = ((64, 80), (32, 40), (16, 20), (8, 10))


def deformable_detr_layer(embed: int = 256):
    """The encoder layer, seeded (random weights)."""
    import torch

    import opbridge

    torch.manual_seed(3)
    return opbridge.ops.MultiScaleDeformableAttention(embed_dims=embed, num_heads=8, num_levels=4, num_points=4).eval()


def deformable_detr_inputs(rng: np.random.Generator, queries: int | None = None, embed: int = 256,
                           shapes=DETR_SHAPES) -> tuple:
    """(query, value, reference_points, spatial_shapes, level_start_index) as numpy arrays, batch 1;
    queries defaults to one per value."""
    values = sum(h * w for h, w in shapes)
    queries = values if queries is None else queries
    starts = np.cumsum([0] + [h * w for h, w in shapes][:-1]).astype(np.int64)
    return (rng.standard_normal((1, queries, embed)).astype(np.float32),
            rng.standard_normal((1, values, embed)).astype(np.float32),
            rng.uniform(0, 1, (1, queries, len(shapes), 2)).astype(np.float32),
            np.array(shapes, np.int64), starts)


def dcn_block(channels: int = 256):
    """The ResNet basic block with a modulated deformable second convolution, seeded, eval."""
    import torch
    import torchvision

    class DeformableBasicBlock(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(channels)
            self.offset_mask = torch.nn.Conv2d(channels, 27, 3, padding=1)  # 18 offsets and 9 mask logits
            self.conv2 = torchvision.ops.DeformConv2d(channels, channels, 3, padding=1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(channels)

        def forward(self, x):
            out = torch.relu(self.bn1(self.conv1(x)))
            offset_mask = self.offset_mask(out)
            offset, mask = offset_mask[:, :18], torch.sigmoid(offset_mask[:, 18:])
            return torch.relu(self.bn2(self.conv2(out, offset, mask)) + x)

    torch.manual_seed(5)
    block = DeformableBasicBlock().eval()
    with torch.no_grad():  # offsets of a few pixels, as a trained DCN's
        block.offset_mask.weight.mul_(4.0)
    return block


def dcn_block_input(rng: np.random.Generator, channels: int = 256, height: int = 100, width: int = 152) -> np.ndarray:
    return rng.standard_normal((1, channels, height, width)).astype(np.float32)


def _export_model(build, args):
    def export(path):
        import torch

        import opbridge

        opbridge.export(build(), tuple(torch.from_numpy(a) for a in args), path, exporter="legacy")

    return export


_MODULES = {}


def _module_eager(key: str, build, *args):
    if key not in _MODULES:
        _MODULES[key] = build().to(harness.DEVICE)
    return _MODULES[key](*(as_tensor(a) for a in args))


def _detr_layer_cases(threads: int) -> list[Case]:
    import onnx

    shapes = sized(DETR_SHAPES, ((8, 10), (4, 5), (2, 3), (1, 2)))
    embed = sized(256, 32)
    args = deformable_detr_inputs(data_rng(61), embed=embed, shapes=shapes)
    build = functools.partial(deformable_detr_layer, embed)
    model = onnx.load(str(export_once(f"deformable_detr_layer_{embed}", _export_model(build, args))))
    feeds = {i.name: a for i, a in zip(model.graph.input, args)}
    return [Case(name=f"model.deformable_detr_layer {args[0].shape[1]} queries",
                 opbridge=ort_engine(model, feeds, threads), ort=None,
                 torch=torch_engine(_module_eager, f"detr_{embed}", build, *args),
                 check_rtol=1e-4, check_atol=1e-4,  # opbridge's "model" tolerance (tolerances.py)
                 cpu_column=False)]


def _dcn_block_cases(threads: int) -> list[Case]:
    import onnx

    channels, height, width = sized((256, 100, 152), (16, 12, 14))
    x = dcn_block_input(data_rng(62), channels, height, width)
    build = functools.partial(dcn_block, channels)
    model = onnx.load(str(export_once(f"dcn_block_{channels}", _export_model(build, (x,)))))
    return [Case(name=f"model.dcn_block [1, {channels}, {height}, {width}]",
                 opbridge=ort_engine(model, {model.graph.input[0].name: x}, threads), ort=None,
                 torch=torch_engine(_module_eager, f"dcn_{channels}", build, x),
                 check_rtol=1e-4, check_atol=1e-4, cpu_column=False)]


WORKLOADS = {workload: functools.partial(_detector_cases, workload) for workload in DETECTORS}
WORKLOADS.update({f"{workload}.batch": functools.partial(_batch_cases, f"{workload}.batch") for workload in DETECTORS})
WORKLOADS["model.deformable_detr_layer"] = _detr_layer_cases
WORKLOADS["model.dcn_block"] = _dcn_block_cases
