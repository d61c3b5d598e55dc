"""The CUDA twin check of ./run.sh test-gpu: with OPBRIDGE_TEST_CUDA_TWINS=1, every model the op
tests run through graphs.run / run_error / session_error whose nodes include an identity with a
CUDA kernel also runs in a session on ORT's CUDA execution provider, on the same inputs, and must
give the CPU session's outputs (the tolerance table's "cuda_twin" entry: bit for bit, except a NaN's
sign and payload, which IEEE 754 leaves open and x86 and GPUs set differently), the CPU
session's errors, word for word, or, where the CPU op
reports an error that depends on values in device memory, the defined result the CUDA kernel
gives instead (NaN; DEVICE_DEFINED_RESULTS). The comparisons are plain numpy and string functions,
tested without a GPU in test_cuda_twins.py."""

from __future__ import annotations

import os
import re

import numpy as np

from opbridge import manifest, tolerances

ENABLED = os.environ.get("OPBRIDGE_TEST_CUDA_TWINS") == "1"

# Kernels whose CPU op reports an error about values the CUDA kernel reads in device memory, where
# the CUDA kernel gives a defined result instead, without waiting for the GPU (the op pages' "On
# the GPU" notes): RoI batch indices and sampling grids beyond the limits (axis-aligned and
# rotated), and heatmaps of oversized rois, give NaN rows; a singular matrix under check_errors
# gives a NaN inverse; an index out of range gives GatherTopk rows of all-ones words (NaN in float
# data, -1 in integer data; rows of no elements hold nothing to write).
DEVICE_DEFINED_RESULTS = {"roi_align", "multi_scale_roi_align", "multi_level_roi_align", "heatmaps_to_keypoints",
                          "roi_align_rotated", "multi_level_rotated_roi_align", "inverse", "gather_topk"}
ALL_ONES_RESULTS = {"gather_topk"}


def cuda_kernels(model) -> list[str]:
    """The kernels of `model`'s nodes whose identity has a CUDA kernel, in node order."""
    kernels = []
    registered = {f"{domain}::{name}": op for domain, name, op in manifest.identities()}
    for node in model.graph.node:
        identity = f"{node.domain}::{node.op_type}"
        if identity in registered and identity in registered[identity].cuda_identities:
            kernels.append(registered[identity].kernel)
    return kernels


def compare_outputs(kernel: str, cpu: list[np.ndarray], cuda: list[np.ndarray]) -> None:
    """Asserts that the CUDA session's outputs are the CPU session's (same count, shapes, dtypes,
    NaN positions; values within the cuda_twin tolerance of `kernel`)."""
    assert len(cpu) == len(cuda), f"{kernel}: {len(cuda)} CUDA outputs, {len(cpu)} CPU outputs"
    for k, (c, g) in enumerate(zip(cpu, cuda)):
        assert c.shape == g.shape and c.dtype == g.dtype, (
            f"{kernel} output {k}: CUDA {g.dtype}{list(g.shape)}, CPU {c.dtype}{list(c.shape)}")
        tol = tolerances.tolerance("cuda_twin", c.dtype, kernel)
        if tol.rtol == 0 and tol.atol == 0:
            assert tolerances.same_bits_but_nan(c, g), (
                f"{kernel} output {k}: CUDA differs from CPU at {np.argwhere(c != g)[:5].tolist()}")
        else:
            assert np.array_equal(np.isnan(c), np.isnan(g)), f"{kernel} output {k}: NaN at different places"
            np.testing.assert_allclose(g, c, rtol=tol.rtol, atol=tol.atol, err_msg=f"{kernel} output {k}")


def opbridge_message(error: str) -> str:
    """The opbridge part of an ORT error text ("domain::Op: what is wrong ..."), without what ORT
    wraps around it (which names the provider's kernel)."""
    match = re.search(r"[\w.]*::\w+: .*", error, re.S)
    return match.group(0).strip() if match else error.strip()


def compare_errors(kernel: str, cpu_error: str, cuda_error: str | None, cuda_outputs: list | None) -> None:
    """Asserts that the CUDA session failed as the CPU one did, or gave the defined NaN result where
    the kernel reads the offending values in device memory."""
    if cuda_error is not None:
        assert opbridge_message(cuda_error) == opbridge_message(cpu_error), (
            f"{kernel}: the CUDA error differs from the CPU one:\n  CUDA: {cuda_error}\n  CPU: {cpu_error}")
        return
    assert kernel in DEVICE_DEFINED_RESULTS, f"{kernel}: the CPU op fails ({cpu_error}) but the CUDA op ran"
    if kernel in ALL_ONES_RESULTS:
        if all(o.size == 0 for o in cuda_outputs):
            return
        assert any((o.dtype.kind == "f" and np.isnan(o).any()) or (o.dtype.kind == "i" and (o == -1).any())
                   for o in cuda_outputs), (
            f"{kernel}: where the CPU op fails ({cpu_error}) the CUDA op must write all-ones words (NaN or -1)")
        return
    assert any(o.dtype.kind == "f" and np.isnan(o).any() for o in cuda_outputs), (
        f"{kernel}: where the CPU op fails ({cpu_error}) the CUDA op must write NaN")
