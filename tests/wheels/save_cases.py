"""Saves, for every identity of the manifest, the conformance suite's inputs (tests/python/
test_conformance.py: the small valid input and each thread-count input, which splits the work over
threads and covers every mode the case table names) as one-node models, their inputs and the
outputs this machine's library gives, for check_cases.py to run on another architecture:

    python tests/wheels/save_cases.py OUT_DIR

OUT_DIR gets <n>.onnx and <n>.npz (the inputs as in/<name>, the outputs as out/<name>) per case,
and cases.json: [{"file", "identity", "kernel", "run", "outputs"}]."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from conformance_cases import CASES, Run  # noqa: E402
from graphs import run  # noqa: E402
from test_conformance import build, thread_runs  # noqa: E402

from opbridge import manifest  # noqa: E402

# The intra-op threads the outputs are computed with (results do not depend on it).
THREADS = 2


def main(out_dir: str) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    index = []
    with np.errstate(all="ignore"):
        for kernel, op in sorted(manifest.load().items()):
            case = CASES[kernel]
            for identity in op.identities:
                runs = [("small", Run())] + thread_runs(op, identity, op.signature(identity), case)
                for name, run_ in runs:
                    built = build(op, identity, case, run_, name)
                    outputs = run(built.model, built.feeds, threads=THREADS)
                    file = f"{len(index):03d}"
                    (out / f"{file}.onnx").write_bytes(built.model.SerializeToString())
                    arrays = {f"in/{k}": v for k, v in built.feeds.items()}
                    arrays.update({f"out/{k}": v for k, v in zip(built.outputs, outputs)})
                    np.savez(out / f"{file}.npz", **arrays)
                    index.append({"file": file, "identity": identity, "kernel": kernel, "run": name,
                                  "outputs": built.outputs})
    (out / "cases.json").write_text(json.dumps(index, indent=1))
    print(f"saved {len(index)} cases of {len({c['identity'] for c in index})} identities in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
