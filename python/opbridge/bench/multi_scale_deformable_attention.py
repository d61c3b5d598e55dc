"""Multi-scale deformable attention workloads (workloads.md: msda.encoder, msda.decoder):
opbridge::MultiScaleDeformableAttention against the pure-PyTorch formulation (mmcv's
multi_scale_deformable_attn_pytorch: one F.grid_sample per level, then a weighted sum) run eagerly,
and the same formulation exported by torch.onnx with standard ops (GridSample-16 per level,
Mul, ReduceSum) run in ORT, which is what users deploy on the CPU today: ORT has no such op.

Value [1, S, 8, 32] over 4 levels 100x150, 50x75, 25x38, 13x19 (S = 19947), 4 points per level;
the encoder has a query per value row, the decoder 900. Locations are uniform in [-0.05, 1.05]
(a few points near or past the edges), weights a softmax over the 16 points of each head.
"""

from __future__ import annotations

import functools

import numpy as np

from opbridge.bench.harness import (F32, I64, Case, as_tensor, data_rng, export_once, one_node_model, ort_engine, sized,
                                    torch_engine)

HEADS, CHANNELS, POINTS = 8, 32, 4


def _shapes() -> list[tuple[int, int]]:
    """The levels' (height, width)."""
    return sized([(100, 150), (50, 75), (25, 38), (13, 19)], [(10, 15), (5, 8), (3, 4), (2, 2)])


def _inputs(queries: int, salt: int) -> dict:
    rng = data_rng(salt)
    shapes = _shapes()
    levels, values = len(shapes), sum(h * w for h, w in shapes)
    logits = rng.standard_normal((1, queries, HEADS, levels * POINTS)).astype(np.float32)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return {
        "value": rng.standard_normal((1, values, HEADS, CHANNELS), dtype=np.float32),
        "spatial_shapes": np.array(shapes, np.int64),
        "level_start_index": np.cumsum([0] + [h * w for h, w in shapes][:-1]).astype(np.int64),
        "sampling_locations": rng.uniform(-0.05, 1.05, (1, queries, HEADS, levels, POINTS, 2)).astype(np.float32),
        "attention_weights": weights.reshape(1, queries, HEADS, levels, POINTS).astype(np.float32),
    }


def _pure_eager(value, locations, weights):
    import torch

    from opbridge.ops.multi_scale_deformable_attention import multi_scale_deformable_attention_pytorch

    return multi_scale_deformable_attention_pytorch(as_tensor(value), _shapes(), as_tensor(locations), as_tensor(weights))


def _export_pure(queries: int):
    """torch.onnx.export (dynamo, PyTorch's default) of the pure formulation with the level shapes
    as constants, as a Deformable DETR model exports without opbridge."""

    def export(path):
        import torch

        from opbridge.ops.multi_scale_deformable_attention import multi_scale_deformable_attention_pytorch

        shapes = _shapes()

        class Pure(torch.nn.Module):
            def forward(self, value, sampling_locations, attention_weights):
                return multi_scale_deformable_attention_pytorch(value, shapes, sampling_locations, attention_weights)

        feeds = _inputs(queries, 0)
        args = tuple(torch.from_numpy(feeds[k]) for k in ("value", "sampling_locations", "attention_weights"))
        torch.onnx.export(Pure().eval(), args, str(path), input_names=["value", "sampling_locations", "attention_weights"],
                          output_names=["output"], opset_version=18, dynamo=True, external_data=False)

    return export


def _msda_cases(name: str, queries: int | None, salt: int, threads: int) -> list[Case]:
    """The cases of `queries` queries (None: one per value row, the encoder's)."""
    import onnx

    if queries is None:
        queries = sum(h * w for h, w in _shapes())

    feeds = _inputs(queries, salt)
    inputs = [("value", F32, feeds["value"].shape), ("spatial_shapes", I64, feeds["spatial_shapes"].shape),
              ("level_start_index", I64, feeds["level_start_index"].shape),
              ("sampling_locations", F32, feeds["sampling_locations"].shape),
              ("attention_weights", F32, feeds["attention_weights"].shape)]
    ours = one_node_model("MultiScaleDeformableAttention", inputs, [("output", F32, [1, queries, HEADS * CHANNELS])],
                          domain="opbridge")
    pure = onnx.load(str(export_once(f"msda_pure_{queries}", _export_pure(queries))))
    pure_feeds = {k: feeds[k] for k in ("value", "sampling_locations", "attention_weights")}
    return [Case(
        name=f"{name} Lq={queries}",
        opbridge=ort_engine(ours, feeds, threads),
        ort=ort_engine(pure, pure_feeds, threads),
        torch=torch_engine(_pure_eager, feeds["value"], feeds["sampling_locations"], feeds["attention_weights"]),
    )]


WORKLOADS = {
    "msda.encoder": functools.partial(_msda_cases, "msda.encoder", None, 71),
    "msda.decoder": lambda threads: _msda_cases("msda.decoder", sized(900, 30), 72, threads),
}
