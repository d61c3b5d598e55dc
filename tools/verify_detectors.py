"""Exports every model of torchvision.models.detection with both exporters, runs it in ORT with
opbridge and prints how far each output is from eager PyTorch.

    .venv/bin/python tools/verify_detectors.py [builder ...] [--pick]

The tests (tests/python/test_detectors.py) cover every builder torchvision lists, each with a
Family: its score threshold and two images, where it detects something and where it detects
nothing, chosen so that the verified detections' scores are at least 1e-4 apart (closer ones
would be ordered by float rounding, which ORT and PyTorch do differently). This prints the errors
behind those tests' verdicts, and finds a Family for a builder that has none (a new torchvision's,
or with --pick for every one): the threshold in the widest gap below an image's top scores, with
another image below it. Builders whose scores are all tied or all saturated with torchvision's
random initialisation need live weights (Family's live_weights), which --live gives a new one.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torchvision
from torchvision.models import detection

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))
import test_detectors as td  # noqa: E402  (the builders' families, model building and images)

import opbridge  # noqa: E402

BOXES = "[0]['boxes']"
IMAGES = (["rand_dim", "checker"] + [f"rand{seed}" for seed in range(1, 16)]
          + [f"const{tenths / 10:.1f}" for tenths in range(11)] + ["const0.25", "const0.75"])


def pick(model):
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


def family_of(builder: str, find: bool, live: bool) -> td.Family | None:
    known = [family for family in td.FAMILIES.values() if family.builder == builder]
    family = known[0] if known else td.Family(builder, 0.5, "", "", live_weights=live, batch_norm_statistics=live)
    if known and not find:
        return family
    chosen = pick(td.build(family))
    if chosen is None:
        print(f"{builder:<40}no threshold with well separated scores (try --live)")
        return None
    threshold, detect, nothing = chosen
    family = td.Family(**{**family.__dict__, "threshold": round(threshold, 5), "detect": detect, "nothing": nothing})
    print(f"{builder:<40}{family}")
    return family


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builders", nargs="*", default=torchvision.models.list_models(module=detection))
    parser.add_argument("--pick", action="store_true", help="choose the threshold and images anew for known builders too")
    parser.add_argument("--live", action="store_true", help="redraw a new builder's weights with a live scale")
    args = parser.parse_args()
    families = [f for f in (family_of(b, args.pick, args.live) for b in args.builders) if f is not None]
    print(f"{'builder':<40}{'exporter':<9}{'images':<22}{'detections':>11}  {'max abs error per output':<50} result")
    for family in families:
        model = td.build(family)
        for exporter in ("dynamo", "legacy"):
            start = time.perf_counter()
            report = opbridge.verify(model, ([td.image(family.detect)],), exporter=exporter, comparison="detector",
                                     more_args=[([td.image(family.nothing)],)], print_report=False)
            errors = ", ".join(f"{o.name[5:-2]}={o.max_abs_error:.1e}"  # [0]['boxes'] -> boxes
                               for o in report.outputs if not o.name.startswith("args[1]") and o.dtype.startswith("float"))
            shapes = {o.name: o.ort_shape for o in report.outputs}
            found = f"{shapes[BOXES][0]} / {shapes['args[1] ' + BOXES][0]}"
            print(f"{family.builder:<40}{exporter:<9}{family.detect + ' / ' + family.nothing:<22}{found:>11}  "
                  f"{errors:<50} {'ok' if report.ok else 'MISMATCH'} ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
