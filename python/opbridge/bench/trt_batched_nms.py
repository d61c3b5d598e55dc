"""TensorRT batched NMS workload: nms.batched's data (workloads.md) in the plugin's layout.

trt_batched_nms: boxes [1, 20000, 1, 4], scores [1, 20000, 80], iou 0.5, score 0.05, the best
1000 candidates per class (mmdet's pre-NMS top-k), 100 detections per image (its max_per_img),
no background class, no clipping: opbridge::TrtBatchedNms against

* ORT built-ins doing the same pipeline as one graph (what an ONNX export of mmdet's
  multiclass_nms for ORT amounts to): scores transposed to [C, S], TopK 1000 per class, each
  class's boxes gathered, NonMaxSuppression with the classes as its batch, the kept scores'
  TopK 100 (fewer when fewer are kept), boxes and labels gathered;
* PyTorch eager: the same with torch.topk and torchvision.ops.batched_nms.

The check compares with opbridge's eager op (opbridge.ops.trt_batched_nms, untimed), which is
written from the plugin's code.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, I32, I64, Case, as_tensor, ort_engine, sized, torch_engine
from opbridge.bench.nms import class_scores, proposals, sizes

IOU = 0.5
SCORE = 0.05


def _limits() -> tuple[int, int]:
    """(topk, keep_topk): 1000 and 100 (a smoke run: 100 and 20)."""
    return sized((1000, 100), (100, 20))


def _ours_model():
    from onnx import helper

    _, classes = sizes()
    topk, keep = _limits()
    node = helper.make_node(
        "TrtBatchedNms", ["boxes", "scores"], ["dets", "labels"], domain="opbridge", background_label_id=-1,
        num_classes=classes, topk=topk, keep_topk=keep, score_threshold=SCORE, iou_threshold=IOU, is_normalized=0,
        clip_boxes=0)
    return _model([node], "bench_trt_batched_nms", [("dets", F32, [1, keep, 5]), ("labels", I32, [1, keep])])


def _model(nodes, name, outputs, initializers=()):
    from onnx import helper

    count, classes = sizes()
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("boxes", F32, [1, count, 1, 4]),
         helper.make_tensor_value_info("scores", F32, [1, count, classes])],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs], list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("opbridge", 1)])
    model.ir_version = 8
    return model


def _builtin_model():
    """The pipeline in standard ONNX ops (see the module docstring)."""
    from onnx import helper

    count, classes = sizes()
    topk, keep = _limits()

    def const(name, values, dtype=I64):
        return helper.make_tensor(name, dtype, [len(values)], values)

    n = helper.make_node
    nodes = [
        n("Reshape", ["boxes", "boxes_shape"], ["boxes_2d"]),                       # [S, 4]
        n("Reshape", ["scores", "scores_shape"], ["scores_2d"]),                    # [S, C]
        n("Transpose", ["scores_2d"], ["class_scores"], perm=[1, 0]),               # [C, S]
        n("TopK", ["class_scores", "topk"], ["top_scores", "top_boxes"], axis=1),   # [C, k]
        n("Gather", ["boxes_2d", "top_boxes"], ["class_boxes"], axis=0),            # [C, k, 4]
        n("Unsqueeze", ["top_scores", "axis_1"], ["nms_scores"]),                   # [C, 1, k]
        n("NonMaxSuppression", ["class_boxes", "nms_scores", "max_output", "iou", "score"], ["selected"]),
        n("Gather", ["selected", "cols_0_2"], ["class_rank"], axis=1),              # [K, 2]: (c, rank)
        n("GatherND", ["top_scores", "class_rank"], ["kept_scores"]),               # [K]
        n("Shape", ["kept_scores"], ["kept_count"]),
        n("Min", ["kept_count", "keep"], ["keep_count"]),
        n("TopK", ["kept_scores", "keep_count"], ["det_scores", "det_rows"], axis=0),
        n("Gather", ["class_rank", "det_rows"], ["det_class_rank"], axis=0),      # [D, 2]
        n("GatherND", ["class_boxes", "det_class_rank"], ["det_boxes"]),          # [D, 4]
        n("Unsqueeze", ["det_scores", "axis_1"], ["det_scores_col"]),
        n("Concat", ["det_boxes", "det_scores_col"], ["dets"], axis=1),           # [D, 5]
        n("Gather", ["det_class_rank", "col_0"], ["labels"], axis=1),             # [D, 1]
    ]
    initializers = [
        const("boxes_shape", [count, 4]), const("scores_shape", [count, classes]), const("topk", [topk]),
        const("axis_1", [1]), const("max_output", [count]), helper.make_tensor("iou", F32, [1], [IOU]),
        helper.make_tensor("score", F32, [1], [SCORE]), const("cols_0_2", [0, 2]), const("keep", [keep]),
        const("col_0", [0]),
    ]
    return _model(nodes, "bench_ort_batched_nms", [("dets", F32, ["D", 5]), ("labels", I64, ["D", 1])], initializers)


def _torchvision(boxes, scores):
    """The pipeline with torch.topk and torchvision.ops.batched_nms."""
    import torch
    import torchvision

    topk, keep_topk = _limits()
    boxes, scores = as_tensor(boxes[0, :, 0]), as_tensor(scores[0])
    top_scores, top_boxes = scores.t().topk(topk, dim=1)                      # [C, k]
    passing = top_scores > SCORE
    classes = torch.arange(scores.shape[1], device=top_boxes.device)[:, None].expand_as(top_boxes)[passing]
    candidate_boxes, candidate_scores = boxes[top_boxes[passing]], top_scores[passing]
    keep = torchvision.ops.batched_nms(candidate_boxes, candidate_scores, classes, IOU)[:keep_topk]
    return torch.cat([candidate_boxes[keep], candidate_scores[keep, None]], 1), classes[keep]


def _eager(boxes, scores):
    import torch

    from opbridge.ops import trt_batched_nms

    topk, keep = _limits()
    return trt_batched_nms(as_tensor(boxes), as_tensor(scores), keep, IOU, SCORE, topk=topk)


def trt_batched_nms(threads: int) -> list[Case]:
    count, classes = sizes()
    boxes = proposals(count, 23)[None, :, None]
    scores = np.ascontiguousarray(class_scores(classes, count, 24).T[None])  # [1, S, C]
    feeds = {"boxes": boxes, "scores": scores}
    return [Case(
        name="trt_batched_nms",
        opbridge=ort_engine(_ours_model(), feeds, threads),
        ort=ort_engine(_builtin_model(), feeds, threads),
        torch=torch_engine(_torchvision, boxes, scores),
        reference=torch_engine(_eager, boxes, scores),
    )]


WORKLOADS = {"trt_batched_nms": trt_batched_nms}
