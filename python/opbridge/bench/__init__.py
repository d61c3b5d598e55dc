"""Benchmarks of opbridge's ops against ONNX Runtime's built-in ops and PyTorch eager.

    python -m opbridge bench [workload ids or prefixes] --runs 10 --threads 1 2
    python -m opbridge bench roi_align --runs 3 --threads 1 --no-memory
    python -m opbridge bench --device cuda --runs 20 --threads 1   (GPU: onnxruntime-gpu, a CUDA build)
    python -m opbridge bench --smoke [--device cuda]   (every engine once on reduced inputs, untimed, checked)

The workloads are the ones in /work/shared/spec/workloads.md. Each op's workloads live with the
op, in opbridge/bench/<kernel>.py (a dict WORKLOADS of id -> function(threads) returning the
cases to compare); whole-model workloads are in opbridge/bench/models.py. The harness
(opbridge/bench/harness.py) is shared. Method:

* inputs are generated in this process from a fixed seed (nothing is downloaded);
* every engine runs in this one process: opbridge's node and ORT's built-in node in ORT sessions
  created the same way (same options, same library registered), PyTorch eager under
  ``torch.inference_mode()`` with ``torch.set_num_threads(t)``;
* before timing, opbridge's output is compared with PyTorch eager (``np.allclose``, atol 1e-4) and a
  mismatch is shown in the "check" column (a benchmark is not a test: it does not stop);
* after one warm-up run per engine, the engines are interleaved within every repetition (the
  order rotates) and the median of ``runs`` repetitions is reported, at each thread count;
* peak memory: per workload, a child process runs only opbridge (or only the ORT built-in) a few
  times and reports its peak RSS. Skip it with ``OPBRIDGE_BENCH_MEMORY=0`` or ``--no-memory``.

ORT's intra-op worker threads spin by default. The setting used for both ORT engines is
``harness.SPINNING`` (override with ``OPBRIDGE_BENCH_SPINNING=0/1``); it is printed with the results.

Workload modules import torch only inside the engines that need it, so that the memory children
(which import this package without torch) measure the op alone.
"""

from __future__ import annotations

from opbridge.bench import (bicubic_interpolate, corner_pool, cummax, deform_conv, gather_topk, grid_priors,
                            grid_sample, group_norm, instance_norm, inverse, models, multi_level_rotated_roi_align,
                            multi_scale_deformable_attention, multi_scale_roi_align, nms, nms_match, nms_rotated,
                            roi_align, roi_align_rotated, rotated_feature_align, scaled_dot_product_attention, soft_nms,
                            trt_batched_nms)
from opbridge.bench.harness import Case, run

# Every workload, by id, in report order.
OP_WORKLOADS = {**roi_align.WORKLOADS, **grid_sample.WORKLOADS, **soft_nms.WORKLOADS, **deform_conv.WORKLOADS,
                **nms.WORKLOADS, **nms_rotated.WORKLOADS, **nms_match.WORKLOADS, **trt_batched_nms.WORKLOADS,
                **roi_align_rotated.WORKLOADS, **multi_level_rotated_roi_align.WORKLOADS,
                **rotated_feature_align.WORKLOADS, **multi_scale_roi_align.WORKLOADS, **cummax.WORKLOADS,
                **corner_pool.WORKLOADS, **instance_norm.WORKLOADS, **group_norm.WORKLOADS, **inverse.WORKLOADS,
                **multi_scale_deformable_attention.WORKLOADS, **gather_topk.WORKLOADS, **grid_priors.WORKLOADS,
                **bicubic_interpolate.WORKLOADS, **scaled_dot_product_attention.WORKLOADS}
WORKLOADS = {**OP_WORKLOADS, **models.WORKLOADS}

__all__ = ["Case", "OP_WORKLOADS", "WORKLOADS", "main"]


def cuda_workloads() -> list[str]:
    """The workloads `--device cuda` runs by default: those of every op with a CUDA kernel, the
    whole Faster R-CNN (one image, and batches of 1 and 4) and the models of issue 27's kernels."""
    from opbridge import manifest

    ids = [w for op in manifest.load().values() if op.cuda_identities for w in op.workloads]
    return [w for w in WORKLOADS if w in ids] + ["detector.fasterrcnn", "detector.fasterrcnn.batch",
                                                  "model.deformable_detr_layer", "model.dcn_block"]


def main(workloads: list[str], runs: int, threads: list[int], memory: bool | None = None, device: str = "cpu",
         smoke: bool = False) -> int:
    """Runs the selected workloads (ids or prefixes; empty: all, or on the GPU cuda_workloads()) and
    prints the report; `smoke`: every engine once on reduced inputs, untimed (harness.SMOKE)."""
    if device == "cuda" and not workloads:
        workloads = cuda_workloads()
    return run(WORKLOADS, workloads, runs, threads, memory, device, smoke_run=smoke)
