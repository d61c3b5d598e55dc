"""Generates the C++ side of the manifest (python/opbridge/ops.toml): what ORT needs to know about
every node, written once in the manifest and restated here as code.

- ``src/ort/generated/<kernel>_attrs.h``: per glue class of the op, a struct ``<Glue>Attrs`` (the
  class name without "Op") holding the node's attributes, with its ``Schema()`` (inputs, outputs,
  attributes and defaults, as ORT needs them), ``Read()`` (every attribute read by kind, the default
  where the node has none, every value outside ``allowed`` rejected with the manifest's rule) and
  ``CudaInputOnHost()``. The glue's ``Create`` receives the struct read and checked, and keeps only the
  checks between attributes and of ranges (src/core/<kernel>.cc).
- ``src/ort/generated/registration.cc``: the registration table, every CPU row, then every CUDA
  twin (ORT takes an op type's schema from its first registration).
- ``cmake/op_sources.cmake``: the files of every op CMake compiles (src/core, src/kernels/cpu,
  src/ort/ops, the CUDA glue and kernels of ops with a CUDA provider, tests/cpp).

The files are checked in, so that building the library needs no Python; `python -m opbridge
generate` rewrites them with the reference pages, and tests/python/test_manifest.py fails when one
is stale.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from opbridge import docs, manifest

REPO = Path(__file__).resolve().parents[2]
GENERATED = "src/ort/generated"
_NOTICE = "// Generated from python/opbridge/ops.toml by `python -m opbridge generate`: do not edit.\n"

_ATTR_KINDS = {"int": "kInt", "float": "kFloat", "string": "kString", "ints": "kInts", "floats": "kFloats"}
_CPP_TYPES = {"int": "int64_t", "float": "float", "string": "std::string", "ints": "std::vector<int64_t>",
              "floats": "std::vector<float>"}
_READERS = {"int": "Int", "float": "Float", "string": "String", "ints": "Ints", "floats": "Floats"}


def _comment(text: str) -> list[str]:
    return ["// " + line for line in textwrap.wrap(text, 100)]


def _onnx_type(dtype: str) -> str:
    return f"ONNX_TENSOR_ELEMENT_DATA_TYPE_{manifest.ONNX_TYPES[dtype]}"


def _c_string(text: str) -> str:
    return json.dumps(text)


def _float(value: float) -> str:
    text = repr(float(value))
    return text + ("f" if "e" in text or "." in text else ".0f")


def _attrs_name(glue: str) -> str:
    return (glue[:-2] if glue.endswith("Op") else glue) + "Attrs"


def _glue_classes(op: manifest.Op) -> dict[str, list[str]]:
    """Glue class -> the identities it runs, in manifest order; every one must share a signature."""
    classes: dict[str, list[str]] = {}
    for identity in op.identities:
        classes.setdefault(op.glue[identity], []).append(identity)
    for glue, identities in classes.items():
        first = identities[0]
        for identity in identities[1:]:
            for what, check in [("signature", lambda i: op.signature(i)), ("providers", op.providers),
                                ("cuda_host_inputs", lambda i: op.cuda_host_inputs[i])]:
                if check(identity) != check(first):
                    raise ValueError(f"ops.toml [{op.kernel}]: {identity} and {first} share glue {glue} but "
                                     f"not their {what}")
    return classes


def _enumerator(attribute: manifest.Attribute, index: int) -> str:
    word = str(attribute.labels[index] if attribute.labels else attribute.allowed[index])
    return f"{attribute.enum}::k" + "".join(part.capitalize() for part in word.replace("-", " ").replace("_", " ").split())


def _field(attribute: manifest.Attribute) -> str:
    if attribute.enum:
        default = _enumerator(attribute, attribute.allowed.index(attribute.default)) if not attribute.required \
            else _enumerator(attribute, 0)
        return f"  {attribute.enum} {attribute.name} = {default};"
    if attribute.type == "int":
        return f"  int64_t {attribute.name} = {attribute.default if not attribute.required else 0};"
    if attribute.type == "float":
        return f"  float {attribute.name} = {_float(attribute.default if not attribute.required else 0.0)};"
    return f"  {_CPP_TYPES[attribute.type]} {attribute.name};"


def _attr_spec(attribute: manifest.Attribute) -> str:
    required = "true" if attribute.required else "false"
    default = attribute.default
    int_default = default if attribute.type == "int" and not attribute.required else 0
    float_default = _float(default) if attribute.type == "float" and not attribute.required else "0.0f"
    string_default = _c_string(default) if attribute.type == "string" and not attribute.required else '""'
    ints = "{" + ", ".join(str(v) for v in default) + "}" if attribute.type == "ints" and default else "{}"
    floats = "{" + ", ".join(_float(v) for v in default) + "}" if attribute.type == "floats" and default else "{}"
    return (f"{{{_c_string(attribute.name)}, AttrKind::{_ATTR_KINDS[attribute.type]}, {required}, {int_default}, "
            f"{float_default}, {string_default}, {ints}, {floats}}}")


def _tensor_spec(tensor: manifest.Tensor) -> str:
    dtype, also = tensor.dtype, None
    if " or " in dtype:  # "int64 or int32": the first is declared, the second also taken
        dtype, also = dtype.split(" or ")
    fields = [_c_string(tensor.name), _onnx_type(dtype), "true" if tensor.optional else "false",
              "true" if tensor.variadic else "false"]
    if also:
        fields.append(_onnx_type(also))
    return "{" + ", ".join(fields) + "}"


def _read(attribute: manifest.Attribute) -> list[str]:
    """The statements reading one attribute into attrs->name and checking its allowed values."""
    name, reader = attribute.name, _READERS[attribute.type]
    if not attribute.allowed:
        return [f"  OPBRIDGE_RETURN_IF_ERROR(reader.{reader}({_c_string(name)}, &attrs->{name}));"]
    rule = _c_string(f"{name} must be {attribute.rule()}, got ")
    lines = [f"  {{",
             f"    {_CPP_TYPES[attribute.type]} value{'' if attribute.type == 'string' else ' = 0'};",
             f"    OPBRIDGE_RETURN_IF_ERROR(reader.{reader}({_c_string(name)}, &value));"]
    literal = (lambda v: _c_string(v)) if attribute.type == "string" else str
    shown = '"\\"", value, "\\""' if attribute.type == "string" else "value"
    if attribute.enum:
        for i, allowed in enumerate(attribute.allowed):
            keyword = "if" if i == 0 else "} else if"
            lines += [f"    {keyword} (value == {literal(allowed)}) {{", f"      attrs->{name} = {_enumerator(attribute, i)};"]
        lines += ["    } else {", f"      return Status::Error({rule}, {shown});", "    }"]
    else:
        condition = " && ".join(f"value != {literal(v)}" for v in attribute.allowed)
        lines += [f"    if ({condition}) {{", f"      return Status::Error({rule}, {shown});", "    }",
                  f"    attrs->{name} = value;"]
    return lines + ["  }"]


def _attrs_struct(op: manifest.Op, glue: str, identities: list[str]) -> str:
    signature = op.signature(identities[0])
    name = _attrs_name(glue)
    generic = any(t.dtype == "T" for t in signature.inputs + signature.outputs)
    host = [i for i, t in enumerate(signature.inputs) if t.name in op.cuda_host_inputs[identities[0]]]
    lines = _comment(f"{', '.join(identities)}: the attributes {glue}::Create receives.")
    lines += [f"struct {name} {{"]
    lines += [_field(a) for a in signature.attributes]
    lines += ["",
              "  // The node's inputs, outputs, attributes and defaults, as ORT needs them.",
              "  static const OpSchema& Schema();",
              "  // Reads every attribute (its default where the node has none) and checks the allowed values.",
              f"  static Status Read(const AttrReader& reader, {name}* attrs);",
              "  // Whether the CUDA kernel reads input `index` on the host (ORT copies it there).",
              "  static bool CudaInputOnHost(size_t index);",
              "};", ""]
    lines += [f"inline const OpSchema& {name}::Schema() {{", "  static const OpSchema schema{"]
    lines += ["      {" + ",\n       ".join(_tensor_spec(t) for t in signature.inputs) + "},"]
    lines += ["      {" + ",\n       ".join(_tensor_spec(t) for t in signature.outputs) + "},"]
    attrs = ",\n       ".join(_attr_spec(a) for a in signature.attributes)
    if generic:
        lines += ["      {" + attrs + "},"]
        lines += ["      {" + ",\n       ".join(_onnx_type(d) for d in op.dtypes) + "}};"]
    else:
        lines += ["      {" + attrs + "}};"]
    lines += ["  return schema;", "}", ""]
    lines += [f"inline Status {name}::Read(const AttrReader& reader, {name}* attrs) {{"]
    if not signature.attributes:
        lines += ["  (void)reader;", "  (void)attrs;"]
    for a in signature.attributes:
        lines += _read(a)
    lines += ["  return Status::Ok();", "}", ""]
    lines += [f"inline bool {name}::CudaInputOnHost(size_t index) {{"]
    if host:
        lines += ["  return " + " || ".join(f"index == {i}" for i in host) + ";"]
    else:
        lines += ["  (void)index;", "  return false;"]
    lines += ["}", ""]
    return "\n".join(lines)


def attrs_header(op: manifest.Op) -> str:
    classes = _glue_classes(op)
    needs_core = any(a.enum for i in op.identities for a in op.signature(i).attributes)
    lines = [_NOTICE.rstrip("\n")]
    lines += _comment(f"{op.title}: the schema and attributes of every glue class in src/ort/ops/{op.kernel}.h.")
    lines += ["#pragma once", "", "#include <cstddef>", "#include <cstdint>", "#include <string>", "#include <vector>", ""]
    if needs_core:
        lines += [f'#include "core/{op.kernel}.h"']
    lines += ['#include "ort/ort_util.h"', "", "namespace opbridge::ort {", ""]
    written: dict[str, str] = {}  # what a struct holds (its repr) -> its name
    for glue, identities in classes.items():
        key = repr((op.signature(identities[0]), op.cuda_host_inputs[identities[0]]))
        if key in written:  # another glue class of the same node (cummax and cummin)
            lines += _comment(f"{', '.join(identities)}: the attributes {glue}::Create receives.")
            lines += [f"using {_attrs_name(glue)} = {written[key]};", ""]
            continue
        written[key] = _attrs_name(glue)
        lines.append(_attrs_struct(op, glue, identities))
    lines += ["}  // namespace opbridge::ort", ""]
    return "\n".join(lines)


def registration_source() -> str:
    ops = manifest.load().values()
    cpu_rows, cuda_rows = [], []
    for op in ops:
        for identity in op.identities:
            domain, name = identity.split("::")
            args = f"({_c_string(domain)}, {_c_string(name)}, {_c_string(op.kernel)})"
            cpu_rows.append(f"      CpuOp<{op.glue[identity]}>{args},")
            if "CUDA" in op.providers(identity):
                cuda_rows.append(f"      CudaOp<{op.glue[identity]}>{args},")
    lines = [_NOTICE.rstrip("\n"),
             "// The registration table: every (domain, op type) opbridge answers to, and its glue class.",
             '#include "ort/op_adapter.h"', ""]
    lines += [f'#include "ort/ops/{op.kernel}.h"' for op in sorted(ops, key=lambda o: o.kernel)]
    lines += ["", "namespace opbridge::ort {", "",
              "const std::vector<RegisteredOp>& RegisteredOps() {",
              "  static const std::vector<RegisteredOp>* const ops = new std::vector<RegisteredOp>{"]
    lines += cpu_rows
    lines += ["#ifdef OPBRIDGE_WITH_CUDA",
              "      // The CUDA twins, after every CPU op: ORT takes an op type's schema from its first",
              "      // registration and checks that every twin has the same inputs and outputs."]
    lines += cuda_rows
    lines += ["#endif", "  };", "  return *ops;", "}", "", "}  // namespace opbridge::ort", ""]
    return "\n".join(lines)


def op_sources() -> str:
    """CMake lists of every op's files that follow the naming rule (stem = the op's kernel)."""
    ops = sorted(manifest.load().values(), key=lambda o: o.kernel)
    cuda_ops = [op for op in ops if op.cuda_identities]
    cuda_kernels = sorted({op.cuda_kernel for op in cuda_ops})
    lines = ["# " + _NOTICE[3:].rstrip("\n"),
             "# Every op's validation, CPU kernel and ORT glue; with a CUDA provider, its CUDA glue and kernel.",
             "set(OPBRIDGE_OP_CORE_SOURCES"] + [f"  src/core/{op.kernel}.cc" for op in ops] + [")"]
    lines += ["set(OPBRIDGE_OP_CPU_KERNEL_SOURCES"] + [f"  src/kernels/cpu/{op.kernel}.cc" for op in ops] + [")"]
    lines += ["set(OPBRIDGE_OP_GLUE_SOURCES"] + [f"  src/ort/ops/{op.kernel}.cc" for op in ops] + [")"]
    lines += ["set(OPBRIDGE_OP_CUDA_GLUE_SOURCES"] + [f"  src/ort/ops/{op.kernel}_cuda.cc" for op in cuda_ops] + [")"]
    lines += ["set(OPBRIDGE_OP_CUDA_KERNEL_SOURCES"] + [f"  src/kernels/cuda/{k}.cu" for k in cuda_kernels] + [")"]
    lines += ["set(OPBRIDGE_OP_CPP_TEST_SOURCES"] + [f"  tests/cpp/{op.kernel}_test.cc" for op in ops] + [")"]
    return "\n".join(lines) + "\n"


def files() -> dict[str, str]:
    """Repository path -> content of every generated file (the reference pages included)."""
    result = {f"{GENERATED}/{op.kernel}_attrs.h": attrs_header(op) for op in manifest.load().values()}
    result[f"{GENERATED}/registration.cc"] = registration_source()
    result["cmake/op_sources.cmake"] = op_sources()
    result.update({f"docs/ops/{name}": text for name, text in docs.pages().items()})
    return result


def _differs(path: str, text: str) -> bool:
    return not (REPO / path).is_file() or (REPO / path).read_text() != text


def _orphans(expected: dict[str, str]) -> list[str]:
    """The files in the generated folders that no op gives any more."""
    paths = [p.relative_to(REPO).as_posix() for folder, pattern in [(GENERATED, "*"), ("docs/ops", "*.md")]
             for p in sorted((REPO / folder).glob(pattern))]
    return [path for path in paths if path not in expected]


def stale() -> list[str]:
    """The generated files that differ from what the manifest gives, or should not exist."""
    expected = files()
    return [path for path, text in expected.items() if _differs(path, text)] + _orphans(expected)


def write() -> list[str]:
    """Writes every generated file; removes generated files no op gives any more. Returns the paths changed."""
    if not (REPO / GENERATED).is_dir():
        raise FileNotFoundError(f"{REPO / GENERATED} not found: python -m opbridge generate rewrites the files of "
                                "a source checkout (run it from one, with its python/ on the path)")
    expected = files()
    changed = [path for path, text in expected.items() if _differs(path, text)]
    for path in changed:
        (REPO / path).parent.mkdir(parents=True, exist_ok=True)
        (REPO / path).write_text(expected[path])
    orphans = _orphans(expected)
    for path in orphans:
        (REPO / path).unlink()
    return changed + orphans
