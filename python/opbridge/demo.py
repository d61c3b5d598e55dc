"""The demo: a small two-stage detector head built on opbridge's ops, exported, run in ORT,
verified against eager PyTorch, with a printed report.

The model (random weights, fixed seed) does what the second stage of a two-stage detector does:
  backbone (2 strided convolutions, stride 4, then a modulated deformable convolution, DCNv2,
  whose offsets and mask a convolution predicts: torchvision.ops.deform_conv2d)
  -> feature warp: a convolution predicts a small flow field, F.grid_sample applies it
  -> soft-NMS over the region proposals (opbridge.ops.soft_nms)
  -> RoIAlign of every kept proposal (torchvision.ops.roi_align, 7x7, adaptive sampling)
  -> box head: classification logits and box deltas per kept proposal.
The proposals come in as an input, as from a first stage. (Computing them inside the model
would make soft-NMS depend on last-bit differences between ORT's and PyTorch's convolutions,
which can reorder two nearly equal scores; the comparison would then test the convolutions.)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import torchvision

import opbridge
import opbridge.ops


class DemoDetector(torch.nn.Module):
    def __init__(self, num_classes: int = 5, channels: int = 32, seed: int = 0):
        super().__init__()
        generator_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        self.backbone = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(16, channels, 3, stride=2, padding=1), torch.nn.ReLU(),
        )
        self.dcn_offset = torch.nn.Conv2d(channels, 3 * 9, 3, padding=1)  # 2 * 9 offsets + 9 mask logits
        self.dcn = torchvision.ops.DeformConv2d(channels, channels, 3, padding=1)
        self.flow = torch.nn.Conv2d(channels, 2, 3, padding=1)
        self.fc = torch.nn.Linear(channels * 7 * 7, 64)
        self.cls = torch.nn.Linear(64, num_classes + 1)
        self.reg = torch.nn.Linear(64, 4)
        torch.random.set_rng_state(generator_state)

    def forward(self, image: torch.Tensor, proposals: torch.Tensor, proposal_scores: torch.Tensor):
        feat = self.backbone(image)  # [1, C, H/4, W/4]
        offset_mask = self.dcn_offset(feat)
        feat = torch.relu(self.dcn(feat, offset_mask[:, :18], torch.sigmoid(offset_mask[:, 18:])))
        n, _, h, w = feat.shape
        # Base sampling grid (pixel centres, align_corners=False) plus a predicted flow.
        ys = (torch.arange(h, dtype=feat.dtype) * 2 + 1) / h - 1
        xs = (torch.arange(w, dtype=feat.dtype) * 2 + 1) / w - 1
        base = torch.stack(torch.meshgrid(xs, ys, indexing="xy"), dim=-1)  # [h, w, 2] as (x, y)
        flow = 0.05 * torch.tanh(self.flow(feat)).permute(0, 2, 3, 1)
        warped = F.grid_sample(feat, base + flow, mode="bilinear", padding_mode="border", align_corners=False)

        dets, keep = opbridge.ops.soft_nms(
            proposals, proposal_scores, iou_threshold=0.3, sigma=0.5, min_score=0.05, method="gaussian"
        )
        rois = torch.cat([dets.new_zeros((dets.shape[0], 1)), dets[:, :4]], dim=1)
        pooled = torchvision.ops.roi_align(warped, rois, (7, 7), spatial_scale=0.25, sampling_ratio=0, aligned=True)
        hidden = F.relu(self.fc(pooled.flatten(1)))
        return dets, keep, self.cls(hidden), self.reg(hidden)


def example_inputs(image_size: int = 256, num_proposals: int = 400, seed: int = 0):
    """A synthetic image and proposals jittered around a few objects (made here, nothing loaded)."""
    g = torch.Generator().manual_seed(seed)
    image = torch.rand((1, 3, image_size, image_size), generator=g)
    centres = torch.rand((12, 2), generator=g) * image_size * 0.8 + image_size * 0.1
    sizes = torch.rand((12, 2), generator=g) * image_size * 0.25 + 16
    pick = torch.randint(0, 12, (num_proposals,), generator=g)
    centre = centres[pick] + torch.randn((num_proposals, 2), generator=g) * 6
    size = sizes[pick] * (1 + 0.15 * torch.randn((num_proposals, 2), generator=g))
    proposals = torch.cat([centre - size / 2, centre + size / 2], dim=1).clamp(0, image_size)
    scores = torch.rand((num_proposals,), generator=g)
    return image, proposals, scores


def run_demo(timing_runs: int = 10) -> bool:
    """Exports the demo model with both exporters, runs each in ORT and prints the reports."""
    model = DemoDetector().eval()
    args = example_inputs()
    print("opbridge demo: a two-stage detector head (DCNv2, grid sampler, soft-NMS, RoIAlign)")
    print(f"inputs: image {list(args[0].shape)}, {args[1].shape[0]} proposals")
    ok = True
    for exporter in ("dynamo", "legacy"):
        print()
        report = opbridge.verify(
            model, args, exporter=exporter, dynamic_axes={"proposals": {0: "P"}, "proposal_scores": {0: "P"}},
            output_names=["dets", "keep", "cls_logits", "box_deltas"], timing_runs=timing_runs,
        )
        ok = ok and report.ok
    print()
    print("demo " + ("passed: ORT with opbridge matches PyTorch" if ok else "FAILED"))
    return ok
