"""opbridge.verify with dynamic axes: the exported model also runs at another size of every
dynamic axis and at 0, so that an export that baked the example's size into the graph fails."""

from __future__ import annotations

import pytest
import torch

import opbridge
from graphs import EXPORTERS
from opbridge.verify import _resample_index, other_size
from test_export import TorchvisionRoiAlign as RoiAlign, roi_inputs  # roi_align((5, 4), 0.5, 0, aligned)


class ReshapeToTracedSize(torch.nn.Module):
    """int() of a traced size is a constant to the legacy exporter: the graph reshapes to 6 rows
    whatever the input (the dynamo exporter keeps the size symbolic)."""

    def forward(self, x):
        return x.reshape(int(x.shape[0]), -1)


class FlattenToTracedCount(torch.nn.Module):
    """The same with the element count: at another size ORT's Reshape cannot make the baked count."""

    def forward(self, x):
        return x.reshape(int(x.numel())) * 2


class BranchOnSize(torch.nn.Module):
    """A Python branch on a size: both exporters keep only the branch the example took."""

    def forward(self, x):
        if x.shape[0] > 5:
            return x * 2
        return x * 3


class MaxOverRows(torch.nn.Module):
    """Eager PyTorch itself refuses 0 rows (max of an empty dim)."""

    def forward(self, x):
        return x.max(0).values


def rows(report):
    return [(s.axis, s.example_size, s.size, s.result) for s in report.sizes]


def test_default_other_size():
    # n minus its largest power-of-two factor up to 32; plus it when that leaves less than 2.
    assert [other_size(n) for n in [1, 2, 3, 4, 6, 7, 8, 224, 256, 400, 800]] == \
        [2, 4, 2, 8, 4, 6, 16, 192, 224, 384, 768]


def test_resample_index():
    assert _resample_index(6, 4).tolist() == [0, 1, 2, 3]
    assert _resample_index(6, 0).tolist() == []
    grown = _resample_index(3, 9)
    assert grown[:3].tolist() == [0, 1, 2] and all(0 <= i < 3 for i in grown.tolist())
    assert torch.equal(grown, _resample_index(3, 9))  # the same rows for every input naming the axis


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_dynamic_roi_align_passes_at_other_sizes_and_zero(exporter):
    report = opbridge.verify(RoiAlign(), roi_inputs(6), exporter=exporter, dynamic_axes={"rois": {0: "num_rois"}},
                             print_report=False)
    assert report.ok, str(report)
    assert rows(report) == [("num_rois", 6, 4, "ok"), ("num_rois", 6, 0, "ok")]
    assert [s.outputs[0].ort_shape for s in report.sizes] == [(4, 3, 5, 4), (0, 3, 5, 4)]
    assert "num_rois  rois dim 0  6 -> 4" in str(report)


def test_larger_size_resamples_rows_shared_by_inputs():
    """An axis named in two inputs changes in both, with the same rows: the second input is the
    first's batch index column, which the model checks against the RoIs it pools."""

    class Checked(torch.nn.Module):
        def forward(self, x, rois, batch):
            torch._check(bool((rois[:, 0] == batch).all()))
            return RoiAlign()(x, rois) + batch[:, None, None, None]

    x, rois = roi_inputs(5)
    report = opbridge.verify(Checked(), (x, rois, rois[:, 0].clone()), exporter="legacy",
                             dynamic_axes={"rois": {0: "r"}, "batch": {0: "r"}}, dynamic_sizes={"r": [9]},
                             print_report=False)
    assert report.ok, str(report)
    assert rows(report) == [("r", 5, 9, "ok")] and report.sizes[0].places == ["rois dim 0", "batch dim 0"]


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_branch_on_size_fails(exporter):
    report = opbridge.verify(BranchOnSize(), (torch.randn(6, 3),), exporter=exporter, dynamic_axes={"x": {0: "n"}},
                             print_report=False)
    assert not report.ok
    assert rows(report) == [("n", 6, 4, "MISMATCH"), ("n", 6, 0, "ok")]  # 0 rows: nothing to get wrong
    assert report.outputs[0].ok  # the example's own size matches
    assert "n     x dim 0  6 -> 4" in str(report) and "verdict: MISMATCH" in str(report)


def test_size_baked_into_reshape_fails_on_shape():
    report = opbridge.verify(ReshapeToTracedSize(), (torch.randn(6, 3, 2),), exporter="legacy",
                             dynamic_axes={"x": {0: "n"}}, print_report=False)
    assert not report.ok
    # At 0, eager PyTorch cannot reshape to (0, -1) either: skipped, and said so.
    assert rows(report) == [("n", 6, 4, "MISMATCH"), ("n", 6, 0, "skipped")]
    assert report.sizes[0].detail == "output shape 6x4 (eager 4x6)"
    assert "eager PyTorch raises at this size" in report.sizes[1].detail


def test_size_baked_into_reshape_fails_in_ort():
    report = opbridge.verify(FlattenToTracedCount(), (torch.randn(6, 5),), exporter="legacy",
                             dynamic_axes={"x": {0: "n"}}, print_report=False)
    assert not report.ok
    assert rows(report) == [("n", 6, 4, "ORT error"), ("n", 6, 0, "ORT error")]
    assert "Reshape" in report.sizes[0].detail and "ORT error: " in str(report)


def test_zero_that_eager_refuses_is_skipped():
    report = opbridge.verify(MaxOverRows(), (torch.randn(6, 3),), exporter="dynamo", dynamic_axes={"x": {0: "n"}},
                             print_report=False)
    assert report.ok, str(report)
    assert rows(report) == [("n", 6, 4, "ok"), ("n", 6, 0, "skipped")]


def test_dynamic_sizes_argument():
    model, args = RoiAlign(), roi_inputs(6)
    with pytest.raises(ValueError, match="dynamic_sizes names \\['rois'\\] are not axis names"):
        opbridge.verify(model, args, dynamic_axes={"rois": {0: "num_rois"}}, dynamic_sizes={"rois": [3]})
    with pytest.raises(ValueError, match="must hold sizes"):
        opbridge.verify(model, args, dynamic_axes={"rois": {0: "num_rois"}}, dynamic_sizes={"num_rois": [-1]})
    report = opbridge.verify(model, args, dynamic_axes={"rois": {0: "num_rois"}}, dynamic_sizes={"num_rois": []},
                             print_report=False)
    assert report.ok and rows(report) == [("num_rois", 6, 6, "skipped")]
    assert "dynamic_sizes gives no size to check" in str(report)


def test_axis_with_different_example_sizes_is_an_error():
    x, rois = roi_inputs(6)
    with pytest.raises(ValueError, match="dynamic axis 'n' has different sizes in the example"):
        opbridge.verify(RoiAlign(), (x, rois), dynamic_axes={"x": {0: "n"}, "rois": {0: "n"}})


def test_device_must_be_cpu_or_cuda_and_cuda_needs_onnxruntime_gpu(monkeypatch):
    model, args = RoiAlign(), roi_inputs()
    with pytest.raises(ValueError, match='device must be "cpu" or "cuda", got \'gpu\''):
        opbridge.verify(model, args, device="gpu")
    import onnxruntime

    # As on any machine with the CPU-only onnxruntime: a clear error before the export starts.
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: ["CPUExecutionProvider"])
    with pytest.raises(RuntimeError, match="install onnxruntime-gpu"):
        opbridge.verify(model, args, device="cuda")
