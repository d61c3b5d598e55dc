"""The opbridge command line: python -m opbridge {demo,verify,ops,check,float16,bench,triton,docs,generate,fuzz}.

The deploy commands (ops, check, float16, triton, docs) and fuzz need only onnxruntime, onnx and numpy; demo, verify and
bench need PyTorch, and say so (with how to install it) when it is missing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from opbridge._optional import ONNXRUNTIME_HINT, require_torch
from opbridge.check import EXIT_CODES_HELP

# Commands that export or run PyTorch models.
NEEDS_TORCH = ("demo", "verify", "bench")


def _cmd_demo(args) -> int:
    from opbridge.demo import run_demo

    return 0 if run_demo(timing_runs=args.runs) else 1


def _cmd_verify(args) -> int:
    """Verifies a model given as module:factory, e.g. mypkg.models:make, which returns (model, args)
    or (model, args, options): options is a dict of opbridge.verify's keyword arguments, e.g.
    {"dynamic_axes": {...}} so that the dynamic axes are also checked at other sizes."""
    import opbridge

    module_name, _, attr = args.factory.partition(":")
    factory = getattr(importlib.import_module(module_name), attr or "make")
    made = factory()
    model, inputs = made[0], made[1]
    options = dict(made[2]) if len(made) > 2 else {}
    ok = True
    for exporter in args.exporter:
        report = opbridge.verify(model, inputs, exporter=exporter, timing_runs=args.runs, **options)
        ok = ok and report.ok
        print()
    return 0 if ok else 1


def _cmd_ops(args) -> int:
    from opbridge import manifest

    # providers: the execution providers the library found here registers the identity for: CUDA only
    # where it has CUDA kernels and this machine can run them (the last line says why not).
    cuda_line, cuda_here = _cuda_twins_line()
    names = max(len(f"{domain}::{name}") for domain, name, _ in manifest.identities()) + 2
    width = max(len(op.kernel) for _, _, op in manifest.identities()) + 2
    # dtypes: the manifest's data types of the op (its type parameter T's, where it has one).
    types = max(len(",".join(op.dtypes)) for _, _, op in manifest.identities()) + 2
    print(f"{'identity':<{names}}{'kernel':<{width}}{'providers':<11}{'dtypes':<{types}}inputs -> outputs")
    for domain, name, op in manifest.identities():
        identity = f"{domain}::{name}"
        providers = [p for p in op.providers(identity) if p != "CUDA" or cuda_here]
        ins = ", ".join(t.name for t in op.inputs)
        outs = ", ".join(t.name for t in op.outputs)
        print(f"{identity:<{names}}{op.kernel:<{width}}{'+'.join(providers):<11}{','.join(op.dtypes):<{types}}"
              f"({ins}) -> ({outs})")
    print(f"\nONNX Runtime here: {_onnxruntime_line()}")
    print(f"CUDA kernels on this machine: {cuda_line}")
    return 0


def _onnxruntime_line() -> str:
    """The onnxruntime this Python imports, its execution providers, and whether the library runs in it."""
    try:
        import onnxruntime
    except ImportError:
        return f"not installed: {ONNXRUNTIME_HINT}"
    version = onnxruntime.__version__
    available = onnxruntime.get_available_providers()
    providers = ", ".join(p.removesuffix("ExecutionProvider") for p in available)
    line = f"onnxruntime {version} (execution providers: {providers})"
    major_minor = tuple(int(part) if part.isdigit() else 0 for part in version.split(".")[:2])
    if major_minor < (1, 21):
        line += "; opbridge's library needs onnxruntime >= 1.21"
    elif "CUDAExecutionProvider" not in available:
        line += "; no CUDA execution provider: for the GPU install onnxruntime-gpu instead of onnxruntime"
    return line


def _cuda_twins_line() -> tuple[str, bool]:
    """Whether the library found here registers its CUDA kernels (the CUDA of the providers column),
    in words, and as a boolean."""
    from opbridge._library import cuda_twins_blocker, library_path

    try:
        path = library_path()
        blocker = cuda_twins_blocker()
    except (FileNotFoundError, OSError) as err:
        return f"none: the library could not be loaded ({err})", False
    if blocker:
        return f"not registered by {path}: {blocker}; every node runs on the CPU", False
    return f"registered by {path} for ONNX Runtime's CUDA execution provider", True


def _cmd_check(args) -> int:
    import json

    from opbridge.check import check

    report = check(args.model)
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.format())
    return report.exit_code


def _cmd_float16(args) -> int:
    import collections

    import onnx

    from opbridge import float16
    from opbridge.check import EXIT_UNREADABLE

    try:
        model = onnx.load(args.model)
    except Exception as error:  # a missing file, truncated protobuf, ...: onnx raises several types
        print(f"opbridge float16: cannot read {args.model} as an ONNX model: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    converted = float16.convert(model, keep_io_types=args.keep_io_types)
    onnx.save(converted, args.output)
    kept = collections.Counter()
    for node in converted.graph.node:
        takes = float16.takes_float16(node)
        if takes is not None:
            kept[(f"{node.domain}::{node.op_type}", "float16" if takes else "float32")] += 1
    print(f"wrote {args.output}" + (" (float32 inputs and outputs)" if args.keep_io_types else ""))
    for (identity, dtype), count in sorted(kept.items()):
        print(f"  {identity}: {count} node{'s' if count > 1 else ''} in {dtype}"
              + (" (the op does not take float16 yet)" if dtype == "float32" else ""))
    return 0


def _cmd_bench(args) -> int:
    from opbridge.bench import main as bench_main

    return bench_main(args.workloads, args.runs, args.threads, memory=False if args.no_memory else None,
                      device=args.device, smoke=args.smoke)


def _cmd_fuzz(args) -> int:
    from opbridge.fuzz import main as fuzz_main

    return fuzz_main(args.cases, seed=args.seed, identities=args.identity, timeout=args.timeout, out_dir=args.out,
                     workers=args.workers, clean_errors=args.clean_errors)


def _cmd_triton(args) -> int:
    from opbridge.triton import TritonError, write_entry

    try:
        entry = write_entry(args.model, args.repository, name=args.name, max_batch_size=args.max_batch_size,
                            device=args.device, instances=args.instances, library=args.library, force=args.force)
    except TritonError as error:
        print(f"opbridge triton: {error}", file=sys.stderr)
        return 2
    print(f"wrote {entry.folder / 'config.pbtxt'} and {entry.folder / '1' / 'model.onnx'}")
    for note in entry.notes:
        print(f"note: {note}")
    print(f"serve it with: tritonserver --model-repository {Path(args.repository).resolve()}")
    return 0


def _cmd_generate(args) -> int:
    from opbridge import codegen

    try:
        changed = codegen.write()
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 1
    for path in changed:
        print(f"wrote {path}")
    print(f"{len(changed)} generated files changed" if changed else "every generated file is up to date")
    return 0


def _cmd_docs(args) -> int:
    from opbridge.docs import write_pages

    for path in write_pages(args.out):
        print(path)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="opbridge", description="opbridge: custom ops for ONNX Runtime")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("demo", help="export the built-in demo detector, run it in ORT, verify it")
    p.add_argument("--runs", type=int, default=10, help="timed runs per engine (default 10)")
    p.set_defaults(fn=_cmd_demo)
    p = sub.add_parser("verify", help="export a model of yours, run it in ORT, compare with PyTorch")
    p.add_argument("factory", help="module:function returning (model, example_args) or (model, example_args, "
                                   "verify_options), e.g. verify_options = {'dynamic_axes': {...}}")
    p.add_argument("--exporter", action="append", choices=["dynamo", "legacy"], help="default: both")
    p.add_argument("--runs", type=int, default=0, help="timed runs per engine (default 0: no timing)")
    p.set_defaults(fn=_cmd_verify)
    p = sub.add_parser("ops", help="list every registered op identity")
    p.set_defaults(fn=_cmd_ops)
    p = sub.add_parser("check", help="will an ONNX file run in ORT with opbridge? its custom ops, the session, what to do",
                       description="Lists every node outside the standard ONNX domains (main graph, functions, "
                                   "subgraphs) by domain, op type and count, with who provides it; creates an ORT "
                                   "session with opbridge's library (which checks attributes and declared shapes); "
                                   "says what to do about anything that will not run.",
                       epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the .onnx file")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of tables")
    p.set_defaults(fn=_cmd_check)
    p = sub.add_parser("float16", help="convert a float32 ONNX file to float16 (ONNX Runtime's converter): "
                                       "opbridge's nodes read float16 where their op takes it",
                       description="Converts MODEL's float32 tensors, weights and nodes to float16 with ONNX "
                                   "Runtime's converter (onnxruntime.transformers.float16), keeping float32 the "
                                   "standard nodes of its default block list and the opbridge nodes whose op does "
                                   "not take float16 yet; lists the opbridge nodes and their type "
                                   "(opbridge.float16's docstring says what and why).")
    p.add_argument("model", help="the float32 .onnx file")
    p.add_argument("output", help="where to write the float16 file")
    p.add_argument("--keep-io-types", action="store_true", help="keep the graph's float32 inputs and outputs float32")
    p.set_defaults(fn=_cmd_float16)
    p = sub.add_parser("bench", help="benchmark against ORT built-ins and PyTorch eager")
    p.add_argument("workloads", nargs="*", help="workload ids or prefixes (default: all)")
    p.add_argument("--runs", type=int, default=10, help="timed runs per engine and thread count")
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="cuda: ORT's CUDA execution provider and PyTorch on CUDA, data in GPU memory "
                        "(default workloads: those of the ops with CUDA kernels, and detector.fasterrcnn)")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    p.add_argument("--smoke", action="store_true",
                   help="run every engine of every case once on reduced inputs, untimed, and check the results "
                        "(exit 1 when a check or an engine fails): proves the bench runs")
    p.set_defaults(fn=_cmd_bench)
    p = sub.add_parser("triton", help="write a Triton Inference Server model repository entry for an ONNX file",
                       description="Writes REPOSITORY/NAME/1/model.onnx and REPOSITORY/NAME/config.pbtxt for "
                                   "Triton's ONNX Runtime backend, with opbridge's library in model_operations "
                                   "(python -m opbridge.triton's docstring says what and why).")
    p.add_argument("model", help="the .onnx file")
    p.add_argument("--repository", required=True, help="the model repository folder (created if missing)")
    p.add_argument("--name", default=None, help="the model's name in the repository (default: the file's stem)")
    p.add_argument("--max-batch-size", type=int, default=None,
                   help="Triton's max_batch_size (default: 8 where the model can be batched, else 0)")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu", help="the instance kind (default cpu)")
    p.add_argument("--instances", type=int, default=1, help="model instances (default 1)")
    p.add_argument("--library", default=None,
                   help="the opbridge library's absolute path on the server (default: this installation's)")
    p.add_argument("--force", action="store_true", help="replace an existing, non-empty model folder")
    p.set_defaults(fn=_cmd_triton)
    p = sub.add_parser("generate", help="rewrite every file generated from the manifest (ops.toml): the C++ "
                       "schemas and attribute readers, the registration table, the CMake op lists, the op pages")
    p.set_defaults(fn=_cmd_generate)
    p = sub.add_parser("docs", help="write the op reference pages")
    p.add_argument("--out", default=None, help="folder (default: docs/ops in the repository)")
    p.set_defaults(fn=_cmd_docs)
    p = sub.add_parser("fuzz", help="random one-node models of every identity in isolated ORT workers; "
                                    "exit 1 on any crash, hang, unprefixed error or bad index")
    p.add_argument("--cases", type=int, default=3000, help="cases in all, round-robin over the identities "
                                                         "(default 3000; the long run is 100000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--identity", action="append", help="domain::OpType to fuzz (repeatable; default: all)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per case before it counts as a hang")
    p.add_argument("--out", default=None, help="folder for reproducers (default: a new temporary folder)")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--clean-errors", action="store_true", help="also list the kinds of clean error messages")
    p.set_defaults(fn=_cmd_fuzz)
    args = parser.parse_args(argv)
    if args.command in NEEDS_TORCH:
        try:
            require_torch(f"opbridge {args.command}")
        except ImportError as e:
            print(f"opbridge: {e}", file=sys.stderr)
            return 1
    if args.command == "verify" and not args.exporter:
        args.exporter = ["dynamo", "legacy"]
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
