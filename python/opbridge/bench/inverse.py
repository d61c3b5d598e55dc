"""Matrix inverse workload (workloads.md: inverse, [4096,4,4] and [64,64,64]): opbridge::Inverse
against ORT's com.microsoft::Inverse and torch.linalg.inv."""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import F32, Case, as_tensor, data_rng, one_node_model, ort_engine, sized, torch_engine

def well_conditioned(shape: tuple[int, ...], salt: int) -> np.ndarray:
    """Standard normal matrices plus 2 sqrt(M) on the diagonal (condition numbers of a few units),
    with their rows shuffled, so that the factorization swaps rows as it would on general data."""
    rng = data_rng(salt)
    m = shape[-1]
    a = rng.standard_normal(shape) + 2.0 * np.sqrt(m) * np.eye(m)
    rows = np.argsort(rng.random(shape[:-1]), axis=-1)
    return np.take_along_axis(a, rows[..., None], axis=-2).astype(np.float32)


def _torch_inverse(a):
    import torch

    return torch.linalg.inv(as_tensor(a))


def inverse(threads: int) -> list[Case]:
    """inverse: batches of 4096 4x4 and 64 64x64 matrices."""
    cases = []
    for salt, shape in enumerate(sized([(4096, 4, 4), (64, 64, 64)], [(64, 4, 4), (4, 16, 16)])):
        a = well_conditioned(shape, 40 + salt)
        io = [("input", F32, list(shape))], [("output", F32, list(shape))]
        cases.append(Case(
            name=f"inverse {list(shape)}",
            opbridge=ort_engine(one_node_model("Inverse", *io, domain="opbridge"), {"input": a}, threads),
            ort=ort_engine(one_node_model("Inverse", *io, domain="com.microsoft"), {"input": a}, threads),
            torch=torch_engine(_torch_inverse, a),
        ))
    return cases


WORKLOADS = {"inverse": inverse}
