"""Writes what the Ray Serve tests serve (run in .venv, which has PyTorch; the tests run in the
serve environment, which has none): the demo detector (opbridge.demo: deformable convolution, grid
sampler, soft-NMS, RoIAlign) exported by opbridge.export with a dynamic proposal count, and eight
requests of it (image, proposals, scores) in an .npz file.

    python tests/serve/make_model.py OUT_FOLDER   ->  OUT_FOLDER/detector.onnx, OUT_FOLDER/requests.npz
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import opbridge
from opbridge.demo import DemoDetector, example_inputs

REQUESTS = 8


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


if __name__ == "__main__":
    main(Path(sys.argv[1]))
