"""The manifest (python/opbridge/ops.toml) is the one description of every op: the C++
registration table, the Python export mappings and the reference pages must agree with it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import opbridge
from opbridge import docs, manifest
from opbridge.ops import EXPORT_MAPPINGS


def registered_ops() -> list[dict]:
    tool = Path(opbridge.library_path()).parent / "opbridge_list_ops"
    return json.loads(subprocess.run([str(tool)], check=True, capture_output=True, text=True).stdout)


def test_cuda_twins_equal_the_manifest_and_their_cpu_ops():
    """A CUDA build registers a CUDA twin of exactly the manifest's cuda_identities, each with its
    CPU op's inputs, outputs and attributes (ORT requires it); a CPU-only build registers none."""
    entries = registered_ops()
    cpu = {f"{e['domain']}::{e['name']}": e for e in entries if e["provider"] == "CPU"}
    cuda = {f"{e['domain']}::{e['name']}": e for e in entries if e["provider"] == "CUDA"}
    assert {e["provider"] for e in entries} <= {"CPU", "CUDA"}
    assert len(cpu) + len(cuda) == len(entries)  # one op per identity and provider
    if cuda:
        assert sorted(cuda) == sorted(i for op in manifest.load().values() for i in op.cuda_identities)
        for identity, twin in cuda.items():
            assert {**twin, "provider": "CPU"} == cpu[identity], identity


# The calls through which a CUDA launch function or glue waits for the GPU (kernels/cuda/cuda_status.h:
# a count through page-locked memory; LaunchStatus waits only under OPBRIDGE_CUDA_SYNC=1).
WAITING_CALLS = ("CopyCountToHost", "CopyCountsToHost", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize")


def test_the_manifest_says_which_cuda_ops_wait_for_the_gpu():
    """An op's cuda_synchronizes is set exactly where its CUDA glue or kernel source makes a waiting
    call, and never on an op whose outputs' shapes are static unless it says when."""
    repo = Path(__file__).resolve().parents[2]
    waiting = set()
    for kernel, op in manifest.load().items():
        if not op.cuda_identities:
            assert not op.cuda_synchronizes, kernel
            continue
        sources = [repo / f"src/ort/ops/{kernel}_cuda.cc", repo / f"src/kernels/cuda/{op.cuda_kernel}.cu"]
        calls = {call for path in sources for call in WAITING_CALLS if call in path.read_text()}
        assert bool(calls) == bool(op.cuda_synchronizes), (kernel, calls, op.cuda_synchronizes)
        if op.cuda_synchronizes:
            waiting.add(kernel)
    # The ops whose output's size depends on the data, and TRTBatchedNMS's mask sizing (static outputs).
    assert waiting == {"nms", "nms_rotated", "nms_match", "soft_nms", "trt_batched_nms"}
    assert manifest.load()["trt_batched_nms"].cuda_synchronizes.startswith("only for a call")
    page = docs.pages()["gather_topk.md"]
    assert "**Waits for the GPU:** never: every launch is asynchronous on ORT's stream" in page


def test_registration_table_equals_manifest():
    table = {f"{e['domain']}::{e['name']}": e for e in registered_ops() if e["provider"] == "CPU"}
    expected = {f"{d}::{n}": op for d, n, op in manifest.identities()}
    assert sorted(table) == sorted(expected)
    for identity, op in expected.items():
        entry, signature = table[identity], op.signature(identity)
        assert entry["kernel"] == op.kernel, identity
        assert [(t["name"], t["dtype"], t["optional"], t["variadic"]) for t in entry["inputs"]] == \
            [(t.name, t.dtype, t.optional, t.variadic) for t in signature.inputs], identity
        assert [(t["name"], t["dtype"]) for t in entry["outputs"]] == [(t.name, t.dtype) for t in signature.outputs], identity
        # A tensor of dtype "T" takes any of the op's dtypes (the schema's type parameter).
        generic = any(t.dtype == "T" for t in signature.inputs + signature.outputs)
        assert entry["t_types"] == (list(op.dtypes) if generic else []), identity
        assert [(a["name"], a["type"], a["required"]) for a in entry["attributes"]] == \
            [(a.name, a.type, a.required) for a in signature.attributes], identity
        for a, registered in zip(signature.attributes, entry["attributes"]):
            if a.type in ("float", "floats") and not a.required:
                expected_values = a.default if a.type == "floats" else [a.default]
                got = registered["default"] if a.type == "floats" else [registered["default"]]
                assert len(got) == len(expected_values) and all(
                    abs(g - e) <= 1e-7 * max(1.0, abs(e)) for g, e in zip(got, expected_values)), (identity, a.name)
            else:
                assert registered["default"] == a.default, (identity, a.name)


def test_every_op_has_an_export_mapping_and_files():
    repo = Path(__file__).resolve().parents[2]
    exported = sorted(k for k, op in manifest.load().items() if not op.no_export)
    assert sorted(m.kernel for m in EXPORT_MAPPINGS) == exported
    for kernel, op in manifest.load().items():
        for path in [f"src/kernels/cpu/{kernel}.cc", f"src/core/{kernel}.cc", f"src/ort/ops/{kernel}.cc",
                     f"tests/cpp/{kernel}_test.cc", f"tests/python/test_{kernel}.py"]:
            assert (repo / path).is_file(), path
        # A module with the op's torch side and export mapping, unless the manifest says why none.
        assert (repo / f"python/opbridge/ops/{kernel}.py").is_file() == (not op.no_export), kernel


def test_every_benchmark_workload_belongs_to_one_op():
    from opbridge import bench

    listed = [w for op in manifest.load().values() for w in op.workloads]
    assert sorted(listed) == sorted(bench.OP_WORKLOADS)


def test_generated_files_are_up_to_date():
    """The C++ schemas and attribute readers, the registration table, the CMake op lists and the op
    pages are written from the manifest (checked in, so that a C++ build needs no Python)."""
    from opbridge import codegen

    assert codegen.stale() == [], "stale generated files: run python -m opbridge generate"
    assert sorted(p.name for p in docs.DOCS_DIR.glob("*.md")) == sorted(docs.pages())


def test_ops_command_lists_every_identity(capsys):
    from opbridge.cli import main

    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:] if "::" in line.split(" ", 1)[0]}
    # identity, kernel, then the providers the library registers it for here: CUDA only where the
    # library has CUDA kernels and this machine runs them (the last line says why not)
    cuda_here = opbridge.library_info()["cuda_twins"]
    for domain, name, op in manifest.identities():
        identity = f"{domain}::{name}"
        cuda = identity in op.cuda_identities and cuda_here
        assert rows[identity][:3] == [identity, op.kernel, "CPU+CUDA" if cuda else "CPU"]
    if not cuda_here:
        assert "CPU+CUDA" not in out
