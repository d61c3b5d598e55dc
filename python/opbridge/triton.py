"""A Triton Inference Server model repository entry for an ONNX file with opbridge nodes.

    opbridge triton model.onnx --repository models [--name N] [--max-batch-size B]
                               [--device cpu|gpu] [--instances K] [--library PATH] [--force]

writes models/N/1/model.onnx and models/N/config.pbtxt for Triton's ONNX Runtime backend
(`platform: "onnxruntime_onnx"`), which loads a custom-op library named in the model's
`model_operations { op_library_filename: ... }`. What the configuration says, and why:

* inputs and outputs: names, data types and dims from an ONNX Runtime session of the model with
  opbridge's library (the ONNX file alone often lacks the outputs' shapes: its custom nodes have no
  ONNX schema), -1 where a dim is dynamic;
* batching: Triton's dynamic batching concatenates requests along the first axis, so the entry
  batches (max_batch_size B, default 8, dims without the first axis, `dynamic_batching {}`) only
  where every input and output has one shared symbolic first axis (a detector exported on a batch
  of images [N, 3, H, W], whose outputs are padded per image, has); a detector exported on one
  [3, H, W] image, whose outputs have a data-dependent row count, does not;
* the library: the absolute path of the opbridge library this Python package uses, or the path the
  server will see (--library); each model of a repository names it, and relative paths are refused
  (Triton would resolve them against its own working directory);
* instances: `instance_group` of kind KIND_CPU or KIND_GPU (the CUDA twins need a CUDA build of the
  library and the GPU instance kind); ORT's execution accelerators stay at the backend's defaults.

No Triton server runs here; the tests parse every configuration with Triton's own
model_config.proto (the compiled form the tritonclient package carries).
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from pathlib import Path

import onnx

DEFAULT_MAX_BATCH_SIZE = 8

# onnxruntime's type strings -> Triton's DataType names (model_config.proto).
TRITON_TYPES = {
    "tensor(bool)": "TYPE_BOOL", "tensor(uint8)": "TYPE_UINT8", "tensor(uint16)": "TYPE_UINT16",
    "tensor(uint32)": "TYPE_UINT32", "tensor(uint64)": "TYPE_UINT64", "tensor(int8)": "TYPE_INT8",
    "tensor(int16)": "TYPE_INT16", "tensor(int32)": "TYPE_INT32", "tensor(int64)": "TYPE_INT64",
    "tensor(float16)": "TYPE_FP16", "tensor(float)": "TYPE_FP32", "tensor(double)": "TYPE_FP64",
    "tensor(string)": "TYPE_STRING",
}  # not bfloat16: Triton's ONNX Runtime backend maps TYPE_BF16 to no ONNX type and refuses the model


class TritonError(ValueError):
    """A model or an argument `opbridge triton` cannot make a repository entry of."""


@dataclasses.dataclass(frozen=True)
class Tensor:
    name: str
    data_type: str  # TYPE_FP32, ...
    dims: tuple  # Triton's dims: -1 where dynamic, without the batch axis when batching


@dataclasses.dataclass
class TritonEntry:
    """What write_entry wrote: the model's folder, its configuration and what to know about it."""

    folder: Path
    config: str  # config.pbtxt's text
    max_batch_size: int
    inputs: list[Tensor]
    outputs: list[Tensor]
    notes: list[str]


def write_entry(model: str | Path, repository: str | Path, name: str | None = None, max_batch_size: int | None = None,
                device: str = "cpu", instances: int = 1, library: str | None = None,
                force: bool = False) -> TritonEntry:
    """Writes repository/name/1/model.onnx and repository/name/config.pbtxt for `model` (see the
    module docstring). Raises TritonError for a model or arguments it cannot serve."""
    from opbridge.check import OPBRIDGE, check

    model = Path(model)
    name = name if name is not None else model.stem
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name) or name in (".", ".."):
        raise TritonError(f"model name {name!r}: Triton's model names are folder names: letters, digits, "
                          "'_', '.' and '-'")
    if device not in ("cpu", "gpu"):
        raise TritonError(f"device must be 'cpu' or 'gpu', got {device!r}")
    if instances < 1:
        raise TritonError(f"instances must be >= 1, got {instances}")
    if max_batch_size is not None and max_batch_size < 0:
        raise TritonError(f"max_batch_size must be >= 0, got {max_batch_size}")
    report = check(model)
    if report.load_error is not None:
        raise TritonError(f"{model}: not a readable ONNX file ({report.load_error})")
    ours = [op for op in report.custom_ops if op.provider == OPBRIDGE]
    if not ours:
        raise TritonError(f"{model} has no opbridge nodes: Triton's ONNX Runtime backend runs it without a "
                          "custom-op library (`opbridge check` lists its ops)")
    if report.unsupported:
        raise TritonError(f"{model} has nodes no library provides: "
                          + ", ".join(op.identity for op in report.unsupported) + " (`opbridge check` says more)")
    if report.session_error is not None:
        raise TritonError(f"{model}: ONNX Runtime cannot create a session with opbridge: {report.session_error}")
    notes = []
    library = _library_path(library, device, notes)
    values = [(v, _triton_type(v)) for v in report.values]
    proto = onnx.load(str(model), load_external_data=False)  # the structure: weights stay on disk
    _check_ranks(proto.graph, report.values)
    batch_axis, why_not = shared_batch_axis([v for v, _ in values])
    if max_batch_size is None:
        max_batch_size = DEFAULT_MAX_BATCH_SIZE if batch_axis else 0
    elif max_batch_size > 0 and not batch_axis:
        raise TritonError(f"--max-batch-size {max_batch_size}: {model.name} cannot be batched by Triton: {why_not}")
    if not batch_axis:
        notes.append(f"no batching (max_batch_size 0): {why_not}")
    skip = 1 if max_batch_size > 0 else 0
    inputs = [Tensor(v.name, t, _dims(v.shape[skip:])) for v, t in values if v.kind == "input"]
    outputs = [Tensor(v.name, t, _dims(v.shape[skip:])) for v, t in values if v.kind == "output"]
    config = config_text(name, max_batch_size, inputs, outputs, device, instances, library)

    folder = Path(repository) / name
    data_files = _external_data(proto)
    sources = [model] + [model.parent / data for data in data_files]
    try:
        if folder.exists() and not folder.is_dir():
            raise TritonError(f"{folder} exists and is not a folder")
        if folder.exists() and any(folder.iterdir()):
            if not force:
                raise TritonError(f"{folder} exists and is not empty: pass --force to replace it")
            inside = [p for p in sources if p.resolve().is_relative_to(folder.resolve())]
            if inside:
                raise TritonError(f"{inside[0]} lies in {folder}, which --force would delete: copy it elsewhere first")
        # Written beside the folder, then renamed into place: a failure leaves the old entry as it was.
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=folder.parent))
        try:
            (staging / "1").mkdir()
            shutil.copyfile(model, staging / "1" / "model.onnx")
            for data, source in zip(data_files, sources[1:]):  # weights beside the model travel with it
                (staging / "1" / data).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, staging / "1" / data)
            (staging / "config.pbtxt").write_text(config)
            if folder.exists():
                shutil.rmtree(folder)
            staging.rename(folder)
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    except OSError as error:
        raise TritonError(f"cannot write {folder}: {error}") from error
    return TritonEntry(folder, config, max_batch_size, inputs, outputs, notes)


def config_text(name: str, max_batch_size: int, inputs: list[Tensor], outputs: list[Tensor], device: str,
                instances: int, library: str) -> str:
    """config.pbtxt in protobuf's text format (ModelConfig of Triton's model_config.proto)."""
    lines = [f"name: {_quote(name)}", 'platform: "onnxruntime_onnx"', f"max_batch_size: {max_batch_size}"]
    for field, tensors in (("input", inputs), ("output", outputs)):
        lines.append(f"{field} [")
        for k, t in enumerate(tensors):
            # Triton takes no empty dims: a scalar is [1], reshaped to [] for the model.
            dims = ", ".join(str(d) for d in t.dims) if t.dims else "1"
            reshape = "\n    reshape { shape: [ ] }" if not t.dims else ""
            lines.append(f"  {{\n    name: {_quote(t.name)}\n    data_type: {t.data_type}\n    dims: [ {dims} ]{reshape}\n"
                         f"  }}{',' if k + 1 < len(tensors) else ''}")
        lines.append("]")
    kind = "KIND_GPU" if device == "gpu" else "KIND_CPU"
    lines.append(f"instance_group [\n  {{\n    count: {instances}\n    kind: {kind}\n  }}\n]")
    if max_batch_size > 0:
        lines.append("dynamic_batching { }")
    lines.append(f"model_operations {{\n  op_library_filename: {_quote(library)}\n}}")
    return "\n".join(lines) + "\n"


def _library_path(library: str | None, device: str, notes: list[str]) -> str:
    """The library path the configuration names: the user's (absolute), else this package's."""
    from opbridge._library import library_info, library_path

    if library is not None:
        if not Path(library).is_absolute():
            raise TritonError(f"--library {library!r} must be an absolute path: Triton loads the library from its "
                              "own working directory")
        return library
    path = str(Path(library_path()).resolve())
    if device == "gpu" and not library_info().get("cuda"):
        notes.append(f"{path} has no CUDA kernels (a CPU build): on the GPU instance every opbridge node would run "
                     "on the CPU; name a CUDA build of the library with --library")
    return path


def _triton_type(value) -> str:
    if value.type not in TRITON_TYPES:
        raise TritonError(f"{value.kind} {value.name!r} has type {value.type}, which Triton's ONNX Runtime backend "
                          f"does not take (it takes tensors of {', '.join(t[7:-1] for t in TRITON_TYPES)})")
    return TRITON_TYPES[value.type]


def _check_ranks(graph, values) -> None:
    """ORT reports an empty shape both for a scalar and for a value of unknown rank: the file's
    declaration (`graph`, the model's onnx.GraphProto) tells them apart (Triton needs every rank)."""
    declared = {v.name: v for v in list(graph.input) + list(graph.output)}
    for v in values:
        if v.shape:
            continue
        proto = declared.get(v.name)
        known = proto is not None and proto.type.HasField("tensor_type") and proto.type.tensor_type.HasField("shape")
        if not known:
            raise TritonError(f"{v.kind} {v.name!r} has no known rank (the file declares no shape and ONNX Runtime "
                              "infers none): Triton needs the dims of every input and output; declare its shape")


def shared_batch_axis(values) -> tuple[bool, str]:
    """Whether every input and output (check.Value) has one shared symbolic first axis, along which
    requests can be concatenated and outputs split (Triton's batch, Ray Serve's), and why not."""
    firsts = {}
    for v in values:
        if not v.shape:
            return False, f"{v.kind} {v.name!r} is a scalar"
        firsts[v.name] = v.shape[0]
    for v in values:
        if not isinstance(v.shape[0], str):
            what = "dynamic without a name" if v.shape[0] is None else f"fixed at {v.shape[0]}"
            return False, (f"the first axis of {v.kind} {v.name!r} is {what}; dynamic batching needs one shared "
                           "symbolic first axis on every input and output")
    if len(set(firsts.values())) > 1:
        listed = ", ".join(f"{n!r} {s!r}" for n, s in firsts.items())
        return False, (f"the first axes are different dimensions ({listed}): dynamic batching needs one shared "
                       "first axis on every input and output")
    return True, ""


def _dims(shape) -> tuple:
    return tuple(d if isinstance(d, int) and d >= 0 else -1 for d in shape)


def _quote(text: str) -> str:
    """A protobuf text-format string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _external_data(proto) -> list[str]:
    """The files holding the external tensor data of `proto` (an onnx.ModelProto), relative to its
    folder."""
    found = []
    for tensor in onnx.external_data_helper._get_all_tensors(proto):
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            location = next(e.value for e in tensor.external_data if e.key == "location")
            if location not in found:
                found.append(location)
    return found
