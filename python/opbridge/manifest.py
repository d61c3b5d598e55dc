"""The op manifest (ops.toml): every op, its ONNX identities, inputs, outputs and attributes."""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from pathlib import Path

MANIFEST_PATH = Path(__file__).with_name("ops.toml")


@dataclasses.dataclass(frozen=True)
class Attribute:
    name: str
    type: str  # "int", "float" or "string"
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
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]
    attributes: tuple[Attribute, ...]
    notes: str
    # Per identity, when identities differ: the order of their inputs, which are optional, and
    # attributes written by a peer's exporter that the op accepts and ignores.
    input_order: dict = dataclasses.field(default_factory=dict)
    optional_inputs: dict = dataclasses.field(default_factory=dict)
    extra_attributes: dict = dataclasses.field(default_factory=dict)

    def inputs_of(self, identity: str) -> list[Tensor]:
        by_name = {t.name: t for t in self.inputs}
        return [by_name[n] for n in self.input_order.get(identity, [t.name for t in self.inputs])]

    def optional_inputs_of(self, identity: str) -> set[str]:
        return set(self.optional_inputs.get(identity, []))

    @property
    def own_identity(self) -> str:
        """opbridge's own identity, e.g. "opbridge::RoiAlign"."""
        return self.identities[0]

    def identity_in(self, domain: str) -> str | None:
        for identity in self.identities:
            if identity.split("::")[0] == domain:
                return identity
        return None


@functools.cache
def load() -> dict[str, Op]:
    """All ops of the manifest, keyed by kernel stem."""
    raw = tomllib.loads(MANIFEST_PATH.read_text())
    ops = {}
    for kernel, entry in raw["ops"].items():
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
            inputs=tuple(Tensor(**t) for t in entry["inputs"]),
            outputs=tuple(Tensor(**t) for t in entry["outputs"]),
            attributes=tuple(
                Attribute(a["name"], a["type"], a.get("default"), tuple(a.get("allowed", ())), a["doc"])
                for a in entry["attributes"]
            ),
            notes=entry.get("notes", "").strip(),
            input_order=entry.get("input_order", {}),
            optional_inputs=entry.get("optional_inputs", {}),
            extra_attributes=entry.get("extra_attributes", {}),
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
