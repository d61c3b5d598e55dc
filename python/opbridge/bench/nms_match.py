"""NMSMatch workload (workloads.md: nms_match): boxes [1, 2000, 4], scores [1, 15, 2000], iou 0.5,
score 0.05, through opbridge::NmsMatch (mmdeploy's NMSMatch, thresholds as [1] inputs).

Neither ORT nor PyTorch has the op: the times are absolute, and mmdeploy's shipped op took 21 ms
on this kind of machine (peer_baseline.md). opbridge's eager PyTorch op (a plain greedy loop)
runs once, untimed, as the check.

The data are nms.batched's (bench/nms.py) at this size: proposals of an 800x1216 image around 300
objects, every box with one likely class (score uniform in [0, 1)) and small scores for the
others (exponential, mean 0.01). Every box takes part in every class (NMSMatch has no score
prefilter), so each of the 15 problems has all 2000 boxes.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, I64, Case, as_tensor, one_node_model, ort_engine, sized, torch_engine
from opbridge.bench.nms import class_scores, proposals



def _eager(boxes, scores):
    import torch

    from opbridge.ops import nms_match

    return nms_match(as_tensor(boxes), as_tensor(scores), 0.5, 0.05)


def nms_match(threads: int) -> list[Case]:
    count, classes = sized((2000, 15), (300, 3))
    boxes, scores = proposals(count, 41)[None], class_scores(classes, count, 42)[None]
    model = one_node_model(
        "NmsMatch",
        [("boxes", F32, list(boxes.shape)), ("scores", F32, list(scores.shape)), ("iou_threshold", F32, [1]),
         ("score_threshold", F32, [1])],
        [("matches", I64, ["K", 4])], domain="opbridge")
    feeds = {"boxes": boxes, "scores": scores, "iou_threshold": np.array([0.5], np.float32),
             "score_threshold": np.array([0.05], np.float32)}
    return [Case(
        name="nms_match (mmdeploy: ~21 ms)",
        opbridge=ort_engine(model, feeds, threads),
        reference=torch_engine(_eager, boxes, scores),
    )]


WORKLOADS = {"nms_match": nms_match}
