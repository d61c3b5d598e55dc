"""GridPriors workload (workloads.md has none for this op; the shapes are mmdet's largest anchor
levels at an 800x1344 input):

* grid_priors: Faster R-CNN's RPN on P2 (3 base anchors, a 200 x 336 grid, stride 4 -> [201600, 4])
  and RetinaNet's P3 (9 base anchors, 100 x 168, stride 8 -> [151200, 4]).

mmdeploy::GridPriorsTRT against the graph torch.onnx.export writes for mmdet's formula (arange,
repeat, stack, add, with the grid's height and width dynamic so that nothing is folded into a
constant), with either exporter, in ORT, and against PyTorch eager.
"""

from __future__ import annotations

import numpy as np

from opbridge.bench.harness import (F32, I64, Case, as_tensor, data_rng, export_once, one_node_model, ort_engine, sized,
                                    torch_engine)

# (name, base anchors, height, width, stride)
LEVELS = [("rpn.p2", 3, 200, 336, 4), ("retinanet.p3", 9, 100, 168, 8)]


def _base(anchors: int, salt: int) -> np.ndarray:
    rng = data_rng(salt)
    half = rng.uniform(8, 256, (anchors, 2))
    return np.concatenate([-half, half], 1).astype(np.float32)


def _formula(base, h_provider, w_provider, stride: int):
    """mmdet's single_level_grid_priors, the grid's size read from the providers' lengths."""
    import torch

    shift_x = torch.arange(0, w_provider.shape[0], device=base.device).to(base.dtype) * stride
    shift_y = torch.arange(0, h_provider.shape[0], device=base.device).to(base.dtype) * stride
    shift_xx = shift_x.repeat(shift_y.shape[0])
    shift_yy = shift_y.view(-1, 1).repeat(1, shift_x.shape[0]).view(-1)
    shifts = torch.stack([shift_xx, shift_yy, shift_xx, shift_yy], dim=-1)
    return (base[None, :, :] + shifts[:, None, :]).view(-1, 4)


def _module(stride: int):
    import torch

    class GridPriors(torch.nn.Module):
        def forward(self, base, h_provider, w_provider):
            return _formula(base, h_provider, w_provider, stride)

    return GridPriors().eval()


def _plain_export(exporter: str, feeds: dict, stride: int):
    def export(path):
        import warnings

        import torch

        args = tuple(torch.from_numpy(feeds[n]) for n in ("base_anchors", "h_provider", "w_provider"))
        names = ["base_anchors", "h_provider", "w_provider"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if exporter == "dynamo":
                h, w = torch.export.Dim("h", min=2), torch.export.Dim("w", min=2)
                torch.onnx.export(_module(stride), args, str(path), dynamo=True, input_names=names,
                                  dynamic_shapes={"base": None, "h_provider": {0: h}, "w_provider": {0: w}},
                                  external_data=False, report=False, verbose=False)
            else:
                torch.onnx.export(_module(stride), args, str(path), dynamo=False, opset_version=17, input_names=names,
                                  dynamic_axes={"h_provider": {0: "h"}, "w_provider": {0: "w"}})

    return export


def _torch_priors(base, h_provider, w_provider, stride: int):
    return _formula(as_tensor(base), as_tensor(h_provider), as_tensor(w_provider), stride)


def grid_priors(threads: int) -> list[Case]:
    """grid_priors: RPN P2 (3 x 200 x 336, stride 4) and RetinaNet P3 (9 x 100 x 168, stride 8)."""
    import onnx

    cases = []
    levels = sized(LEVELS, [(name, anchors, height // 10, width // 10, stride) for name, anchors, height, width, stride
                            in LEVELS])
    for salt, (name, anchors, height, width, stride) in enumerate(levels):
        feeds = {"base_anchors": _base(anchors, 70 + salt), "h_provider": np.zeros(height, np.int64),
                 "w_provider": np.zeros(width, np.int64)}
        ours = one_node_model("GridPriorsTRT", [("base_anchors", F32, [anchors, 4]), ("h_provider", I64, [height]),
                                                ("w_provider", I64, [width])],
                              [("output", F32, [height * width * anchors, 4])], domain="mmdeploy",
                              stride_h=stride, stride_w=stride)
        for exporter in ("dynamo", "legacy"):
            plain = onnx.load(str(export_once(f"grid_priors_{name}_plain_{exporter}",
                                              _plain_export(exporter, feeds, stride))))
            cases.append(Case(
                name=f"grid_priors {name} [{height * width * anchors}, 4] vs {exporter} export",
                opbridge=ort_engine(ours, feeds, threads),
                ort=ort_engine(plain, feeds, threads),
                torch=torch_engine(_torch_priors, feeds["base_anchors"], feeds["h_provider"], feeds["w_provider"],
                                   stride),
                check_atol=0.0,
            ))
    return cases


WORKLOADS = {"grid_priors": grid_priors}
