"""Test data for the NMS family: axis-aligned boxes clustered around objects, as detectors
propose them (many overlapping, IoUs spread over (0, 1))."""

from __future__ import annotations

import numpy as np


def clustered_boxes(rng, count, clusters, spread=500.0, near_duplicates=True):
    """`count` boxes (x1, y1, x2, y2), float32, jittered around `clusters` objects placed in a
    spread x spread square (sides 4 to 120); with near_duplicates, every 6th box nearly
    duplicates the one before it (IoU ~0.9 to 1)."""
    centres = rng.uniform(0, spread, (max(clusters, 1), 2))
    sizes = np.exp(rng.uniform(np.log(4), np.log(120), (max(clusters, 1), 2)))
    pick = rng.integers(0, len(centres), count)
    ctr = centres[pick] + rng.normal(0, 0.2, (count, 2)) * sizes[pick]
    wh = sizes[pick] * np.exp(rng.normal(0, 0.25, (count, 2)))
    if near_duplicates:
        dup = np.arange(6, count, 6)
        ctr[dup] = ctr[dup - 1] + rng.normal(0, 0.01, (len(dup), 2)) * wh[dup - 1]
        wh[dup] = wh[dup - 1] * np.exp(rng.normal(0, 0.01, (len(dup), 2)))
    return np.concatenate([ctr - wh / 2, ctr + wh / 2], axis=1).astype(np.float32)
