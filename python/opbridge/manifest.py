"""The op manifest (ops.toml): every op, its ONNX identities, inputs, outputs and attributes.

An op is one kernel (one stem: src/kernels/cpu/<kernel>.cc, ...). Its identities usually share
one signature (inputs, outputs, attributes); where a peer's identity differs (other inputs, other
layout, extra attributes its exporter writes) the manifest gives that identity a signature of its
own under ``[ops.<kernel>.identity."<domain>::<OpType>"]``, which also names the identity's C++ glue
class, providers and host inputs where they differ from the op's.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from pathlib import Path

MANIFEST_PATH = Path(__file__).with_name("ops.toml")
# The ONNX element type of each dtype the manifest names (onnx.TensorProto's and the C API's
# ONNX_TENSOR_ELEMENT_DATA_TYPE_ names); the type parameter T is UNDEFINED until a model fixes it.
ONNX_TYPES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "int64": "INT64",
              "int32": "INT32", "int8": "INT8", "uint8": "UINT8", "bool": "BOOL", "T": "UNDEFINED"}


@dataclasses.dataclass(frozen=True)
class Attribute:
    name: str
    type: str  # "int", "float", "string", "ints" or "floats"
    default: object  # None: required
    allowed: tuple
    doc: str
    # Per allowed value, the words the error message gives after it ("0 (bilinear), ...").
    labels: tuple = ()
    # The C++ enum the values map to in the generated attributes struct (enumerator "k" + the
    # value, or its label, in CamelCase); "" keeps the value as it is.
    enum: str = ""

    def rule(self) -> str:
        """The allowed values as the error messages state them: '0 (max) or 1 (avg)', '"avg" or "max"'."""
        words = [f'"{v}"' if self.type == "string" else str(v) for v in self.allowed]
        if self.labels:
            words = [f"{w} ({label})" for w, label in zip(words, self.labels)]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]

    def check(self, value, prefix: str) -> None:
        """Raises ValueError("<prefix>: <name> must be <rule>, got <value>") for a value outside
        `allowed` (the library's message for the same value, after its identity)."""
        if self.allowed and value not in self.allowed:
            shown = f'"{value}"' if self.type == "string" else value
            raise ValueError(f"{prefix}: {self.name} must be {self.rule()}, got {shown}")

    @property
    def required(self) -> bool:
        return self.default is None


@dataclasses.dataclass(frozen=True)
class Tensor:
    name: str
    shape: str
    dtype: str
    doc: str
    optional: bool = False
    variadic: bool = False  # the last input only: one or more tensors


@dataclasses.dataclass(frozen=True)
class Signature:
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    attributes: tuple[Attribute, ...]


@dataclasses.dataclass(frozen=True)
class Op:
    kernel: str
    title: str
    identities: tuple[str, ...]
    opset: int
    since: str
    pytorch: str
    summary: str
    dtypes: tuple[str, ...]
    workloads: tuple[str, ...]  # its benchmark workloads (bench.WORKLOADS ids)
    notes: str
    signatures: dict  # identity -> Signature, for every identity
    # Per identity: the C++ glue class that runs it (src/ort/ops/<kernel>.h), the execution providers
    # it has kernels for in a CUDA build ("cpu", "cuda") and the inputs its CUDA kernel reads on the
    # host (ORT copies them there).
    glue: dict = dataclasses.field(default_factory=dict)
    identity_providers: dict = dataclasses.field(default_factory=dict)
    cuda_host_inputs: dict = dataclasses.field(default_factory=dict)
    # How the CUDA kernel's results relate to the CPU kernel's (the op page's "On the GPU").
    cuda_notes: str = ""
    # What a CUDA run waits for the GPU for (a count the host needs, e.g. the output's size), or ""
    # where it never does: the launches are asynchronous on ORT's stream. The same for every CUDA
    # identity of the op (they share the kernel and its launch function).
    cuda_synchronizes: str = ""
    # Why opbridge has no export mapping for it (no python/opbridge/ops/<kernel>.py); "": it has one.
    no_export: str = ""
    # The stem of its CUDA kernel (src/kernels/cuda/<stem>.cu) where it shares another op's.
    cuda_kernel: str = ""

    def providers(self, identity: str) -> tuple[str, ...]:
        """The execution providers `identity` has kernels for in a CUDA build of the library."""
        return tuple(p.upper() for p in self.identity_providers[identity])

    @property
    def cuda_identities(self) -> tuple[str, ...]:
        """The identities that also have a CUDA kernel (a CUDA twin in CUDA builds of the library)."""
        return tuple(i for i in self.identities if "cuda" in self.identity_providers[i])

    @property
    def own_identity(self) -> str:
        """opbridge's own identity, e.g. "opbridge::RoiAlign"."""
        return self.identities[0]

    def signature(self, identity: str | None = None) -> Signature:
        return self.signatures[identity or self.own_identity]

    def attribute(self, name: str, identity: str | None = None) -> Attribute:
        """Attribute `name` of `identity`'s signature (default: the own identity's)."""
        return next(a for a in self.signature(identity).attributes if a.name == name)

    # The first identity's signature, for ops whose identities all share it.
    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self.signature().inputs

    @property
    def outputs(self) -> tuple[Tensor, ...]:
        return self.signature().outputs

    @property
    def attributes(self) -> tuple[Attribute, ...]:
        return self.signature().attributes

    @property
    def uniform(self) -> bool:
        """Whether every identity has the same signature."""
        return all(s == self.signature() for s in self.signatures.values())

    def identity_in(self, domain: str, like: str | None = None) -> str | None:
        """The identity in `domain` with the same signature as `like` (default: the own identity).
        Where several have it (cummax and cummin), the one whose op type is `like`'s, ignoring case
        (opbridge::CumMin -> mmcv::cummin)."""
        like = like or self.own_identity
        wanted = self.signature(like)
        matches = [i for i in self.identities if i.split("::")[0] == domain and self.signatures[i] == wanted]
        if not matches:
            # A peer node that also carries attributes the kernel ignores, each with a default
            # (mmdeploy's im2col_step): the node is that identity once they are written.
            matches = [i for i in self.identities
                       if i.split("::")[0] == domain and self.extra_attributes(i, like) is not None]
        if len(matches) > 1:
            matches = [i for i in matches if i.split("::")[1].lower() == like.split("::")[1].lower()]
        return matches[0] if len(matches) == 1 else None

    def extra_attributes(self, identity: str, like: str) -> tuple[Attribute, ...] | None:
        """The attributes `identity` has beyond `like`'s when it has `like`'s inputs, outputs and
        attributes and each extra one has a default; None otherwise."""
        target, own = self.signature(identity), self.signature(like)
        if target.inputs != own.inputs or target.outputs != own.outputs:
            return None
        if any(a not in target.attributes for a in own.attributes):
            return None
        extra = tuple(a for a in target.attributes if a not in own.attributes)
        return extra if all(not a.required for a in extra) else None


def _tensor(item, known: dict[str, Tensor]) -> Tensor:
    """A tensor entry: a full table, a name of one of the op's tensors, or a name plus overrides."""
    if isinstance(item, str):
        return known[item]
    if set(item) <= {"name", "optional", "variadic"} and item["name"] in known:
        return dataclasses.replace(known[item["name"]], **{k: v for k, v in item.items() if k != "name"})
    return Tensor(**item)


def _attribute(item, known: dict[str, Attribute]) -> Attribute:
    if isinstance(item, str):
        return known[item]
    attribute = Attribute(item["name"], item["type"], item.get("default"), tuple(item.get("allowed", ())),
                          item["doc"], tuple(item.get("labels", ())), item.get("enum", ""))
    if attribute.labels and len(attribute.labels) != len(attribute.allowed):
        raise ValueError(f"ops.toml: attribute {attribute.name}: one label per allowed value")
    if attribute.enum and not attribute.allowed:
        raise ValueError(f"ops.toml: attribute {attribute.name}: an enum needs the allowed values")
    return attribute


_PROVIDERS = ("cpu", "cuda")


@functools.cache
def load() -> dict[str, Op]:
    """All ops of the manifest, keyed by kernel stem."""
    raw = tomllib.loads(MANIFEST_PATH.read_text())
    ops = {}
    for kernel, entry in raw["ops"].items():
        inputs = tuple(_tensor(t, {}) for t in entry["inputs"])
        outputs = tuple(_tensor(t, {}) for t in entry["outputs"])
        attributes = tuple(_attribute(a, {}) for a in entry["attributes"])
        base = Signature(inputs, outputs, attributes)
        known_tensors = {t.name: t for t in inputs + outputs}
        known_attrs = {a.name: a for a in attributes}
        signatures = {}
        glue, providers, host_inputs = {}, {}, {}
        overrides = entry.get("identity", {})
        unknown = set(overrides) - set(entry["identities"])
        if unknown:
            raise ValueError(f"ops.toml [{kernel}]: tables for identities it does not list: {sorted(unknown)}")
        for identity in entry["identities"]:
            own = overrides.get(identity, {})
            glue[identity] = own.get("glue", entry["glue"])
            providers[identity] = tuple(own.get("providers", entry.get("providers", ["cpu"])))
            host_inputs[identity] = tuple(own.get("cuda_host_inputs", entry.get("cuda_host_inputs", ())))
            if providers[identity][0] != "cpu" or not set(providers[identity]) <= set(_PROVIDERS):
                raise ValueError(f"ops.toml [{kernel}] {identity}: providers must be \"cpu\" first, then any of "
                                 f"{_PROVIDERS[1:]}, got {providers[identity]}")
            signatures[identity] = Signature(
                tuple(_tensor(t, known_tensors) for t in own["inputs"]) if "inputs" in own else base.inputs,
                tuple(_tensor(t, known_tensors) for t in own["outputs"]) if "outputs" in own else base.outputs,
                tuple(_attribute(a, known_attrs) for a in own["attributes"]) if "attributes" in own
                else base.attributes,
            )
        has_cuda = any("cuda" in p for p in providers.values())
        if has_cuda != bool(entry.get("cuda_notes")):
            raise ValueError(f"ops.toml [{kernel}]: a cuda provider and cuda_notes go together")
        if entry.get("cuda_synchronizes") and not has_cuda:
            raise ValueError(f"ops.toml [{kernel}]: cuda_synchronizes without a cuda provider")
        for identity, names in host_inputs.items():
            unknown_inputs = set(names) - {t.name for t in signatures[identity].inputs}
            if unknown_inputs:
                raise ValueError(f"ops.toml [{kernel}] {identity}: cuda_host_inputs it has no input for: "
                                 f"{sorted(unknown_inputs)}")
        ops[kernel] = Op(
            kernel=kernel,
            title=entry["title"],
            identities=tuple(entry["identities"]),
            opset=entry["opset"],
            since=entry["since"],
            pytorch=entry["pytorch"],
            summary=entry["summary"],
            dtypes=tuple(entry["dtypes"]),
            workloads=tuple(entry["workloads"]),
            notes=entry.get("notes", "").strip(),
            signatures=signatures,
            glue=glue,
            identity_providers=providers,
            cuda_host_inputs=host_inputs,
            cuda_kernel=entry.get("cuda_kernel", kernel) if has_cuda else "",
            no_export=entry.get("no_export", ""),
            cuda_notes=entry.get("cuda_notes", "").strip(),
            cuda_synchronizes=entry.get("cuda_synchronizes", "").strip(),
        )
    return ops


def identities() -> list[tuple[str, str, Op]]:
    """Every (domain, op_type, op) the library registers, in manifest order."""
    result = []
    for op in load().values():
        for identity in op.identities:
            domain, name = identity.split("::")
            result.append((domain, name, op))
    return result


def find(identity: str) -> Op:
    """The op that registers `identity` ("domain::OpType")."""
    for op in load().values():
        if identity in op.identities:
            return op
    raise KeyError(f"no op registers {identity}")
