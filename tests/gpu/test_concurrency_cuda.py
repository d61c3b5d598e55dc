"""Concurrent runs on the GPU: one CUDA session run from several threads at once, and two sessions of one
model at once, give each input's single-thread outputs bit for bit. The CUDA kernels take their device
scratch on the node's compute stream (ort/cuda_glue.h: CudaScratchAllocator); scratch of no stream,
freed while the kernels were queued, could be handed to a concurrent run's stream and overwritten under
them. The ops are those that take scratch: NMS (sorts, mask, kept lists), multi-class NMS, group
normalization (statistics), RoIAlign (RoI plans)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import opbridge
from graphs import one_node_model

CUDA = ("CUDAExecutionProvider",)
RUNS = 48


def _boxes(rng, n: int) -> np.ndarray:
    xy = rng.uniform(0, 800, (n, 2))
    wh = rng.uniform(8, 200, (n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(np.float32)


def _nms(rng):
    model = one_node_model("opbridge::Nms", {"iou_threshold": 0.5}, ["boxes", "scores"], ["keep"])
    return model, [{"boxes": _boxes(rng, 4000), "scores": rng.uniform(0, 1, 4000).astype(np.float32)} for _ in range(4)]


def _batched_nms(rng):
    model = one_node_model("opbridge::BatchedNms", {"iou_threshold": 0.5}, ["boxes", "scores", "idxs"], ["keep"],
                           input_types={"idxs": "int64"})
    return model, [{"boxes": _boxes(rng, 3000), "scores": rng.uniform(0, 1, 3000).astype(np.float32),
                    "idxs": rng.integers(0, 20, 3000)} for _ in range(4)]


def _multiclass_nms(rng):
    model = one_node_model("opbridge::MulticlassNms", {"iou_threshold": 0.5, "score_threshold": 0.3,
                                                       "max_output_boxes_per_class": 50},
                           ["boxes", "scores"], ["selected"])
    return model, [{"boxes": _boxes(rng, 2000)[None], "scores": rng.uniform(0, 1, (1, 12, 2000)).astype(np.float32)}
                   for _ in range(4)]


def _group_norm(rng):
    model = one_node_model("opbridge::GroupNorm", {"num_groups": 8, "epsilon": 1e-5}, ["input", "scale", "bias"],
                           ["output"])
    return model, [{"input": rng.standard_normal((2, 32, 64, 64)).astype(np.float32),
                    "scale": rng.standard_normal(32).astype(np.float32),
                    "bias": rng.standard_normal(32).astype(np.float32)} for _ in range(4)]


def _roi_align(rng):
    model = one_node_model("opbridge::RoiAlign", {"output_height": 7, "output_width": 7, "spatial_scale": 0.25,
                                                  "sampling_ratio": 2, "aligned": 1}, ["input", "rois"], ["output"])
    feeds = []
    for _ in range(4):
        rois = np.concatenate([np.zeros((500, 1)), _boxes(rng, 500)], axis=1).astype(np.float32)
        feeds.append({"input": rng.standard_normal((1, 64, 200, 200)).astype(np.float32), "rois": rois})
    return model, feeds


CASES = {"nms": _nms, "batched_nms": _batched_nms, "multiclass_nms": _multiclass_nms, "group_norm": _group_norm,
         "roi_align": _roi_align}


@pytest.mark.parametrize("name", list(CASES))
def test_concurrent_runs_give_the_single_thread_outputs(name):
    model, feeds = CASES[name](np.random.default_rng(5))
    sessions = [opbridge.create_session(model, providers=CUDA) for _ in range(2)]
    expected = [sessions[0].run(None, f) for f in feeds]

    def run(k: int):
        # Runs k of session k % 2: both sessions at once, and each from several threads at once.
        return k, sessions[k % 2].run(None, feeds[k % len(feeds)])

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, range(RUNS)))
    for k, outputs in results:
        for e, a in zip(expected[k % len(feeds)], outputs):
            assert e.dtype == a.dtype and e.shape == a.shape, f"{name}, run {k}"
            assert e.tobytes() == a.tobytes(), f"{name}, run {k}: outputs differ from the single-thread run's"
