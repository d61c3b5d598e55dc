"""The op manifest (ops.toml): every op, its ONNX identities, inputs, outputs and attributes.

An op is one kernel (one stem: src/kernels/cpu/<kernel>.cc, ...). Its identities usually share
one signature (inputs, outputs, attributes); where a peer's identity differs (other inputs, other
layout, extra attributes its exporter writes) the manifest gives that identity a signature of its
own under ``[ops.<kernel>.signatures."<domain>::<OpType>"]``.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from pathlib import Path

MANIFEST_PATH = Path(__file__).with_name("ops.toml")


@dataclasses.dataclass(frozen=True)
class Attribute:
    name: str
    type: str  # "int", "float", "string", "ints" or "floats"
    default: object  # None: required
    allowed: tuple
    doc: str

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
    # The identities that also have a CUDA kernel (a CUDA twin in CUDA builds of the library).
    cuda_identities: tuple[str, ...] = ()
    # How the CUDA kernel's results relate to the CPU kernel's (the op page's "On the GPU").
    cuda_notes: str = ""

    def providers(self, identity: str) -> tuple[str, ...]:
        """The execution providers `identity` has kernels for in a CUDA build of the library."""
        return ("CPU", "CUDA") if identity in self.cuda_identities else ("CPU",)

    @property
    def own_identity(self) -> str:
        """opbridge's own identity, e.g. "opbridge::RoiAlign"."""
        return self.identities[0]

    def signature(self, identity: str | None = None) -> Signature:
        return self.signatures[identity or self.own_identity]

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
    return Attribute(item["name"], item["type"], item.get("default"), tuple(item.get("allowed", ())), item["doc"])


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
        overrides = entry.get("signatures", {})
        unknown = set(overrides) - set(entry["identities"])
        if unknown:
            raise ValueError(f"ops.toml [{kernel}]: signatures for identities it does not list: {sorted(unknown)}")
        for identity in entry["identities"]:
            own = overrides.get(identity, {})
            signatures[identity] = Signature(
                tuple(_tensor(t, known_tensors) for t in own["inputs"]) if "inputs" in own else base.inputs,
                tuple(_tensor(t, known_tensors) for t in own["outputs"]) if "outputs" in own else base.outputs,
                tuple(_attribute(a, known_attrs) for a in own["attributes"]) if "attributes" in own
                else base.attributes,
            )
        cuda = tuple(entry.get("cuda_identities", ()))
        if bool(cuda) != bool(entry.get("cuda_notes")):
            raise ValueError(f"ops.toml [{kernel}]: cuda_identities and cuda_notes go together")
        if set(cuda) - set(entry["identities"]):
            raise ValueError(f"ops.toml [{kernel}]: cuda_identities it does not list: "
                             f"{sorted(set(cuda) - set(entry['identities']))}")
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
            cuda_identities=cuda,
            cuda_notes=entry.get("cuda_notes", "").strip(),
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
