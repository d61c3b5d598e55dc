"""Exports every model of torchvision.models.detection with both exporters, runs it in ORT with
opbridge and prints how far each output is from eager PyTorch.

    .venv/bin/python tools/verify_detectors.py [model ...] [--size 320]

CI runs one model per family (tests/python/test_detectors.py); this runs all nine, with random
weights, on an image where each detects something and one where it detects nothing. As in the
tests, the score threshold and images are picked so that the verified detections' scores are at
least 1e-4 apart (closer ones would be ordered by float rounding, which ORT and PyTorch do
differently); the threshold is chosen automatically here, in the widest gap below the top scores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
import test_detectors as td  # noqa: E402  (the families' model building and images)

import opbridge  # noqa: E402

MODELS = ["fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn",
          "maskrcnn_resnet50_fpn", "keypointrcnn_resnet50_fpn", "retinanet_resnet50_fpn", "fcos_resnet50_fpn",
          "ssd300_vgg16", "ssdlite320_mobilenet_v3_large"]
BOXES = "[0]['boxes']"
IMAGES = ["rand1", "rand2", "rand3", "const0.0", "const0.25", "const0.5", "const0.75", "const1.0", "rand_dim", "checker"]


def pick(model, threshold_of):
    """(threshold, detect image, nothing image) with well separated scores, or None."""
    scores = {kind: td.scores_without_threshold(model, 0.0, td.image(kind)) for kind in IMAGES}
    best = None
    for detect, s in scores.items():
        for k in range(2, min(len(s), 8)):
            top, gap = s[:k + 1], s[k - 1] - s[k]
            if gap < 4 * td.MARGIN or np.min(-np.diff(top[:k])) < td.MARGIN:
                continue
            threshold = float((s[k - 1] + s[k]) / 2)
            nothing = [kind for kind, t in scores.items() if not len(t) or t[0] < threshold - td.MARGIN]
            if nothing and (best is None or gap > best[0]):
                best = (gap, threshold, detect, nothing[0])
    return None if best is None else best[1:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=MODELS)
    args = parser.parse_args()
    print(f"{'model':<36}{'exporter':<9}{'images':<22}{'detections':>11}  {'max abs error per output':<50} result")
    for name in args.models:
        live = name.startswith("ssdlite") or name.startswith("fasterrcnn_mobilenet")
        family = td.Family(name, 0.5, "rand1", "const0.5", live_weights=live,
                           batch_norm_statistics=name.startswith("fasterrcnn_mobilenet"))
        model = td.build(family)
        chosen = pick(model, None)
        if chosen is None:
            print(f"{name:<36}no threshold with well separated scores")
            continue
        threshold, detect, nothing = chosen
        td._set_threshold(model, threshold)
        for exporter in ("dynamo", "legacy"):
            start = time.perf_counter()
            report = opbridge.verify(model, ([td.image(detect)],), exporter=exporter, comparison="detector",
                                     more_args=[([td.image(nothing)],)], print_report=False)
            errors = ", ".join(f"{o.name[5:-2]}={o.max_abs_error:.1e}"  # [0]['boxes'] -> boxes
                               for o in report.outputs if not o.name.startswith("args[1]") and o.dtype.startswith("float"))
            shapes = {o.name: o.ort_shape for o in report.outputs}
            found = f"{shapes[BOXES][0]} / {shapes['args[1] ' + BOXES][0]}"
            print(f"{name:<36}{exporter:<9}{detect + ' / ' + nothing:<22}{found:>11}  {errors:<50} "
                  f"{'ok' if report.ok else 'MISMATCH'} ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
