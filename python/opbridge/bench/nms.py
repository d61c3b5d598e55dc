"""NMS workloads (workloads.md: nms.single, nms.batched).

nms.single: 20000 boxes of one class, iou 0.5: opbridge::Nms against ORT's NonMaxSuppression (one
batch, one class, no score threshold, no limit) and torchvision.ops.nms.

nms.batched: boxes [1, 20000, 4], scores [1, 80, 20000], iou 0.5, score 0.05, at most 100 per
class: opbridge::MulticlassNms against ORT's NonMaxSuppression with the same layout and arguments,
and PyTorch eager doing the same with torchvision: a score threshold, torchvision.ops.batched_nms
over the (box, class) pairs that pass it, and the first 100 kept of every class.

The boxes are region proposals of an 800x1216 image: 300 objects, each with boxes jittered around
it (sides 16 to 512 px), uniform scores. For nms.batched, every box has one likely class (score
uniform in [0, 1)) and small scores for the others (exponential, mean 0.01), as a detector's class
scores are: about 30000 (box, class) pairs pass the 0.05 threshold.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, I64, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine

OBJECTS = 300
INT64_MAX = 9223372036854775807


def sizes() -> tuple[int, int]:
    """(boxes, classes) of the workloads: 20000 and 80 (a smoke run: 2000 and 8)."""
    return sized((20000, 80), (2000, 8))


def proposals(count: int, salt: int) -> np.ndarray:
    """`count` boxes (x1, y1, x2, y2) jittered around OBJECTS objects of an 800x1216 image."""
    rng = data_rng(salt)
    centres = rng.uniform([0, 0], [1216, 800], (OBJECTS, 2))
    sizes = np.exp(rng.uniform(np.log(16), np.log(512), (OBJECTS, 2)))
    pick = rng.integers(0, OBJECTS, count)
    centre = centres[pick] + rng.normal(0, 0.15, (count, 2)) * sizes[pick]
    size = sizes[pick] * np.exp(rng.normal(0, 0.2, (count, 2)))
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    return np.clip(boxes, 0, [1216, 800, 1216, 800]).astype(np.float32)


def _ort_nms_model(boxes_shape, scores_shape, max_per_class: int, iou: float, score: float | None):
    """ONNX NonMaxSuppression with its thresholds and limit as constant inputs."""
    import onnx
    from onnx import helper

    inputs = ["boxes", "scores", "max_output", "iou"] + (["score"] if score is not None else [])
    constants = [helper.make_tensor("max_output", onnx.TensorProto.INT64, [1], [max_per_class]),
                 helper.make_tensor("iou", onnx.TensorProto.FLOAT, [1], [iou])]
    if score is not None:
        constants.append(helper.make_tensor("score", onnx.TensorProto.FLOAT, [1], [score]))
    graph = helper.make_graph(
        [helper.make_node("NonMaxSuppression", inputs, ["selected"])], "bench_ort_nms",
        [helper.make_tensor_value_info("boxes", F32, boxes_shape), helper.make_tensor_value_info("scores", F32, scores_shape)],
        [helper.make_tensor_value_info("selected", I64, ["K", 3])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _torchvision_nms(boxes, scores, iou):
    import torch
    import torchvision

    return torchvision.ops.nms(as_tensor(boxes), as_tensor(scores), iou)


def nms_single(threads: int) -> list[Case]:
    """nms.single: 20000 proposals, one class, iou 0.5."""
    count, _ = sizes()
    boxes, scores = proposals(count, 21), data_rng(22).uniform(0, 1, count).astype(np.float32)
    ours = one_node_model("Nms", [("boxes", F32, [count, 4]), ("scores", F32, [count])], [("keep", I64, ["K"])],
                          domain="opbridge", iou_threshold=0.5)
    builtin = _ort_nms_model([1, count, 4], [1, 1, count], INT64_MAX, 0.5, None)
    return [Case(
        name="nms.single",
        opbridge=ort_engine(ours, {"boxes": boxes, "scores": scores}, threads),
        ort=ort_engine(builtin, {"boxes": boxes[None], "scores": scores[None, None]}, threads),
        torch=torch_engine(_torchvision_nms, boxes, scores, 0.5),
    )]


def class_scores(classes: int, count: int, salt: int) -> np.ndarray:
    """Scores [classes, count] as a detector's are: every box one likely class (uniform in
    [0, 1)), small scores for the others (exponential, mean 0.01)."""
    rng = data_rng(salt)
    scores = rng.exponential(0.01, (classes, count))
    scores[rng.integers(0, classes, count), np.arange(count)] = rng.uniform(0, 1, count)
    return np.minimum(scores, 1.0).astype(np.float32)


def _torchvision_batched(boxes, scores, iou, score_threshold, max_per_class):
    """The multi-class layout with torchvision: threshold, batched_nms, at most max_per_class per class."""
    import torch
    import torchvision

    classes, box_index = torch.where(as_tensor(scores[0]) > score_threshold)
    candidate_scores = as_tensor(scores[0])[classes, box_index]
    keep = torchvision.ops.batched_nms(as_tensor(boxes[0])[box_index], candidate_scores, classes, iou)
    # batched_nms returns all classes in descending score order; the first max_per_class of each
    # class, then rows ordered by class and score as NonMaxSuppression orders them.
    kept_classes = classes[keep]
    rank = torch.zeros_like(keep)
    for c in torch.unique(kept_classes):
        members = torch.where(kept_classes == c)[0]
        rank[members] = torch.arange(len(members), device=keep.device)
    keep = keep[rank < max_per_class]
    order = torch.sort(classes[keep] * len(candidate_scores) + torch.argsort(torch.argsort(
        -candidate_scores[keep], stable=True), stable=True), stable=True)[1]
    keep = keep[order]
    return torch.stack([torch.zeros_like(keep), classes[keep], box_index[keep]], dim=1)


def nms_batched(threads: int) -> list[Case]:
    """nms.batched: boxes [1, 20000, 4], scores [1, 80, 20000], iou 0.5, score 0.05, 100 per class."""
    count, classes = sizes()
    boxes, scores = proposals(count, 23)[None], class_scores(classes, count, 24)[None]
    ours = one_node_model("MulticlassNms", [("boxes", F32, list(boxes.shape)), ("scores", F32, list(scores.shape))],
                          [("selected", I64, ["K", 3])], domain="opbridge", iou_threshold=0.5, score_threshold=0.05,
                          max_output_boxes_per_class=100)
    builtin = _ort_nms_model(list(boxes.shape), list(scores.shape), 100, 0.5, 0.05)
    feeds = {"boxes": boxes, "scores": scores}
    return [Case(
        name="nms.batched",
        opbridge=ort_engine(ours, feeds, threads),
        ort=ort_engine(builtin, feeds, threads),
        torch=torch_engine(_torchvision_batched, boxes, scores, 0.5, 0.05, 100),
    )]


WORKLOADS = {"nms.single": nms_single, "nms.batched": nms_batched}
