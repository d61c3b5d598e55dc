"""The project's fuzz test: random one-node models of every registered identity, run in ORT.

    python -m opbridge fuzz --cases 3000 --seed 0        # a moderate run
    python -m opbridge fuzz --cases 100000               # the long run

Needs only numpy, onnx and onnxruntime (no PyTorch), and the built library.

**Cases.** For every identity of the manifest (`manifest.identities()`, with the identity's own
signature), case i of seed S is generated from its own random stream (seed, crc32(identity), i):
the same case whatever other identities or case counts are chosen. A case is one node in the graph
mmcv, mmdeploy and opbridge write (opset imports for "" and the op's domain, IR version 8, graph
inputs typed, outputs left for ORT to infer). Attributes take their default, an allowed value, a
sane random value, a boundary value (0, -1, 2^31, 2^32 + 1, 2^40, 2^62, INT64_MAX, INT64_MIN, NaN,
+-inf, -0, +-1e30, empty and wrong-length lists), a value of the wrong kind; a required attribute
may be left out and an unknown one added. Input shapes follow the manifest's shape text, with
symbols shared between inputs (the N of "[N, C, H, W]" and the one of the offset are the same;
"[...]", any rank, is a rank from 0 to 5);
sometimes one symbol is huge and another 0 in every tensor that has the huge one, inputs and
outputs ([1, 1, 0, 2^40] has no elements and the output does not grow with it); then sometimes an
input gets an axis of 0, a huge axis next to a 0 axis (never one that sizes an output: a huge
output can be legitimate), a wrong rank or a wrong last dim. Dtypes are the declared ones (for the type parameter T, one of
the op's dtypes), sometimes another. Values are
plausible (boxes with x1 < x2, batch indices in range, grids in [-1, 1]) or boundary (0, -1,
+-1e30, NaN, +-inf, denormals, out-of-range indices). Optional inputs are present or absent,
variadic inputs get 1 to 4 tensors. Tensors have at most 2^16 elements unless an axis is 0, so
that cases are fast: work beyond that comes only from attributes, and the op must refuse work or
output budgets that are too large by itself.

**Isolation.** Each case runs in a worker process (at most `workers` of them), with
RLIMIT_AS at its start-up size plus 4 GiB, so that a runaway allocation fails rather than taking
the machine. A worker that dies while running a case (signal, abort, bad_alloc) is a crash of
that case; one that takes longer than `timeout` seconds is killed, a hang. Either way a new worker
takes over. Workers are also replaced every `recycle` cases, so that what sessions leak does not
add up to the memory limit.

**Outcomes** (strict; `<domain>::<OpType>:` is the prefix every opbridge error carries):

- ok: the session was created and ran, and every index output (keep, inds, selected, matches,
  labels, index, indices) is in range of the inputs.
- error: a clean error, an exception during session creation or run whose message contains the
  identity prefix. An exception without the prefix counts as clean only when the generator made
  the model malformed in a way ORT checks for every op before the op is involved: a wrong number
  of inputs (a missing required input, an extra one). Nothing else is excused, so a wrong input
  dtype that ORT's own type check rejects, without naming the op, is unprefixed.
- oom: a clean (prefixed) error that reports a failed allocation ("out of memory", "Failed to
  allocate", bad_alloc). Reported separately: with at most 2^16 input elements, the op was asked
  for an output or work budget it should have refused before allocating. Not a failure by
  itself, as an output that large can be legitimate.
- crash, hang: as above.
- unprefixed: an error without the identity prefix in a well-formed model (an allocation failure
  ORT reports without the prefix included).
- bad_index: ok, but an index output is out of range.

The run fails (`Report.failed`, the CLI's exit code) on any crash, hang, unprefixed or bad_index.
Crashes, hangs and the first few cases of every other bad kind per identity keep a reproducer in
the output folder: `<kind>-<domain>.<OpType>-<case>.onnx`, `.npz` (the feeds) and `.txt` (one line
describing the case, then the message). `replay(path)` runs one in the current process.
"""

from __future__ import annotations

import collections
import dataclasses
import math
import multiprocessing
import multiprocessing.connection
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from opbridge import manifest

OUTCOMES = ("ok", "error", "oom", "crash", "hang", "unprefixed", "bad_index")
BAD = ("crash", "hang", "unprefixed", "bad_index")  # the outcomes that fail a run
REPORTED = ("oom", "crash", "hang", "unprefixed", "bad_index")  # outcomes with examples and reproducers

MAX_ELEMENTS = 2**16  # per tensor, unless an axis is 0
MEMORY_BUDGET = 4 << 30  # address space a worker may add to its start-up size
INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)

INT_BOUNDARY = [0, -1, 1, 2**31 - 1, 2**31, -(2**31), 2**32 + 1, 2**40, 2**62, INT64_MAX, INT64_MIN]
FLOAT_BOUNDARY = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1e30, -1e30, 1e-40, -1.0, 2.0]
STRING_BOUNDARY = ["", "AVG", "garbage", "x" * 1000, "max\x00"]
INTS_BOUNDARY = [[], [0], [0, 0], [-1, -1], [1, 2, 3], [1, 1, 1, 1, 1], [2**31, 2**31], [2**32, 2**32],
                 [2**32 + 1, 1], [2**62, 2**62], [INT64_MAX, 1], [INT64_MIN, INT64_MIN], [0, 2**40]]
FLOATS_BOUNDARY = [[], [math.nan], [math.inf], [0.0], [-1.0], [1e30, 1e30], [1e-40], [-0.0, 1.0],
                   [1.0] * 7]
# Large axes that cost nothing next to an axis of 0.
HUGE_AXES = [2**24 + 1, 2**31, 2**32 + 1, 2**40]
# Tensor values that break naive code.
SPECIAL_VALUES = [0.0, -0.0, -1.0, 1.0, 1e30, -1e30, math.nan, math.inf, -math.inf, 1e-40, 2.0**31, 2.0**63]
INDEX_OUT_OF_RANGE = [-1, -2, 2**31, 2**32 + 1, INT64_MAX, INT64_MIN]
OTHER_DTYPES = ["float64", "float16", "int64", "int32", "uint8", "bool", "float32"]
ONNX_ATTRIBUTE_TYPES = {
    "int": onnx.AttributeProto.INT, "float": onnx.AttributeProto.FLOAT, "string": onnx.AttributeProto.STRING,
    "ints": onnx.AttributeProto.INTS, "floats": onnx.AttributeProto.FLOATS,
}
# Values of each kind, for attributes given the wrong kind.
WRONG_KIND_VALUES = {"int": [2, -1], "float": [1.5, 2.0, math.nan], "string": ["1", "avg"],
                     "ints": [[1, 2], [1]], "floats": [[1.0, 2.0], [0.5]]}
ALLOCATION_FAILURES = ("out of memory", "failed to allocate", "bad_alloc", "memoryerror")


# --- cases -------------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    """One generated model with its feeds. attributes: (name, kind, value), in node order; inputs:
    (name, array) where name "" is an absent optional input (array None)."""

    identity: str
    index: int
    seed: int
    attributes: list
    inputs: list
    outputs: list
    declared: str  # graph input shapes: "exact", "symbolic" or "none"
    threads: int
    opset: int
    notes: list  # the mutations applied, for the description
    structural: bool = False  # wrong input count: ORT may reject the model without naming the op
    hook: str | None = None  # tests only: "abort" or "sleep" in the worker instead of running

    def model(self) -> onnx.ModelProto:
        domain, op_type = self.identity.split("::")
        node = helper.make_node(op_type, [name for name, _ in self.inputs], self.outputs, domain=domain)
        node.attribute.extend(_attribute_proto(*a) for a in self.attributes)
        graph_inputs = []
        for name, array in self.inputs:
            if not name:
                continue
            if self.declared == "exact":
                shape = list(array.shape)
            elif self.declared == "symbolic":
                shape = [f"{name}_d{i}" for i in range(array.ndim)]
            else:
                shape = None
            elem = helper.np_dtype_to_tensor_dtype(array.dtype)
            graph_inputs.append(helper.make_tensor_value_info(name, elem, shape))
        graph = helper.make_graph([node], "fuzz", graph_inputs,
                                  [helper.make_value_info(n, onnx.TypeProto()) for n in self.outputs])
        # An op in the default domain (mmcv's TensorRT-renamed MMCVInstanceNormalization) uses its opset.
        opsets = [helper.make_opsetid("", self.opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
        return helper.make_model(graph, opset_imports=opsets, ir_version=8)

    def feeds(self) -> dict:
        return {name: array for name, array in self.inputs if name}

    def describe(self) -> str:
        attrs = ", ".join(f"{n}={_short(v)}" for n, _, v in self.attributes)
        ins = ", ".join(f"{n or '<absent>'}:{'' if a is None else _dtype_shape(a)}" for n, a in self.inputs)
        notes = "; ".join(self.notes) or "plain"
        return (f"{self.identity} seed {self.seed} case {self.index}: attrs {{{attrs}}} inputs ({ins}) "
                f"outputs {len(self.outputs)} threads {self.threads} declared {self.declared} [{notes}]")


def _attribute_proto(name: str, kind: str, value) -> onnx.AttributeProto:
    """The attribute as written, of exactly this kind (helper.make_attribute infers the kind, and
    needs one for an empty list)."""
    proto = onnx.AttributeProto(name=name, type=ONNX_ATTRIBUTE_TYPES[kind])
    if kind == "int":
        proto.i = int(value)
    elif kind == "float":
        proto.f = float(value)
    elif kind == "string":
        proto.s = value.encode()
    elif kind == "ints":
        proto.ints.extend(int(v) for v in value)
    else:
        proto.floats.extend(float(v) for v in value)
    return proto


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dtype_shape(array: np.ndarray) -> str:
    return f"{array.dtype}{list(array.shape)}"


def cases(seed: int, count: int, identities: list[str] | None = None):
    """`count` cases, round-robin over the identities (default: every identity of the manifest)."""
    identities = identities or [f"{d}::{n}" for d, n, _ in manifest.identities()]
    for i in range(count):
        identity = identities[i % len(identities)]
        yield make_case(seed, identity, i // len(identities))


def make_case(seed: int, identity: str, index: int) -> Case:
    """Case `index` of `identity` for `seed`: the same whatever else is generated."""
    rng = np.random.default_rng([seed, zlib.crc32(identity.encode()), index])
    op = manifest.find(identity)
    signature = op.signature(identity)
    notes = []
    attributes = _attributes(signature.attributes, rng, notes)
    attr_values = {name: value for name, _, value in attributes}
    symbols = _Symbols(rng, op.kernel, attr_values, signature, notes)
    inputs = []
    t_dtype = None
    for tensor in signature.inputs:
        if tensor.dtype == "T":  # the op's type parameter: one of its dtypes, the same for every T input
            if t_dtype is None:  # (numpy has no bfloat16: ORT's Python API cannot feed it)
                t_dtype = str(rng.choice([d for d in op.dtypes if d != "bfloat16"]))
            tensor = dataclasses.replace(tensor, dtype=t_dtype)
        elif " or " in tensor.dtype:  # an input taking either of two dtypes ("int64 or int32")
            tensor = dataclasses.replace(tensor, dtype=str(rng.choice(tensor.dtype.split(" or "))))
        if tensor.optional and rng.random() < 0.4:
            inputs.append(("", None))
            continue
        count = int(rng.integers(1, 5)) if tensor.variadic else 1
        for k in range(count):
            name = f"{tensor.name}{k}" if tensor.variadic else tensor.name
            inputs.append((name, _input(tensor, name, k, symbols, rng, notes)))
        if tensor.variadic:
            _match_scales(attributes, count, rng)
    # A trailing absent optional input may be written as "" or left out: both are valid ONNX.
    while inputs and inputs[-1][0] == "" and rng.random() < 0.5:
        inputs.pop()
    structural = rng.random() < 0.03 and _break_arity(signature.inputs, inputs, rng, notes)
    _mutate_dtype(inputs, rng, notes)
    outputs = [f"out_{t.name}" for t in signature.outputs if not t.optional or rng.random() < 0.5]
    return Case(
        identity=identity, index=index, seed=seed, attributes=attributes, inputs=inputs, outputs=outputs,
        declared=str(rng.choice(["exact", "symbolic", "none"])), threads=int(rng.integers(1, 3)),
        opset=int(rng.choice([11, 17])), notes=notes, structural=structural,
    )


def _break_arity(declared, inputs: list, rng, notes) -> bool:
    """Gives the node fewer inputs than it requires or more than it takes, which ORT rejects for
    every op before ours is involved; False if neither is possible."""
    required = max((i + 1 for i, t in enumerate(declared) if not t.optional), default=0)
    variadic = any(t.variadic for t in declared)
    if required and (variadic or rng.random() < 0.5):
        del inputs[int(rng.integers(required - 1 if variadic else 0, required)):]
        notes.append(f"{len(inputs)} inputs, {required} required")
        return True
    if not variadic:
        inputs.extend([("", None)] * (len(declared) - len(inputs)))
        inputs.append(("extra", rng.standard_normal(3).astype(np.float32)))
        notes.append("an input too many")
        return True
    return False


def _attributes(declared, rng, notes) -> list:
    result = []
    for attr in declared:
        roll = rng.random()
        if attr.required and roll < 0.03:
            notes.append(f"required {attr.name} left out")
            continue
        if roll < 0.1:
            value = _boundary(attr.type, rng)
            notes.append(f"boundary {attr.name}")
            result.append((attr.name, attr.type, value))
        elif roll < 0.12:
            kind = str(rng.choice([k for k in WRONG_KIND_VALUES if k != attr.type]))
            values = WRONG_KIND_VALUES[kind]
            notes.append(f"{attr.name} as {kind}")
            result.append((attr.name, kind, values[int(rng.integers(len(values)))]))
        elif roll < 0.5 and not attr.required:
            result.append((attr.name, attr.type, attr.default))
        elif attr.allowed and roll < 0.95:
            result.append((attr.name, attr.type, attr.allowed[int(rng.integers(len(attr.allowed)))]))
        else:
            result.append((attr.name, attr.type, _sane(attr, rng)))
    if rng.random() < 0.03:
        kind = str(rng.choice(list(WRONG_KIND_VALUES)))
        notes.append("unknown attribute")
        result.append(("fuzz_unknown", kind, WRONG_KIND_VALUES[kind][0]))
    order = rng.permutation(len(result))  # attribute order must not matter
    return [result[i] for i in order]


def _boundary(kind: str, rng):
    table = {"int": INT_BOUNDARY, "float": FLOAT_BOUNDARY, "string": STRING_BOUNDARY,
             "ints": INTS_BOUNDARY, "floats": FLOATS_BOUNDARY}[kind]
    return table[int(rng.integers(len(table)))]


def _sane(attr, rng):
    """A random value of the attribute's kind in the range its default suggests."""
    default = attr.default
    if attr.type == "int" and attr.name == "dim":  # an axis (cummax): mostly in range of ranks 0-5
        return int(rng.integers(-3, 4))
    if attr.type == "int":
        if attr.allowed:
            return int(attr.allowed[int(rng.integers(len(attr.allowed)))])
        if default is not None and rng.random() < 0.5:
            return default  # counts such as groups are mostly 1: other values often just fail to divide
        top = max(8, 2 * abs(default)) if default is not None else 8
        low = -1 if default is not None and default <= 0 else 1
        return int(rng.integers(low, top + 1)) if rng.random() < 0.9 else int(rng.integers(-2, 3))
    if attr.type == "float":
        if default is not None and default > 1:
            return float(rng.uniform(0, 2 * default))
        return float(np.float32(rng.uniform(0, 1)))
    if attr.type == "string":
        return attr.allowed[int(rng.integers(len(attr.allowed)))] if attr.allowed else "x"
    if attr.type == "ints":
        length = len(default) if default and rng.random() < 0.9 else int(rng.choice([1, 1, 2, 4]))
        base = 0 if "pad" in attr.name else 1
        return [int(rng.integers(base, base + 3)) for _ in range(length)]
    if attr.name == "scale_factor":  # a resize's (height, width) factors (BicubicInterpolate)
        length = 2 if rng.random() < 0.9 else int(rng.choice([1, 3]))
        return [float(np.float32(rng.uniform(0.5, 4))) for _ in range(length)]
    # floats (MultiScaleRoIAlign's spatial_scales: 1 / stride, finest first; featmap_strides)
    length = int(rng.integers(1, 5))
    first = int(rng.integers(0, 4))
    return _pyramid_floats(attr.name, first, length)


def _match_scales(attributes, count, rng) -> None:
    """A floats attribute with one value per tensor of a variadic input (spatial_scales) gets that
    many values, usually: a mismatch is the exception to test, not the rule."""
    for i, (name, kind, value) in enumerate(attributes):
        if kind == "floats" and isinstance(value, list) and value and all(v > 0 for v in value) \
                and rng.random() < 0.8:
            first = int(rng.integers(0, 4))
            attributes[i] = (name, kind, _pyramid_floats(name, first, count))


def _pyramid_floats(name: str, first: int, count: int) -> list[float]:
    """A pyramid's values per level, finest first: strides 2^k for a "strides" attribute, else
    scales 2^-k."""
    sign = 1 if name.endswith("strides") else -1
    return [2.0 ** (sign * (first + k)) for k in range(count)]


class _Symbols:
    """Sizes of the symbols of the manifest's shape texts, drawn once per case so that inputs agree."""

    def __init__(self, rng, kernel: str, attrs: dict, signature=None, notes=None):
        self.rng, self.kernel, self.attrs, self.values, self.forced = rng, kernel, attrs, {}, {}
        self.alternative = None  # the shape alternative this case takes ("... or ..." shape texts)
        # Symbols that size an output: huge values of them ask for a huge output, which is legitimate.
        self.in_outputs = {a for t in signature.outputs for a in _plain_symbols(t.shape)} if signature else set()
        if kernel == "trt_batched_nms" and _small_int(attrs.get("num_classes")):
            self.values["C"] = attrs["num_classes"]
            self.values["L"] = int(rng.choice([1, attrs["num_classes"]]))
        if kernel == "group_norm" and _small_int(attrs.get("num_groups")) and attrs["num_groups"]:
            # Channels divisible by the groups, mostly, so that cases reach the kernel.
            self.values["C"] = attrs["num_groups"] * int(rng.integers(1, 4))
        groups, deform_groups = attrs.get("groups", 1), attrs.get("deform_groups", 1)
        if kernel == "deform_conv" and _small_int(groups) and _small_int(deform_groups) and groups and deform_groups:
            # Channels divisible by both kinds of groups, mostly, so that cases reach the kernel.
            self.values["C"] = math.lcm(groups, deform_groups) * int(rng.integers(1, 3))
            self.values["C_out"] = groups * int(rng.integers(1, 4))
        self.level_shapes = None
        if kernel == "multi_scale_deformable_attention":
            # A pyramid of 1-4 small levels, S their total size, so that cases reach the kernel.
            levels = int(rng.integers(1, 5))
            self.level_shapes = [(int(rng.integers(1, 9)), int(rng.integers(1, 9))) for _ in range(levels)]
            self.values["L"] = levels
            self.values["S"] = sum(h * w for h, w in self.level_shapes)
        if signature and rng.random() < 0.06:
            self._huge_next_to_zero(signature, notes)

    def _huge_next_to_zero(self, signature, notes) -> None:
        """One symbol huge and another 0, where every tensor with the huge one also has the 0 one:
        shapes that agree with each other and have no elements, inputs and outputs, so that any
        large allocation or work is the op's size arithmetic going wrong (NMSMatch's scores
        [B, C, 0] with C = 2^32, RoIAlign's input [N, C, 0, 2^40])."""
        shapes = [set(_plain_symbols(t.shape)) - set(self.attrs) for t in signature.inputs + signature.outputs]
        names = sorted(set().union(*shapes) - {"kh", "kw", "H_out", "W_out"})  # those are derived
        pairs = [(h, z) for h in names for z in names if h != z and all(z in s for s in shapes if h in s)]
        if not pairs:
            return
        huge, zero = pairs[int(self.rng.integers(len(pairs)))]
        self.forced = {huge: HUGE_AXES[int(self.rng.integers(len(HUGE_AXES)))], zero: 0}
        notes.append(f"{huge} = {self.forced[huge]}, {zero} = 0")

    def size(self, name: str, variadic_index: int = 0) -> int:
        if name in self.forced:
            return self.forced[name]
        key = f"{name}#{variadic_index}" if name.endswith("_l") else name  # per pyramid level
        if key not in self.values:
            if self.kernel == "deform_conv" and name in ("H_out", "W_out"):
                self.values[key] = self._conv_out(name[0])
            elif name in ("kh", "kw"):  # kernel sizes as convolutions have them
                self.values[key] = int(self.rng.choice([1, 1, 2, 3, 3, 5])) if self.rng.random() > 0.03 else 0
            else:
                self.values[key] = self._draw()
        return self.values[key]

    def _draw(self) -> int:
        roll = self.rng.random()
        if roll < 0.06:
            return 0
        if roll < 0.25:
            return 1
        if roll < 0.8:
            return int(self.rng.integers(2, 7))
        return int(self.rng.integers(7, 65))

    def _conv_out(self, axis: str) -> int:
        """Deformable convolution's output size from the case's attributes, when they are sane."""
        i = 0 if axis == "H" else 1
        stride, pad, dilation = (self._pair(self.attrs.get(n, d), i) for n, d in
                                 (("stride", [1, 1]), ("padding", [0, 0]), ("dilation", [1, 1])))
        kernel_size = self.size("kh" if axis == "H" else "kw")
        if stride is None or pad is None or dilation is None or stride < 1:
            return self._draw()
        return max(0, (self.size(axis) + 2 * pad - dilation * (kernel_size - 1) - 1) // stride + 1)

    @staticmethod
    def _pair(value, i):
        if isinstance(value, int) and _small_int(value):
            return value
        if isinstance(value, list) and len(value) in (1, 2, 4) and all(_small_int(v) for v in value):
            return value[0] if len(value) == 1 else value[i] if len(value) == 2 else value[2 * i]
        return None


def _plain_symbols(shape: str) -> list[str]:
    """The axes of a shape text that are a bare symbol: N, C, H, W of "[N, C / groups, H, W]" (of
    every alternative of "[N, C, H, W] or [N, C, D, H, W]")."""
    axes = [a.strip() for alternative in shape.split(" or ") for a in alternative.strip("[]").split(",")]
    return [a for a in axes if re.fullmatch(r"[A-Za-z_]\w*", a)]


def _small_int(value) -> bool:
    return isinstance(value, int) and 0 <= value <= 64


def _dims(tensor, variadic_index, symbols: _Symbols, attrs: dict) -> list[int]:
    """The shape text "[N, 2 * deform_groups * kh * kw, H_out, W_out]" evaluated for this case;
    "[...]" (any rank) is a rank from 0 to 5 with sizes drawn like a symbol's."""
    if tensor.shape == "[...]":
        return [symbols._draw() for _ in range(int(symbols.rng.integers(0, 6)))]
    shape = _chosen_shape(tensor.shape, symbols)
    dims = []
    for text in shape.strip("[]").split(","):
        text = text.strip()
        if re.fullmatch(r"\d+", text):
            dims.append(int(text))
        elif re.fullmatch(r"\w+", text) and text not in attrs:
            dims.append(symbols.size(text, variadic_index))
        else:
            dims.append(_expression(text, symbols, attrs))
    return dims


def _chosen_shape(shape: str, symbols: _Symbols) -> str:
    """The alternative of a shape text "[N, C, H, W] or [N, C, D, H, W]" this case takes: drawn once
    per case, the same for every tensor (the grid sampler's input and grid agree)."""
    if " or " not in shape:
        return shape
    alternatives = shape.split(" or ")
    if symbols.alternative is None:
        symbols.alternative = int(symbols.rng.integers(0, len(alternatives)))
    return alternatives[min(symbols.alternative, len(alternatives) - 1)]


def _expression(text: str, symbols: _Symbols, attrs: dict) -> int:
    values = {}
    for name in re.findall(r"[A-Za-z_]\w*", text):
        if name in attrs:
            if not (_small_int(attrs[name]) and attrs[name] >= 1):
                return symbols._draw()  # an attribute the case made odd: any size
            values[name] = attrs[name]
        else:
            values[name] = symbols.size(name)
    try:
        value = eval(text.replace("/", "//"), {"__builtins__": {}}, values)  # the manifest's own text
    except ZeroDivisionError:
        return symbols._draw()
    return value if 0 <= value <= 4096 else symbols._draw()


def _input(tensor, name, variadic_index, symbols: _Symbols, rng, notes) -> np.ndarray:
    dims = _dims(tensor, variadic_index, symbols, symbols.attrs)
    roll = rng.random()
    if roll < 0.04 and dims:
        dims[int(rng.integers(len(dims)))] = 0
        notes.append(f"{name} zero axis")
    elif roll < 0.07 and len(dims) >= 2:
        # The huge axis is not one that sizes an output (a huge output can be legitimate); an
        # any-rank input's axes may be huge (an output of its shape has the 0 axis too).
        axes = ([""] * len(dims) if tensor.shape == "[...]"
                else [a.strip() for a in _chosen_shape(tensor.shape, symbols).strip("[]").split(",")])
        zero = int(rng.integers(len(dims)))
        candidates = [i for i in range(len(dims)) if i != zero and axes[i] not in symbols.in_outputs]
        if candidates:
            dims[zero] = 0
            dims[candidates[int(rng.integers(len(candidates)))]] = HUGE_AXES[int(rng.integers(len(HUGE_AXES)))]
            notes.append(f"{name} huge axis next to 0")
    elif roll < 0.09:
        if dims and rng.random() < 0.5:
            dims.pop(int(rng.integers(len(dims))))
        else:
            dims.insert(int(rng.integers(len(dims) + 1)), int(rng.integers(1, 4)))
        notes.append(f"{name} wrong rank")
    elif roll < 0.11 and dims:
        dims[-1] = max(0, dims[-1] + int(rng.choice([-1, 1])))
        notes.append(f"{name} wrong last dim")
    dims = _cap(dims)
    values = _values(tensor, name, dims, symbols, rng, notes)
    with np.errstate(all="ignore"):  # NaN and infinities of special values become 0 for integers
        return np.asarray(values, dtype=tensor.dtype)  # an array also for rank 0 (numpy draws a scalar)


def _cap(dims: list[int]) -> list[int]:
    """Halves the largest axis until the tensor has at most MAX_ELEMENTS; with an axis of 0, until
    the other axes multiply to at most 2^48 (numpy refuses shapes whose nominal size overflows)."""
    def too_big():
        if 0 in dims:
            return math.prod(d for d in dims if d) > 2**48
        return math.prod(dims) > MAX_ELEMENTS

    while too_big():
        largest = int(np.argmax(dims))
        dims[largest] = dims[largest] // 2
    return dims


def _values(tensor, name: str, dims: list[int], symbols: _Symbols, rng, notes) -> np.ndarray:
    """Plausible values for the input's role, then sometimes boundary values in some elements."""
    shape = tuple(dims)
    if name in ("spatial_shapes", "level_start_index") and symbols.level_shapes is not None:
        return _pyramid_levels(name, shape, symbols, rng, notes)
    if tensor.dtype in ("int64", "int32"):
        if name == "image_size":
            values = rng.integers(0, 65, size=shape)
        else:
            values = rng.integers(0, 4, size=shape)  # categories
        if rng.random() < 0.1 and values.size:
            _scatter(values, INDEX_OUT_OF_RANGE, rng)
            notes.append(f"{name} out-of-range values")
        return values
    last = dims[-1] if dims else 0
    if name in ("rois", "boxes") and last in (4, 5):
        values = _boxes(shape, name, symbols, rng)
    elif name == "grid":
        values = rng.uniform(-1.2, 1.2, size=shape)
    elif name == "sampling_locations":  # normalized (x, y): mostly inside, some past the edges
        values = rng.uniform(-0.2, 1.2, size=shape)
    elif name in ("scores", "mask", "masks", "iou_threshold", "score_threshold", "attention_weights"):
        values = rng.uniform(0, 1, size=shape)
    elif name == "offset":
        values = rng.normal(0, 2, size=shape)
    elif name == "num_groups":  # the ONNX tutorial's group count, a float tensor: small integers, mostly
        values = rng.integers(1, 4, size=shape).astype(np.float64)
        if rng.random() < 0.3:
            values *= rng.choice([0.5, -1.0, 0.0, 1e30])  # in place: a 0-d array stays an array
    else:
        values = rng.normal(0, 1, size=shape)
    if rng.random() < 0.12 and values.size:
        _scatter(values, SPECIAL_VALUES, rng)
        notes.append(f"{name} special values")
    return values


def _pyramid_levels(name: str, shape: tuple, symbols: _Symbols, rng, notes) -> np.ndarray:
    """Multi-scale deformable attention's (H, W) per level or each level's first row, from the
    case's pyramid when the shape fits it (else small integers); sometimes one value is off."""
    sizes = [h * w for h, w in symbols.level_shapes]
    if name == "spatial_shapes":
        right = np.array(symbols.level_shapes, np.int64).reshape(-1, 2)
    else:
        right = np.cumsum([0] + sizes[:-1]).astype(np.int64)
    values = right if right.shape == shape else rng.integers(0, 9, size=shape)
    if rng.random() < 0.1 and values.size:
        values = values.copy()
        _scatter(values, INDEX_OUT_OF_RANGE + [0, 1], rng)
        notes.append(f"{name} off values")
    return values


def _boxes(shape, name, symbols: _Symbols, rng) -> np.ndarray:
    """(x1, y1, x2, y2) boxes with x1 <= x2 inside a map of about 32 px; RoIs lead with a batch
    index in range (sometimes out of range); rotated boxes are (cx, cy, w, h, theta)."""
    extent = 32.0
    values = np.empty(shape)
    columns = shape[-1]
    rotated = name == "boxes" and columns == 5
    first = 1 if (name == "rois" and columns == 5) else 0
    if rotated:
        values[..., 0:2] = rng.uniform(0, extent, size=shape[:-1] + (2,))
        values[..., 2:4] = rng.uniform(0, extent / 2, size=shape[:-1] + (2,))
        values[..., 4] = rng.uniform(-math.pi, math.pi, size=shape[:-1])
        return values
    corner = rng.uniform(0, extent, size=shape[:-1] + (2,))
    size = rng.uniform(0, extent / 2, size=shape[:-1] + (2,))
    values[..., first:first + 2] = corner
    values[..., first + 2:first + 4] = corner + size
    if first:
        batch = max(symbols.size("N"), 1)  # the feature map's batch, shared with the other inputs
        values[..., 0] = rng.integers(0, batch, size=shape[:-1])
        if rng.random() < 0.1 and values.size:
            rows = values[..., 0].reshape(-1)
            rows[int(rng.integers(rows.size))] = float(rng.choice([-1, batch, batch + 1, -0.5, 2.0**31, 1e30, math.nan]))
            values[..., 0] = rows.reshape(shape[:-1])
    return values


def _scatter(values: np.ndarray, specials: list, rng) -> None:
    """Replaces a random share of the elements by values drawn from `specials`, in place."""
    flat = values.reshape(-1)
    count = max(1, int(flat.size * rng.uniform(0.05, 1.0)))
    where = rng.choice(flat.size, size=count, replace=False)
    flat[where] = rng.choice(np.array(specials, dtype=values.dtype), size=count)


def _mutate_dtype(inputs: list, rng, notes) -> None:
    """Sometimes one present input gets another dtype (NaN and infinities become 0 for integers)."""
    present = [i for i, (name, _) in enumerate(inputs) if name]
    if not present or rng.random() >= 0.06:
        return
    i = present[int(rng.integers(len(present)))]
    name, array = inputs[i]
    dtype = str(rng.choice([d for d in OTHER_DTYPES if d != str(array.dtype)]))
    with np.errstate(all="ignore"):
        if np.dtype(dtype).kind in "iub":
            array = np.clip(np.nan_to_num(array.astype(np.float64)), -1e9, 1e9)
        inputs[i] = (name, np.asarray(array, dtype=dtype))  # np.clip makes a rank-0 array a scalar
    notes.append(f"{name} as {dtype}")


# --- the index outputs' ranges ------------------------------------------------------------------


def _index_bounds(identity: str, output: str, feeds: dict) -> list | None:
    """Per column, the half-open range of an index output's values; None: not an index output."""
    if output == "out_indices" and "input" in feeds:  # cummax: a position along one axis
        return [(0, max(feeds["input"].shape, default=1))]
    boxes = feeds.get("boxes")
    if boxes is None:
        return None
    if output in ("out_keep", "out_inds"):
        return [(0, boxes.shape[0])] if boxes.ndim >= 1 else None
    scores = feeds.get("scores")
    if output == "out_selected" and scores is not None and scores.ndim == 3:
        return [(0, scores.shape[0]), (0, scores.shape[1]), (0, scores.shape[2])]
    if output == "out_matches" and scores is not None and scores.ndim == 3:
        return [(0, scores.shape[0]), (0, scores.shape[1]), (0, scores.shape[2]), (0, scores.shape[2])]
    if output == "out_labels" and scores is not None and scores.ndim == 3:
        return [(-1, scores.shape[2])]
    if output == "out_index" and boxes.ndim == 4:
        return [(-1, boxes.shape[1] * boxes.shape[2])]
    return None


def _index_problem(identity: str, names: list, results: list, feeds: dict) -> str | None:
    for name, value in zip(names, results):
        bounds = _index_bounds(identity, name, feeds)
        if bounds is None or not isinstance(value, np.ndarray) or value.size == 0:
            continue
        if len(bounds) == 1:
            columns = value.reshape(-1, 1)
        elif value.ndim == 2 and value.shape[1] == len(bounds):
            columns = value
        else:
            return f"{name} has shape {list(value.shape)}, expected rows of {len(bounds)}"
        for c, (low, high) in enumerate(bounds):
            bad = (columns[:, c] < low) | (columns[:, c] >= high)
            if bad.any():
                return f"{name} column {c} has {columns[bad.nonzero()[0][0], c]} outside [{low}, {high})"
    return None


# --- running ------------------------------------------------------------------------------------


def classify(identity: str, message: str, structural: bool) -> str:
    """The outcome of an exception message (see the module docstring)."""
    if f"{identity}:" in message:
        return "oom" if any(p in message.lower() for p in ALLOCATION_FAILURES) else "error"
    return "error" if structural else "unprefixed"


def _run_case(identity: str, model: bytes, feeds: dict, outputs: list, threads: int, structural: bool,
              hook: str | None) -> tuple[str, str]:
    """Runs one case in this process: (outcome, message)."""
    import onnxruntime as ort

    from opbridge._library import create_session

    if hook == "abort":
        os.abort()
    if hook == "sleep":
        time.sleep(3600)
    _wait_for_library()
    options = ort.SessionOptions()
    options.log_severity_level = 4  # ORT logs every failing case as an error: the report has them
    stage = "session"
    try:
        session = create_session(model, intra_op_threads=threads, options=options)
        stage = "run"
        results = session.run(None, feeds)
    except Exception as e:  # ORT raises its own pybind exception types
        message = f"{stage}: {e}"
        return classify(identity, message, structural), message
    problem = _index_problem(identity, outputs, results, feeds)
    return ("bad_index", problem) if problem else ("ok", "")


def _wait_for_library(seconds: float = 300.0) -> None:
    """The library can be missing for a moment while build/ is being rebuilt: waits for it rather
    than counting the cases of that moment as errors."""
    from opbridge._library import library_path

    deadline = time.monotonic() + seconds
    while True:
        try:
            library_path()
            return
        except FileNotFoundError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)


def _worker_main(fd: int, memory_budget: int) -> None:
    """A worker: runs the cases the parent sends over the socket `fd`, one at a time, until it sends None."""
    import resource

    conn = multiprocessing.connection.Connection(fd)

    import onnxruntime  # imported before the limit is set: its size is not the op's

    onnxruntime.set_default_logger_severity(4)

    from opbridge._library import create_session  # noqa: F401

    match = re.search(r"VmSize:\s+(\d+) kB", Path("/proc/self/status").read_text())
    limit = int(match.group(1)) * 1024 + memory_budget
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    conn.send("ready")
    while (message := conn.recv()) is not None:
        conn.send(_run_case(*message))


class _Worker:
    """A worker process and its connection. A plain subprocess rather than multiprocessing's spawn,
    which would re-run the caller's main script in every worker."""

    def __init__(self, memory_budget: int, startup_timeout: float = 120.0):
        self.conn, child = multiprocessing.Pipe()  # a socket pair on POSIX
        package_root = str(Path(__file__).resolve().parents[1])  # this copy of opbridge, not another
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])))
        # What the worker writes to stderr (an abort's "terminate called after ...") goes to a file,
        # so that a crash can quote what its case made it write.
        handle, self.log_path = tempfile.mkstemp(prefix="opbridge-fuzz-worker-", suffix=".log")
        os.close(handle)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", "import sys; from opbridge.fuzz import _worker_main; "
                 "_worker_main(int(sys.argv[1]), int(sys.argv[2]))", str(child.fileno()), str(memory_budget)],
                pass_fds=(child.fileno(),), env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        child.close()
        self.case, self.started, self.served, self.log_start = None, 0.0, 0, 0
        try:
            ready = self.conn.poll(startup_timeout) and self.conn.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise RuntimeError(f"fuzz worker did not start within {startup_timeout} s ({self.death()})")

    def send(self, case: Case, model: bytes) -> None:
        self.case, self.started = case, time.monotonic()
        self.log_start = os.path.getsize(self.log_path)
        self.served += 1
        self.conn.send((case.identity, model, case.feeds(), case.outputs, case.threads, case.structural, case.hook))

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.kill()
        self._close()

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self._close()

    def _close(self) -> None:
        self.conn.close()
        if os.path.exists(self.log_path):
            os.unlink(self.log_path)

    def death(self) -> str:
        """How the worker ended, after its connection closed, with what it wrote during the case."""
        try:
            code = self.process.wait(5)
            how = f"worker killed by {signal.Signals(-code).name}" if code < 0 else f"worker exited with code {code}"
        except subprocess.TimeoutExpired:
            how = "worker closed its connection"
        with open(self.log_path, "rb") as log:
            log.seek(self.log_start)
            written = log.read()[-2000:].decode(errors="replace").strip()
        self.kill()
        return f"{how}: {written}" if written else how


@dataclasses.dataclass
class Example:
    outcome: str
    description: str
    message: str
    reproducer: str | None


def message_kind(message: str) -> str:
    """A message with its particulars (numbers, names, shapes) blanked, so that the cases one defect
    fails are counted together: "Type Error: Type '…' of input parameter (…) of operator (…) ..."."""
    text = re.sub(r"\[ONNXRuntimeError\] : \d+ : \w+ : ", "", message)
    text = re.sub(r"Non-zero status code returned while running \w+ node\. Name:'[^']*' Status Message: ", "", text)
    text = re.sub(r"\w+::\w+", "OP", text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"\([^()]*\)", "(…)", text)
    text = re.sub(r"\[[^\[\]]*\]", "[…]", text)
    text = re.sub(r"-?\b\d[\d.e+-]*|\bnan\b|-?\binf\b", "#", text)
    return text.strip()[:200]


@dataclasses.dataclass
class Report:
    seed: int
    counts: dict  # identity -> Counter of outcomes
    kinds: dict  # (outcome, message_kind) -> [count, first Example], for every outcome but ok
    seconds: float
    out_dir: str

    def total(self, outcome: str) -> int:
        return sum(c[outcome] for c in self.counts.values())

    @property
    def cases(self) -> int:
        return sum(sum(c.values()) for c in self.counts.values())

    @property
    def failed(self) -> bool:
        return any(self.total(o) for o in BAD)

    def format(self, kinds_per_outcome: int = 10, clean_errors: bool = False) -> str:
        """The counts, then per bad outcome its most frequent kinds of message with the first case of
        each; with clean_errors, the kinds of clean error messages too (to read them for sense)."""
        width = max([len(i) for i in self.counts] + [8]) + 2
        header = f"{'identity':<{width}}" + "".join(f"{o:>11}" for o in OUTCOMES)
        lines = [f"fuzz: seed {self.seed}, {self.cases} cases in {self.seconds:.1f} s, reproducers in "
                 f"{self.out_dir}", header]
        for identity, counts in self.counts.items():
            lines.append(f"{identity:<{width}}" + "".join(f"{counts[o]:>11}" for o in OUTCOMES))
        lines.append(f"{'total':<{width}}" + "".join(f"{self.total(o):>11}" for o in OUTCOMES))
        for outcome in REPORTED + (("error",) if clean_errors else ()):
            kinds = sorted(((n, k, e) for (o, k), (n, e) in self.kinds.items() if o == outcome), key=lambda t: -t[0])
            if not kinds:
                continue
            lines.append(f"\n{outcome}: {self.total(outcome)} cases, {len(kinds)} kinds of message"
                         + (f", the {kinds_per_outcome} most frequent:" if len(kinds) > kinds_per_outcome else ":"))
            for count, kind, e in kinds[:kinds_per_outcome]:
                lines.append(f"  {count} x {kind}")
                lines.append(f"    first: {e.description}")
                lines.append(f"    -> {e.message.strip()[:300]}")
                if e.reproducer:
                    lines.append(f"    reproducer: {e.reproducer}")
        return "\n".join(lines)


def run(case_list, timeout: float = 10.0, workers: int = 2, out_dir: str | None = None,
        memory_budget: int = MEMORY_BUDGET, recycle: int = 500, reproducers_per_kind: int = 5,
        progress=None) -> Report:
    """Runs the cases in isolated workers and classifies every outcome (see the module docstring)."""
    out = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="opbridge-fuzz-"))
    out.mkdir(parents=True, exist_ok=True)
    counts = collections.defaultdict(collections.Counter)
    kinds, kept = {}, collections.Counter()
    seed = None
    pending = iter(case_list)
    slots: list[_Worker | None] = [None] * workers
    busy: dict = {}  # slot index -> (case, model bytes)
    start = time.monotonic()
    done = 0

    def record(case: Case, model: bytes, outcome: str, message: str) -> None:
        nonlocal done
        counts[case.identity][outcome] += 1
        done += 1
        if progress and done % progress == 0:
            print(f"fuzz: {done} cases, {time.monotonic() - start:.0f} s", flush=True)
        if outcome == "ok":
            return
        reproducer = None
        # Every crash and hang keeps its reproducer; the other bad kinds only their first few per identity.
        if outcome in ("crash", "hang") or (outcome in REPORTED and kept[case.identity, outcome] < reproducers_per_kind):
            kept[case.identity, outcome] += 1
            reproducer = str(_write_reproducer(out, case, model, outcome, message))
        key = (outcome, message_kind(message))
        if key not in kinds:
            kinds[key] = [0, Example(outcome, case.describe(), message, reproducer)]
        kinds[key][0] += 1

    try:
        exhausted = False
        while True:
            for s in range(workers):
                if s in busy or exhausted:
                    continue
                case = next(pending, None)
                if case is None:
                    exhausted = True
                    break
                seed = case.seed if seed is None else seed
                if slots[s] is not None and slots[s].served >= recycle:
                    slots[s].stop()
                    slots[s] = None
                if slots[s] is None:
                    slots[s] = _Worker(memory_budget)
                model = case.model().SerializeToString()
                slots[s].send(case, model)
                busy[s] = (case, model)
            if not busy:
                break
            now = time.monotonic()
            wait = max(0.0, min(slots[s].started + timeout - now for s in busy))
            ready = multiprocessing.connection.wait([slots[s].conn for s in busy], timeout=wait)
            for s in list(busy):
                worker, (case, model) = slots[s], busy[s]
                if worker.conn in ready:
                    try:
                        outcome, message = worker.conn.recv()
                    except (EOFError, OSError):
                        outcome, message = "crash", worker.death()
                        slots[s] = None
                elif time.monotonic() - worker.started > timeout:
                    worker.kill()
                    slots[s] = None
                    outcome, message = "hang", f"no result within {timeout} s"
                else:
                    continue
                del busy[s]
                record(case, model, outcome, message)
    finally:
        for worker in slots:
            if worker is not None:
                worker.stop()
    return Report(seed if seed is not None else 0, dict(counts), kinds, time.monotonic() - start, str(out))


def _write_reproducer(out: Path, case: Case, model: bytes, outcome: str, message: str) -> Path:
    stem = f"{outcome}-{case.identity.replace('::', '.')}-{case.index:06d}"
    (out / f"{stem}.onnx").write_bytes(model)
    np.savez(out / f"{stem}.npz", **case.feeds())
    (out / f"{stem}.txt").write_text(
        f"{case.describe()}\n{message.strip()}\n"
        f"replay: python -c \"from opbridge import fuzz; fuzz.replay('{out / stem}.onnx', threads={case.threads})\"\n")
    return out / f"{stem}.onnx"


def replay(onnx_path: str, threads: int = 1) -> list:
    """Runs a reproducer (its .onnx and the .npz beside it) in this process; returns the outputs."""
    from opbridge._library import create_session

    with np.load(str(onnx_path)[:-len(".onnx")] + ".npz") as data:
        feeds = {name: data[name] for name in data.files}
    return create_session(onnx_path, intra_op_threads=threads).run(None, feeds)


def main(count: int, seed: int = 0, identities: list[str] | None = None, timeout: float = 10.0,
         out_dir: str | None = None, workers: int = 2, clean_errors: bool = False) -> int:
    """The CLI's fuzz command: runs, prints the report, returns the exit code."""
    known = [f"{d}::{n}" for d, n, _ in manifest.identities()]
    unknown = [i for i in identities or [] if i not in known]
    if unknown:
        print(f"fuzz: unknown identities {unknown}; registered: {', '.join(known)}")
        return 2
    report = run(cases(seed, count, identities), timeout=timeout, workers=workers, out_dir=out_dir,
                 progress=max(1000, count // 20))
    print(report.format(clean_errors=clean_errors))
    return 1 if report.failed else 0
