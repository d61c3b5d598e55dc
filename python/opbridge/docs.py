"""Generates the op reference pages (docs/ops/<kernel>.md) from the manifest (ops.toml).

The pages are generated, never edited by hand: change ops.toml and run
``python -m opbridge docs``. tests/python/test_manifest.py fails when a page is out of date.
"""

from __future__ import annotations

from pathlib import Path

from opbridge import manifest

DOCS_DIR = Path(__file__).resolve().parents[2] / "docs" / "ops"

_FILES = [
    ("CPU kernel", "src/kernels/cpu/{k}.cc"),
    ("validation and output shape (all backends)", "src/core/{k}.cc"),
    ("ORT glue", "src/ort/ops/{k}.cc"),
    ("schema and attribute reader (generated from the manifest)", "src/ort/generated/{k}_attrs.h"),
    ("PyTorch side and export mappings", "python/opbridge/ops/{k}.py"),
    ("C++ kernel tests", "tests/cpp/{k}_test.cc"),
    ("tests through ORT and export", "tests/python/test_{k}.py, tests/python/test_conformance.py (the op's row of "
     "conformance_cases.py), tests/python/test_export.py"),
    ("benchmark", "python/opbridge/bench/{k}.py (workloads {workloads}); kernel alone: bench/kernels_bench.cc"),
]


def _files(op: manifest.Op) -> list[tuple[str, str]]:
    files = [(what, path) for what, path in _FILES if not (op.no_export and path == "python/opbridge/ops/{k}.py")]
    if op.cuda_identities:
        files[1:1] = [("CUDA kernel", f"src/kernels/cuda/{op.cuda_kernel}.cu"),
                      ("ORT glue, CUDA twin", "src/ort/ops/{k}_cuda.cc")]
        files.append(("GPU tests", "./run.sh test-gpu: tests/python/test_{k}.py against the CUDA twins, tests/gpu"))
    return files


def _tables(signature: manifest.Signature, heading: str) -> list[str]:
    lines = [f"{heading} Inputs", "", "| name | shape | type | description |", "|---|---|---|---|"]
    for t in signature.inputs:
        flags = " (optional)" if t.optional else " (one or more)" if t.variadic else ""
        lines.append(f"| `{t.name}`{flags} | `{t.shape}` | {t.dtype} | {t.doc} |")
    lines += ["", f"{heading} Outputs", "", "| name | shape | type | description |", "|---|---|---|---|"]
    lines += [f"| `{t.name}` | `{t.shape}` | {t.dtype} | {t.doc} |" for t in signature.outputs]
    lines += ["", f"{heading} Attributes", ""]
    if not signature.attributes:
        return lines + ["None.", ""]
    lines += ["| name | type | default | allowed | description |", "|---|---|---|---|---|"]
    for a in signature.attributes:
        default = "required" if a.required else f"`{a.default!r}`" if a.type == "string" else f"`{a.default}`"
        allowed = ", ".join(f"`{v}`" for v in a.allowed) or "see description"
        lines.append(f"| `{a.name}` | {a.type} | {default} | {allowed} | {a.doc} |")
    return lines + [""]


def _dtypes(op: manifest.Op) -> str:
    """The op's data types; for an op generic over its dtype, what its type parameter T takes."""
    names = ", ".join(op.dtypes)
    generic = any(t.dtype == "T" for s in op.signatures.values() for t in s.inputs + s.outputs)
    return f"T (the type column) is one of {names}" if generic else names


def _pytorch(op: manifest.Op) -> list[str]:
    lines = [f"**PyTorch:** {op.pytorch}", ""]
    if op.no_export:
        lines += [f"**Export:** opbridge has no export mapping for it: {op.no_export}.", ""]
    return lines


def render(op: manifest.Op) -> str:
    lines = [f"# {op.title}", "", "<!-- Generated from python/opbridge/ops.toml by `python -m opbridge generate`. -->", ""]
    lines += [op.summary, ""]
    lines += ["| ONNX identity (domain::op_type) | opset | since |", "|---|---|---|"]
    lines += [f"| `{identity}` | {op.opset} | opbridge {op.since} |" for identity in op.identities]
    if op.uniform:
        lines += ["", f"All identities run the same kernel with the same attributes. Data types: {_dtypes(op)}.", ""]
        lines += _pytorch(op)
        lines += _tables(op.signature(), "##")
    else:
        lines += ["", "The identities run the same kernel; their inputs, outputs or attributes differ, as listed per",
                  f"identity below. Data types: {_dtypes(op)}.", ""]
        lines += _pytorch(op)
        # Identities with the same signature share one section, in manifest order.
        groups: list[tuple[manifest.Signature, list[str]]] = []
        for identity in op.identities:
            signature = op.signature(identity)
            for known, members in groups:
                if known == signature:
                    members.append(identity)
                    break
            else:
                groups.append((signature, [identity]))
        for signature, members in groups:
            lines += [f"## {', '.join(f'`{m}`' for m in members)}", ""]
            lines += _tables(signature, "###")
    lines += ["A missing optional attribute takes its default. A bad value is rejected when the session is",
              "created, and a bad input when the model runs, with an error naming the op, the value and the rule.", ""]
    if op.notes:
        lines += ["## Notes", "", op.notes, ""]
    lines += ["## On the GPU", ""]
    if op.cuda_identities:
        others = [i for i in op.identities if i not in op.cuda_identities]
        lines += [f"In an ONNX Runtime session with the CUDA execution provider (onnxruntime-gpu and a CUDA build of "
                  f"the library), {', '.join(f'`{i}`' for i in op.cuda_identities)} run on the GPU, on ORT's stream"
                  + (f"; {', '.join(f'`{i}`' for i in others)} on the CPU." if others else ".") + " " + op.cuda_notes,
                  "",
                  f"**Waits for the GPU:** {op.cuda_synchronizes}." if op.cuda_synchronizes else
                  "**Waits for the GPU:** never: every launch is asynchronous on ORT's stream (the outputs' shapes do "
                  "not depend on the data).",
                  ""]
    else:
        lines += ["No CUDA kernel yet: in a CUDA session these nodes run on the CPU, with copies to and from the GPU "
                  "around them (`opbridge check` lists them).", ""]
    lines += ["## Where the code is", "", "| what | file |", "|---|---|"]
    lines += [f"| {what} | `{path.format(k=op.kernel, workloads=', '.join(op.workloads))}` |" for what, path in _files(op)]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """File name -> content, for every op of the manifest."""
    return {f"{op.kernel}.md": render(op) for op in manifest.load().values()}


def write_pages(out: str | Path | None = None) -> list[Path]:
    out = Path(out) if out else DOCS_DIR
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in pages().items():
        path = out / name
        path.write_text(text)
        written.append(path)
    return written
