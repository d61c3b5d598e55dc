"""Runs the cases save_cases.py saved on x86-64 with the opbridge package installed here (the
aarch64 wheel, under qemu-aarch64 in ./run.sh test's aarch64 lane) and compares every output with
the saved one, within the tolerance table's "cross_architecture" entry (bit for bit, but for a NaN's
sign and payload). Needs only numpy, onnxruntime and the package:

    python check_cases.py CASE_DIR

Prints each failure, a line per kernel, then "N passed, M failed"; exits 1 if any failed."""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

import numpy as np

import opbridge
from opbridge import tolerances


def compare(case: dict, expected: dict, outputs: list) -> list[str]:
    """What differs between the saved outputs and these, in words (nothing: the case passed)."""
    problems = []
    for name, got in zip(case["outputs"], outputs):
        want = expected[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            problems.append(f"{name}: {got.dtype}{list(got.shape)}, saved {want.dtype}{list(want.shape)}")
            continue
        tol = tolerances.tolerance("cross_architecture", want.dtype, case["kernel"])
        if tol.rtol == 0 and tol.atol == 0:
            if not tolerances.same_bits_but_nan(want, got):
                same = (want == got) & (np.signbit(want) == np.signbit(got))  # -0 is not +0
                if want.dtype.kind == "f":
                    same |= np.isnan(want) & np.isnan(got)
                differ = np.argwhere(~same)
                worst = np.nanmax(np.abs(want.astype(np.float64) - got)) if want.dtype.kind == "f" else None
                problems.append(f"{name}: {len(differ)} of {want.size} values differ (first at "
                                f"{differ[:3].tolist()}, largest difference {worst})")
        elif not np.array_equal(np.isnan(want), np.isnan(got)):
            problems.append(f"{name}: NaN at different places")
        elif not np.allclose(got, want, rtol=tol.rtol, atol=tol.atol, equal_nan=True):
            problems.append(f"{name}: beyond rtol {tol.rtol}, atol {tol.atol}")
    return problems


def main(case_dir: str) -> int:
    folder = Path(case_dir)
    cases = json.loads((folder / "cases.json").read_text())
    print(f"opbridge {opbridge.__version__} from {opbridge.library_path()}")
    per_kernel = collections.defaultdict(lambda: [0, 0, 0.0])  # passed, failed, seconds
    for case in cases:
        data = np.load(folder / f"{case['file']}.npz")
        feeds = {key[3:]: data[key] for key in data.files if key.startswith("in/")}
        expected = {key[4:]: data[key] for key in data.files if key.startswith("out/")}
        begin = time.perf_counter()
        try:
            outputs = opbridge.create_session(str(folder / f"{case['file']}.onnx"), intra_op_threads=2).run(None, feeds)
            problems = compare(case, expected, outputs)
        except Exception as error:  # ORT's own exception types: an error is a failure of the case
            problems = [f"{type(error).__name__}: {error}"]
        tally = per_kernel[case["kernel"]]
        tally[2] += time.perf_counter() - begin
        tally[1 if problems else 0] += 1
        for problem in problems:
            print(f"FAILED {case['identity']} ({case['run']}): {problem}")
    for kernel, (ok, bad, seconds) in sorted(per_kernel.items()):
        print(f"  {kernel:<36} {ok:3d} passed {bad:3d} failed {seconds:7.1f} s")
    passed = sum(t[0] for t in per_kernel.values())
    failed = sum(t[1] for t in per_kernel.values())
    identities = len({c["identity"] for c in cases})
    print(f"{len(cases)} cases of {identities} identities")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
