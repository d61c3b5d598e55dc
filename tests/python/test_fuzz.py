"""The fuzz test (opbridge.fuzz): a short seeded run over every identity, and the harness itself.

The long run is `python -m opbridge fuzz --cases 100000`.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import opbridge
from opbridge import fuzz, manifest

REPO = Path(__file__).resolve().parents[2]

ALL_IDENTITIES = [f"{d}::{n}" for d, n, _ in manifest.identities()]
CASES_PER_IDENTITY = 120  # about 30 s on two cores when nothing hangs


@pytest.mark.slow
def test_short_run_has_no_crash_hang_or_unprefixed_error(tmp_path):
    report = fuzz.run(fuzz.cases(0, CASES_PER_IDENTITY * len(ALL_IDENTITIES)), out_dir=str(tmp_path))
    print(report.format())
    assert set(report.counts) == set(ALL_IDENTITIES)
    assert report.cases == CASES_PER_IDENTITY * len(ALL_IDENTITIES)
    # The run must reach the kernels, not only the attribute checks.
    assert report.total("ok") > report.cases // 4
    bad = {outcome: report.total(outcome) for outcome in fuzz.BAD}
    assert bad == {outcome: 0 for outcome in fuzz.BAD}, report.format()


def _same_case(a: fuzz.Case, b: fuzz.Case) -> bool:
    same_feeds = a.feeds().keys() == b.feeds().keys() and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        for x, y in zip(a.feeds().values(), b.feeds().values()))
    return a.model().SerializeToString() == b.model().SerializeToString() and same_feeds and a.threads == b.threads


def test_generator_is_deterministic_per_seed_identity_and_index():
    first = list(fuzz.cases(7, 3 * len(ALL_IDENTITIES)))
    again = list(fuzz.cases(7, 3 * len(ALL_IDENTITIES)))
    assert all(_same_case(a, b) for a, b in zip(first, again))
    # A case does not depend on which other identities are generated.
    alone = list(fuzz.cases(7, 3, [ALL_IDENTITIES[5]]))
    assert all(_same_case(a, b) for a, b in zip(alone, [c for c in first if c.identity == ALL_IDENTITIES[5]]))
    other_seed = list(fuzz.cases(8, len(ALL_IDENTITIES)))
    assert sum(_same_case(a, b) for a, b in zip(first, other_seed)) < len(ALL_IDENTITIES) // 2


def test_generator_covers_every_identity_and_every_kind_of_mutation():
    generated = list(fuzz.cases(0, 100 * len(ALL_IDENTITIES)))
    assert {c.identity for c in generated} == set(ALL_IDENTITIES)
    notes = " ; ".join(n for c in generated for n in c.notes)
    for mutation in ("boundary", "left out", "unknown attribute", " as int", " as float64", " as float16", " as bool",
                     "zero axis", "huge axis next to 0", "= 0", "wrong rank", "wrong last dim", "special values",
                     "out-of-range values", "an input too many", "required"):
        assert mutation in notes, mutation
    # Most cases are plain or nearly so: the generator must also reach the kernels.
    assert sum(not c.notes for c in generated) > len(generated) // 5
    # Every identity's declared inputs appear, optional ones both present and absent.
    for identity in ALL_IDENTITIES:
        signature = manifest.find(identity).signature(identity)
        names = {n for c in generated if c.identity == identity for n, _ in c.inputs}
        for tensor in signature.inputs:
            assert any(n.startswith(tensor.name) for n in names), (identity, tensor.name)
            if tensor.optional:
                assert any(c.identity == identity and tensor.name not in {n for n, _ in c.inputs}
                           for c in generated), (identity, tensor.name)


def test_tensors_stay_small_unless_empty():
    for case in fuzz.cases(1, 40 * len(ALL_IDENTITIES)):
        for name, array in case.feeds().items():
            assert array.size <= fuzz.MAX_ELEMENTS, (case.describe(), name)


def test_classify_is_strict_about_the_identity_prefix():
    assert fuzz.classify("mmcv::MMCVRoiAlign", "run: mmcv::MMCVRoiAlign: rois must have shape [R, 5]", False) == "error"
    assert fuzz.classify("mmcv::MMCVRoiAlign", "run: mmcv::MMCVRoiAlign: Failed to allocate memory", False) == "oom"
    # Another identity's prefix is not this one's.
    assert fuzz.classify("mmcv::MMCVRoiAlign", "run: opbridge::RoiAlign: bad", False) == "unprefixed"
    type_error = "session: Type Error: Type 'tensor(double)' of input parameter (input) of operator (MMCVRoiAlign)"
    assert fuzz.classify("mmcv::MMCVRoiAlign", type_error, False) == "unprefixed"
    # A node with a wrong number of inputs is rejected by ORT for every op: not ours to name.
    assert fuzz.classify("mmcv::MMCVRoiAlign", "session: Node () has input size 1 not in range [min=2, max=2]",
                         True) == "error"


def test_message_kinds_group_particulars():
    a = "session: [ONNXRuntimeError] : 10 : INVALID_GRAPH : Type Error: Type 'tensor(uint8)' of input parameter (scores)"
    b = "session: [ONNXRuntimeError] : 10 : INVALID_GRAPH : Type Error: Type 'tensor(bool)' of input parameter (boxes)"
    assert fuzz.message_kind(a) == fuzz.message_kind(b)
    assert fuzz.message_kind("run: opbridge::Nms: iou_threshold must lie in [0, 1], got 2") == \
        fuzz.message_kind("run: mmcv::NonMaxSuppression: iou_threshold must lie in [0, 1], got nan")


def test_index_outputs_are_checked_against_the_inputs():
    boxes, scores = np.zeros((3, 4), np.float32), np.zeros((2, 4, 3), np.float32)
    assert fuzz._index_problem("opbridge::Nms", ["out_keep"], [np.array([2, 0])], {"boxes": boxes}) is None
    assert "outside [0, 3)" in fuzz._index_problem("opbridge::Nms", ["out_keep"], [np.array([0, 3])], {"boxes": boxes})
    rows = np.array([[1, 3, 2]])  # (batch, class, box)
    feeds = {"boxes": np.zeros((2, 3, 4), np.float32), "scores": scores}
    assert fuzz._index_problem("opbridge::MulticlassNms", ["out_selected"], [rows], feeds) is None
    assert "column 1" in fuzz._index_problem("opbridge::MulticlassNms", ["out_selected"], [rows + [0, 1, 0]], feeds)


def test_runs_without_torch(deploy_python, tmp_path):
    """The command and its workers in the environment without PyTorch."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), OPBRIDGE_LIBRARY=opbridge.library_path())
    out = subprocess.run([deploy_python, "-m", "opbridge", "fuzz", "--cases", str(2 * len(ALL_IDENTITIES)),
                          "--seed", "3", "--out", str(tmp_path)], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode in (0, 1), out.stderr  # 1: the run found defects, reported like any other
    assert f"seed 3, {2 * len(ALL_IDENTITIES)} cases" in out.stdout, out.stdout + out.stderr
    assert "No module named" not in out.stdout + out.stderr


def _plain_case(identity: str, index: int = 0) -> fuzz.Case:
    """A generated case of `identity` without mutations (so that it runs)."""
    while True:
        case = fuzz.make_case(0, identity, index)
        if not case.notes:
            return case
        index += 1


def test_a_crashing_case_is_attributed_and_the_run_goes_on(tmp_path):
    good = _plain_case("opbridge::Nms")
    crashing = dataclasses.replace(_plain_case("opbridge::RoiAlign"), hook="abort")
    report = fuzz.run([good, crashing, good, good], out_dir=str(tmp_path), workers=1)
    assert report.counts["opbridge::RoiAlign"]["crash"] == 1
    assert report.counts["opbridge::Nms"]["ok"] + report.counts["opbridge::Nms"]["error"] == 3
    (example,) = [e for (outcome, _), (_, e) in report.kinds.items() if outcome == "crash"]
    assert "SIGABRT" in example.message and crashing.describe() == example.description
    # The reproducer is the crashing case's model and feeds.
    assert example.reproducer.endswith(f"crash-opbridge.RoiAlign-{crashing.index:06d}.onnx")
    assert open(example.reproducer, "rb").read() == crashing.model().SerializeToString()
    with np.load(example.reproducer[:-len(".onnx")] + ".npz") as saved:
        assert set(saved.files) == set(crashing.feeds())
    assert report.failed


def test_a_hanging_case_is_attributed_within_the_timeout(tmp_path):
    good = _plain_case("opbridge::GridSample")
    hanging = dataclasses.replace(_plain_case("opbridge::SoftNonMaxSuppression"), hook="sleep")
    report = fuzz.run([hanging, good, good], out_dir=str(tmp_path), timeout=2.0, workers=2)
    assert report.counts["opbridge::SoftNonMaxSuppression"]["hang"] == 1
    assert sum(report.counts["opbridge::GridSample"].values()) == 2
    assert report.seconds < 30
    assert report.failed


@pytest.mark.parametrize("workers", [1, 2])
def test_workers_are_recycled_without_losing_cases(tmp_path, workers):
    batch = list(fuzz.cases(3, 12, ["opbridge::Nms", "opbridge::PasteMasks"]))
    report = fuzz.run(batch, out_dir=str(tmp_path), workers=workers, recycle=2)
    assert report.cases == 12
    assert report.total("crash") == report.total("hang") == 0
