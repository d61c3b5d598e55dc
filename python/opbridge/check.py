"""`opbridge check model.onnx`: will this ONNX file run in ONNX Runtime with opbridge, and if not, why.

For a deployer with someone else's ONNX file (from mmcv, mmdeploy, opbridge.export or elsewhere):
every node outside the standard ONNX domains (or in them under an op type no ONNX schema defines,
as mmcv's TensorRT preprocessing leaves MMCVInstanceNormalization in the default domain), counted by (domain, op type) over the main graph,
the model's functions and every subgraph (If/Loop/Scan bodies), with who provides it (opbridge's
library, ONNX Runtime itself, a function defined in the model, or nobody); then an ORT session is
created with the library, which checks every attribute and whatever shapes the file declares
(opbridge's shape inference runs for each of its nodes). It also says which opbridge nodes would
fall back to the CPU in an ONNX Runtime session with the CUDA execution provider (the ops without a
CUDA kernel). Needs only onnxruntime, onnx and numpy.

    report = opbridge.check.check("model.onnx")
    report.exit_code, report.unsupported, report.session_error, print(report.format())
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import textwrap

import onnx

from opbridge import manifest
from opbridge._library import create_session, library_path
from opbridge._optional import require_onnxruntime

# The ONNX standard's own domains: every node in them is ORT's business, not a custom op.
STANDARD_DOMAINS = ("", "ai.onnx", "ai.onnx.ml")
# ONNX Runtime's own operator domains (contrib ops, layout-optimized ops).
ORT_DOMAINS = ("com.microsoft", "com.microsoft.nchwc", "com.ms.internal.nhwc")

# Who provides a custom node.
OPBRIDGE = "opbridge"
ONNXRUNTIME = "onnxruntime"
MODEL_FUNCTION = "model function"  # defined in the file's own functions, expanded by ORT
NOBODY = "nobody"

# Exit codes of `opbridge check` (2 is argparse's usage error).
EXIT_OK = 0
EXIT_UNSUPPORTED = 1      # a node whose op nobody registers
EXIT_SESSION_FAILED = 3   # every op is provided, but ORT refused the model (attributes, shapes, ...)
EXIT_UNREADABLE = 4       # the file is not a readable ONNX model
EXIT_CODES_HELP = f"""exit codes:
  {EXIT_OK}  the model loads: every custom node is provided and the ORT session was created
  {EXIT_UNSUPPORTED}  some node's op is registered by neither opbridge nor ONNX Runtime
  2  wrong command line
  {EXIT_SESSION_FAILED}  every op is provided, but creating the ORT session failed (a bad attribute,
     declared shapes an op refuses, the library not found, ...): ORT's error is shown
  {EXIT_UNREADABLE}  the file could not be read as an ONNX model"""


@dataclasses.dataclass(frozen=True)
class CustomOp:
    """The nodes of one (domain, op type) outside the standard domains."""

    domain: str
    op_type: str
    count: int
    provider: str  # OPBRIDGE, ONNXRUNTIME, MODEL_FUNCTION or NOBODY
    where: tuple[str, ...]  # the graphs holding them: "graph", "function d::f", "graph > If 'n'.then_branch"
    nearest: tuple[str, ...] = ()  # for NOBODY: opbridge identities with a similar op type

    @property
    def identity(self) -> str:
        return f"{self.domain}::{self.op_type}"

    @property
    def on_gpu(self) -> bool | None:
        """For an opbridge op: whether it has a CUDA kernel, i.e. runs on the GPU in a CUDA session of
        a CUDA build (else it falls back to the CPU, with copies around it). None for other ops
        (ONNX Runtime's placement decides)."""
        if self.provider != OPBRIDGE:
            return None
        return "CUDA" in manifest.find(self.identity).providers(self.identity)

    @property
    def supported(self) -> bool:
        return self.provider != NOBODY


@dataclasses.dataclass(frozen=True)
class Value:
    """A graph input or output as the ORT session sees it (shapes after ORT's inference)."""

    kind: str  # "input" or "output"
    name: str
    type: str
    shape: tuple


def session_values(session) -> list[Value]:
    """An ORT session's inputs, then its outputs."""
    return ([Value("input", v.name, v.type, tuple(v.shape)) for v in session.get_inputs()]
            + [Value("output", v.name, v.type, tuple(v.shape)) for v in session.get_outputs()])


@dataclasses.dataclass
class CheckReport:
    path: str
    load_error: str | None = None
    node_count: int = 0  # every node: main graph, functions and subgraphs
    opsets: dict = dataclasses.field(default_factory=dict)  # domain -> version the model imports
    custom_ops: list[CustomOp] = dataclasses.field(default_factory=list)
    session_error: str | None = None
    values: list[Value] = dataclasses.field(default_factory=list)  # when the session was created
    # Graph outputs whose declared shape ORT's shape inference contradicts (ORT then drops the
    # declared dims with a log warning and runs): the file's shape or the exporter is wrong.
    shape_conflicts: list[str] = dataclasses.field(default_factory=list)
    library: str | None = None
    onnxruntime_version: str = ""

    @property
    def unsupported(self) -> list[CustomOp]:
        return [op for op in self.custom_ops if not op.supported]

    @property
    def cpu_fallbacks(self) -> list[CustomOp]:
        """The opbridge ops without a CUDA kernel: on the CPU in a CUDA session."""
        return [op for op in self.custom_ops if op.on_gpu is False]

    def gpu_summary(self) -> str:
        """Where the opbridge nodes run in an ONNX Runtime session with the CUDA execution provider."""
        ours = [op for op in self.custom_ops if op.provider == OPBRIDGE]
        if not ours:
            return "In a CUDA session: no opbridge nodes; ONNX Runtime places every node."
        if not self.cpu_fallbacks:
            return (f"In a CUDA session (onnxruntime-gpu, a CUDA build of opbridge): all {sum(op.count for op in ours)} "
                    "opbridge nodes run on the GPU.")
        names = ", ".join(f"{op.identity} ({op.count})" for op in self.cpu_fallbacks)
        return (f"In a CUDA session (onnxruntime-gpu, a CUDA build of opbridge): "
                f"{sum(op.count for op in self.cpu_fallbacks)} of {sum(op.count for op in ours)} opbridge nodes fall "
                f"back to the CPU, with copies to and from the GPU around them: {names}.")

    @property
    def exit_code(self) -> int:
        if self.load_error is not None:
            return EXIT_UNREADABLE
        if self.unsupported:
            return EXIT_UNSUPPORTED
        if self.session_error is not None:
            return EXIT_SESSION_FAILED
        return EXIT_OK

    @property
    def ok(self) -> bool:
        return self.exit_code == EXIT_OK

    def advice(self) -> list[str]:
        """What to do, one paragraph per problem (empty when the model loads)."""
        if self.load_error is not None:
            return [f"{self.path} is not a readable ONNX model: check the path, and that the file was written "
                    "completely (onnx.load must read it)."]
        lines = [_advice_unsupported(op, self.onnxruntime_version) for op in self.unsupported]
        lines += [f"{conflict}. The model runs, but code reading the declared shape is misled: fix the "
                  "declared shape (or drop it and let ORT infer it)." for conflict in self.shape_conflicts]
        if self.session_error is not None and not self.unsupported:
            ours = sorted({manifest.find(op.identity).kernel for op in self.custom_ops if op.provider == OPBRIDGE})
            pages = f" Each op's attributes and rules: {', '.join(f'docs/ops/{k}.md' for k in ours)}." if ours else ""
            lines.append("ONNX Runtime refused the model although every op is provided: its error above names the "
                         "node and what is wrong (an attribute value, a declared shape, an input type). Fix the "
                         "exporter's arguments or the declared shapes and export again; `opbridge ops` lists each "
                         f"identity's inputs and outputs.{pages}")
        return lines

    def summary(self) -> str:
        code = self.exit_code
        if code == EXIT_OK:
            warnings = f", but {len(self.shape_conflicts)} declared output shapes are wrong" if self.shape_conflicts else ""
            return f"OK: the model runs in ONNX Runtime with opbridge{warnings} (exit {code})"
        if code == EXIT_UNSUPPORTED:
            names = ", ".join(op.identity for op in self.unsupported)
            return f"WILL NOT RUN: ops nobody registers: {names} (exit {code})"
        if code == EXIT_SESSION_FAILED:
            return f"WILL NOT RUN: ONNX Runtime could not create a session (exit {code})"
        return f"NOT AN ONNX MODEL (exit {code})"

    def format(self) -> str:
        """The report as `opbridge check` prints it: tables, the session, what to do, the verdict."""
        lines = [f"model: {self.path}"]
        if self.load_error is not None:
            lines.append(f"  cannot read it: {self.load_error}")
        else:
            opsets = ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in self.opsets.items())
            lines.append(f"  opsets: {opsets}")
            lines.append(f"  nodes: {self.node_count}, of which {sum(op.count for op in self.custom_ops)} outside "
                         "the standard ONNX domains")
            lines.append("")
            if self.custom_ops:
                # "runs on": the device of the node in an ORT session with the CUDA execution
                # provider; "-" where ONNX Runtime's own placement decides.
                lines += _table(["domain", "op type", "count", "provided by", "runs on", "where"],
                                [[op.domain, op.op_type, str(op.count), op.provider,
                                  {True: "GPU", False: "CPU", None: "-"}[op.on_gpu], ", ".join(op.where)]
                                 for op in self.custom_ops])
                lines += ["", "  " + self.gpu_summary()]
            else:
                lines.append("  only standard ONNX ops")
            lines.append("")
            if self.session_error is None:
                lines.append(f"ONNX Runtime {self.onnxruntime_version} session with opbridge ({self.library}): created")
                lines += _table(["", "name", "type", "shape"],
                                [[v.kind, v.name, v.type, str(list(v.shape))] for v in self.values])
            else:
                lines.append(f"ONNX Runtime {self.onnxruntime_version} session with opbridge: FAILED")
                lines += ["  " + line for line in self.session_error.strip().splitlines()]
        advice = self.advice()
        if advice:
            lines += ["", "what to do:"]
            lines += [textwrap.fill(a, 100, initial_indent="  - ", subsequent_indent="    ") for a in advice]
        lines += ["", self.summary()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Everything in the report, for `opbridge check --json`."""
        result = dataclasses.asdict(self)
        result["custom_ops"] = [dict(dataclasses.asdict(op), identity=op.identity, supported=op.supported,
                                     on_gpu=op.on_gpu) for op in self.custom_ops]
        result.update(exit_code=self.exit_code, ok=self.ok, advice=self.advice(), summary=self.summary(),
                      gpu_summary=self.gpu_summary(), cpu_fallbacks=[op.identity for op in self.cpu_fallbacks])
        return result


def check(path) -> CheckReport:
    """Checks the ONNX file at `path` (see the module docstring); never raises for a bad model."""
    require_onnxruntime("opbridge check")
    import onnxruntime as ort

    report = CheckReport(path=str(path), onnxruntime_version=ort.__version__)
    try:
        # The structure is all we read: weights in external files stay on disk (ORT loads them).
        model = onnx.load(str(path), load_external_data=False)
    except Exception as e:  # a missing file, truncated protobuf, ...: onnx raises several types
        report.load_error = f"{type(e).__name__}: {e}"
        return report
    report.opsets = {o.domain: o.version for o in model.opset_import}
    found, report.node_count = _custom_nodes(model)
    functions = {(f.domain, f.name) for f in model.functions}
    registered = {(domain, name) for domain, name, _ in manifest.identities()}
    ort_ops = _onnxruntime_ops()
    for (domain, op_type), where in found.items():
        if (domain, op_type) in registered:
            provider = OPBRIDGE
        elif (domain, op_type) in functions:
            provider = MODEL_FUNCTION
        elif domain in ORT_DOMAINS and (ort_ops is None or (domain, op_type) in ort_ops):
            provider = ONNXRUNTIME
        else:
            provider = NOBODY
        report.custom_ops.append(CustomOp(domain, op_type, len(where), provider, tuple(dict.fromkeys(where)),
                                          _nearest(op_type) if provider == NOBODY else ()))
    try:
        report.library = library_path()
        options = ort.SessionOptions()
        options.log_severity_level = 4  # ORT would also log the error the report shows: fatal only
        session = create_session(str(path), options=options)
    except Exception as e:  # ORT raises its own pybind types; the library may be missing (FileNotFoundError)
        report.session_error = str(e)
        return report
    report.values = session_values(session)
    declared = {v.name: _declared_shape(v) for v in model.graph.output}
    for v in session.get_outputs():
        if _contradicts(declared.get(v.name), tuple(v.shape)):
            report.shape_conflicts.append(f"output {v.name!r}: the file declares {list(declared[v.name])}, "
                                          f"ONNX Runtime infers {list(v.shape) or 'another rank'}")
    return report


def _declared_shape(value: onnx.ValueInfoProto) -> tuple | None:
    """The shape a graph output declares (dims as int, symbol or None), None if it declares none."""
    if not value.type.HasField("tensor_type") or not value.type.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else d.dim_param or None
                 for d in value.type.tensor_type.shape.dim)


def _contradicts(declared: tuple | None, session: tuple) -> bool:
    """Whether ORT's shape differs from a declared one in rank or in a dim declared as a number.
    (Symbols are names ORT may replace with its own; only numbers are facts.)"""
    if declared is None:
        return False
    if len(declared) != len(session):
        return True
    return any(isinstance(d, int) and d != s for d, s in zip(declared, session))


def _custom_nodes(model: onnx.ModelProto) -> tuple[dict, int]:
    """{(domain, op_type): [where each node is]} for the nodes outside the standard domains, in the
    order first met, and the count of all nodes, over the graph, its subgraphs and the functions."""
    found = collections.defaultdict(list)
    total = 0
    graphs = [("graph", model.graph.node)] + [(f"function {f.domain}::{f.name}", f.node) for f in model.functions]
    while graphs:
        where, nodes = graphs.pop(0)
        for node in nodes:
            total += 1
            if is_custom_node(node):
                found[(node.domain, node.op_type)].append(where)
            for attr in node.attribute:  # If/Loop/Scan bodies, and any custom op's graph attributes
                subgraphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
                label = f"{where} > {node.op_type}{f' {node.name!r}' if node.name else ''}.{attr.name}"
                graphs += [(label, g.node) for g in subgraphs]
    return dict(found), total


def is_custom_node(node: onnx.NodeProto) -> bool:
    """Outside the standard domains, or in them with an op type ONNX does not define."""
    if node.domain not in STANDARD_DOMAINS:
        return True
    return not onnx.defs.has(node.op_type, "" if node.domain == "ai.onnx" else node.domain)


def _onnxruntime_ops() -> set | None:
    """(domain, op_type) of every op schema this ONNX Runtime defines (None if it cannot say)."""
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort_c
        return {(s.domain, s.name) for s in ort_c.get_all_operator_schema()}
    except (ImportError, AttributeError):  # not part of ORT's documented API: trust the domain then
        return None


def _nearest(op_type: str) -> tuple[str, ...]:
    """opbridge identities whose op type is the same (in another domain) or close to `op_type`."""
    by_name = collections.defaultdict(list)
    for domain, name, _ in manifest.identities():
        by_name[name.lower()].append(f"{domain}::{name}")
    names = difflib.get_close_matches(op_type.lower(), list(by_name), n=4, cutoff=0.6)
    return tuple(identity for name in names for identity in by_name[name])


def _advice_unsupported(op: CustomOp, ort_version: str) -> str:
    if op.domain in ORT_DOMAINS:
        return (f"{op.identity}: ONNX Runtime {ort_version} has no such contrib op. It may need another "
                "onnxruntime version; opbridge does not provide com.microsoft ops.")
    text = f"{op.identity} is not an opbridge op, and ONNX Runtime does not provide it."
    if op.domain in {domain for domain, _, _ in manifest.identities()}:
        text += f" opbridge registers other {op.domain} ops, not this one."
    if op.nearest:
        text += (f" Nearest opbridge identities: {', '.join(op.nearest)}; if one computes what this node does, "
                 "have the exporter write that identity (and its attributes) instead.")
    return (text + " `opbridge ops` lists every identity opbridge registers. Export the model from PyTorch with "
            "opbridge.export (which writes only ops that run), or ask for the op on opbridge's issue tracker, "
            f"naming {op.identity} and the tool that wrote the file.")


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Left-aligned columns, indented by two spaces."""
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [headers, *rows]]
