"""The benchmark runs: every engine of every workload once, on the reduced inputs of a smoke run
(`opbridge bench --smoke`), with the correctness check a timed run prints. Nothing is timed. A bench
whose engines cannot run (the PyTorch engines once got tensors where they expected numpy arrays and
11 of 19 op families crashed) fails here, not in a user's hands."""

from __future__ import annotations

import pytest

from opbridge import bench
from opbridge.bench import harness

SLOW = {"detector.fasterrcnn", "detector.maskrcnn",  # an export of a whole detector each: 20-30 s
        "detector.fasterrcnn.batch", "detector.maskrcnn.batch"}


def _params():
    return [pytest.param(w, marks=pytest.mark.slow) if w in SLOW else w for w in bench.WORKLOADS]


@pytest.mark.parametrize("workload", _params())
def test_every_engine_of_the_workload_runs_and_opbridge_matches_its_reference(workload, monkeypatch, tmp_path):
    monkeypatch.setattr(harness, "SMOKE", True)
    monkeypatch.setattr(harness, "CACHE", tmp_path)  # exports of this test only (xdist workers run in parallel)
    rows = harness.smoke(bench.WORKLOADS, workload)
    assert rows, f"{workload} built no case"
    for row in rows:
        assert row.errors == [], f"{row.case}: engines failed: {row.errors}"
        assert row.check.startswith("ok"), f"{row.case}: check column {row.check!r}"


def test_smoke_inputs_are_smaller_than_the_timed_ones(monkeypatch):
    """sized() gives the reduced inputs in a smoke run only."""
    assert harness.sized(800, 160) == 800
    from opbridge.bench.nms import sizes

    full = sizes()
    monkeypatch.setattr(harness, "SMOKE", True)
    assert sizes() < full


def test_the_smoke_run_reports_a_failing_engine_and_a_mismatch(monkeypatch, capsys):
    """A row fails on an engine's exception or a check that is not ok, and the run exits 1."""

    def broken(threads):
        def raises():
            raise TypeError("expected np.ndarray (got Tensor)")

        good = lambda: [harness.np.zeros(3, harness.np.float32)]  # noqa: E731
        wrong = lambda: [harness.np.ones(3, harness.np.float32)]  # noqa: E731
        return [harness.Case(name="raises", opbridge=good, ort=raises, torch=good),
                harness.Case(name="differs", opbridge=good, torch=wrong)]

    registry = {"broken": broken}
    rows = harness.smoke(registry, "broken")
    assert [r.passed for r in rows] == [False, False]
    assert rows[0].errors == ["ort: TypeError: expected np.ndarray (got Tensor)"]
    assert rows[1].check.startswith("MISMATCH")
    assert harness.run(registry, ["broken"], 1, [1], memory=False, smoke_run=True) == 1
    out = capsys.readouterr().out
    assert "2 case(s) FAILED" in out and harness.SMOKE is False


def test_a_timed_run_reports_a_raising_workload_and_runs_the_others(capsys):
    """One workload raising (the GPU bench once stopped at its fourth row) is an ERROR row; the rows
    after it are still measured, and the run exits 1."""

    def raises(threads):
        raise RuntimeError("Expected all tensors to be on the same device")

    def fine(threads):
        zeros = lambda: [harness.np.zeros(3, harness.np.float32)]  # noqa: E731
        return [harness.Case(name="fine", opbridge=zeros, torch=zeros)]

    registry = {"raises": raises, "fine": fine}
    assert harness.run(registry, ["raises", "fine"], 1, [1], memory=False) == 1
    out = capsys.readouterr().out
    assert "raises" in out and "ERROR RuntimeError: Expected all tensors to be on the same device" in out
    assert "\nfine " in out and "ok (0e+00)" in out
    assert "FAILED: 1 workload run(s) raised: raises @1thr" in out


def test_gpu_runs_time_the_same_opbridge_model_on_the_cpu(monkeypatch):
    """The CPU column of `--device cuda`: an ort_engine's model and feeds in an ORT CPU session with every
    core (here the bench device is the CPU: the engine itself must not move)."""
    import numpy as np

    from opbridge.bench.soft_nms import soft_nms_dense

    monkeypatch.setattr(harness, "SMOKE", True)
    case = soft_nms_dense(1)[0]
    assert case.torch is None  # the eager loop is timed on the GPU only
    cpu = harness.cpu_engine(case.opbridge)
    assert cpu is not None and cpu.model is case.opbridge.model and cpu.feeds is case.opbridge.feeds
    for ours, theirs in zip(case.opbridge(), cpu()):
        np.testing.assert_array_equal(ours, theirs)
    assert harness.cpu_engine(case.reference) is None  # not an ORT engine: no CPU column


def test_the_dense_rotated_nms_competitor_keeps_the_eager_ops_rows(monkeypatch):
    """nms_rotated's PyTorch column on the GPU (a dense rotated-IoU matrix and a greedy loop of tensor
    operations) is a like-for-like competitor: the rows of opbridge.ops.multiclass_nms_rotated, here
    on the smoke inputs and on boxes with tied scores, a zero-width box and a class without candidates."""
    import numpy as np
    import torch

    from opbridge.bench.nms import class_scores
    from opbridge.bench.nms_rotated import dense_nms_rotated, rotated_boxes
    from opbridge.ops import multiclass_nms_rotated

    boxes, scores = torch.from_numpy(rotated_boxes(300)[None]), torch.from_numpy(class_scores(3, 300, 32)[None])
    expected = multiclass_nms_rotated(boxes, scores, 0.1, 0.05)
    assert len(expected) > 50
    assert torch.equal(dense_nms_rotated(boxes, scores), expected)
    boxes[0, 5, 2] = 0.0
    scores[0, :, :40] = 0.5
    scores[0, 2] = 0.0
    assert torch.equal(dense_nms_rotated(boxes, scores), multiclass_nms_rotated(boxes, scores, 0.1, 0.05))
    assert np.array_equal(dense_nms_rotated(boxes, scores)[:, 1].unique().numpy(), [0, 1])
