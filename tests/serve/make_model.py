"""Writes what the Ray Serve tests serve (run in .venv, which has PyTorch; the tests run in the
serve environment, which has none): the demo detector (opbridge.demo: deformable convolution, grid
sampler, soft-NMS, RoIAlign) exported by opbridge.export with a dynamic proposal count, and eight
requests of it (image, proposals, scores) in an .npz file; and torchvision's Faster R-CNN (random
weights, 224-pixel images) exported on a batch of images (a dynamic batch axis), with images for
it: some where it detects objects, some where it detects none.

    python tests/serve/make_model.py OUT_FOLDER   ->  OUT_FOLDER/detector.onnx, OUT_FOLDER/requests.npz,
                                                      OUT_FOLDER/batched.onnx, OUT_FOLDER/images.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from torchvision.models.detection import fasterrcnn_resnet50_fpn

import opbridge
from opbridge.demo import DemoDetector, example_inputs

REQUESTS = 8
IMAGES = 8
SIZE = 224


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    model = DemoDetector().eval()
    opbridge.export(model, example_inputs(), out / "detector.onnx", exporter="legacy",
                    dynamic_axes={"proposals": {0: "P"}, "proposal_scores": {0: "P"}},
                    output_names=["dets", "keep", "cls_logits", "box_deltas"])
    arrays = {}
    for k in range(REQUESTS):
        image, proposals, scores = example_inputs(num_proposals=100 + 50 * k, seed=k)
        arrays[f"image_{k}"], arrays[f"proposals_{k}"], arrays[f"scores_{k}"] = image.numpy(), proposals.numpy(), \
            scores.numpy()
    np.savez(out / "requests.npz", **arrays)

    torch.manual_seed(0)
    detector = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, min_size=SIZE, max_size=SIZE).eval()
    detector.roi_heads.score_thresh = 0.973  # some of these images have detections, some none
    images = torch.cat([torch.rand(IMAGES // 2, 3, SIZE, SIZE, generator=torch.Generator().manual_seed(1)),
                        torch.full((IMAGES // 2, 3, SIZE, SIZE), 0.5)])
    opbridge.export(detector, (images[:2],), out / "batched.onnx", exporter="legacy")
    np.savez(out / "images.npz", images=images.numpy())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
