"""The conformance suite: what every identity of every op must do, driven by the manifest
(python/opbridge/ops.toml: identities, inputs, outputs, attributes, allowed values, dtypes, shapes)
and the per-op case table (conformance_cases.py: sizes, values, the thread-count and empty inputs,
exact messages). For each identity, and each provider it has a kernel for where the machine runs
it (the CUDA ones under ./run.sh test-gpu, where graphs.run also compares every CPU run with the
CUDA twin):

1. thread counts 1, 2 and 4 give bit-identical outputs, of the manifest's shapes and dtypes;
2. a missing required attribute, and any attribute of another kind, is an error naming the
   identity and the attribute (AttrReader's words, src/ort/ort_util.cc); an absent attribute
   takes the manifest's default;
3. every value outside an attribute's `allowed` list is an error naming the identity, the
   attribute and the value (and, where the case table pins it, in its exact words);
4. an input of a dtype the op does not take is an error naming the identity, the input and the
   dtypes it takes;
5. the output shapes ORT infers agree with the manifest's shape text, and with the shapes a run
   gives;
6. zero-sized axes run and give outputs of the manifest's shapes;
7. in each half dtype of the type parameter T (float16, bfloat16), the outputs are the float32
   kernel's outputs on the half-rounded inputs, rounded once, bit for bit at every thread count,
   and the inputs of T take one dtype together.

The op files (test_<op>.py) test what is particular to an op: its numerics against references, its
edge cases and regressions, its own rules and their messages."""

from __future__ import annotations

import dataclasses
import re
import types
import zlib

import numpy as np
import onnx
import pytest

import cuda_twins
import onnxruntime
import opbridge
from conformance_cases import CASES, Case, Run
from graphs import cast_around, one_node_model, ort_minor, round_to, run, session, session_error
from opbridge import manifest
from opbridge.tolerances import same_bits_but_nan

OPS = manifest.load()
THREADS = (2, 4)  # compared with 1
# Declared dtypes the wrong-dtype check tries: each an input does not take.
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]
ORT_TYPES = {"float32": "tensor(float)", "float64": "tensor(double)", "int64": "tensor(int64)",
             "int32": "tensor(int32)", "float16": "tensor(float16)", "bfloat16": "tensor(bfloat16)"}
# The half dtypes a type parameter T may take (ORT's Python API feeds float16 but not bfloat16: the
# bfloat16 graphs take float32 and cast).
HALF_DTYPES = ("float16", "bfloat16")
KIND_NAMES = {"int": "an int", "float": "a float", "string": "a string", "ints": "a list of ints",
              "floats": "a list of floats"}
MISSING = {"int": "required int attribute '{}' is missing", "float": "required float attribute '{}' is missing",
           "string": "required string attribute '{}' is missing",
           "ints": "required attribute '{}' (a list of ints) is missing",
           "floats": "required attribute '{}' (a list of floats) is missing"}
# Values of another kind for each attribute type, and how the error describes them (ORT's list
# getters read a string or a single float as an empty list: AttrReader::List tells them apart).
WRONG_KINDS = {
    "int": [("x", "a string"), (1.5, "a float (1.5)"), ([1.0, 2.0], "a list of 2 floats"), ([3, 4], "a list of 2 ints")],
    "float": [("x", "a string"), ([1.0, 2.0], "a list of 2 floats"), ([3, 4], "a list of 2 ints")],
    "string": [(1, "an int (1)"), (1.5, "a float (1.5)"), ([1.0, 2.0], "a list of 2 floats")],
    "ints": [("x", "a string"), (1.5, "a float (1.5)"), ([1.0, 2.0], "a list of 2 floats")],
    "floats": [("x", "a string"), ([3, 4], "a list of 2 ints")],
}
IDENT = re.compile(r"[A-Za-z_]\w*")


# --- the manifest's dtype and shape text ---------------------------------------------------------------


def concrete_dtype(text: str, op, t: str | None = None) -> str:
    """A manifest dtype as one the op takes: the type parameter T as `t` (default: the op's first
    dtype), "int64 or int32" as the first."""
    return (t or op.dtypes[0]) if text == "T" else text.split(" or ")[0]


def taken_dtypes(text: str, op) -> tuple[list[str], str]:
    """The dtypes an input takes, and how the op's error message lists them."""
    if text != "T":
        return text.split(" or "), text
    names = list(op.dtypes)
    return names, names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def shape_text(tensor, form: int) -> str:
    """The tensor's shape text in `form` (of "[N, C, H, W] or [N, C, D, H, W]")."""
    alternatives = [a.strip() for a in tensor.shape.split(" or ")]
    return alternatives[form] if len(alternatives) > 1 else alternatives[0]


def tokens(text: str) -> list[str]:
    inner = text.strip()[1:-1].strip()
    return [t.strip() for t in inner.split(",")] if inner else []


def evaluate(token: str, env: dict, level: int | None = None) -> int:
    """A dim's text ("R", "5", "2 * deform_groups * kh * kw", "C / groups") with the sizes and int
    attributes in env (a list: one value per level). KeyError where a symbol has no value."""
    if token.isdigit():
        return int(token)

    def value(match):
        v = env[match.group()]
        if isinstance(v, list):
            if level is None:
                raise KeyError(match.group())
            v = v[level]
        if not isinstance(v, (int, np.integer)):
            raise KeyError(match.group())
        return str(int(v))

    return int(eval(IDENT.sub(value, token).replace("/", "//"), {"__builtins__": {}}))


# --- building a node and its inputs from the manifest and the case table ------------------------------


@pytest.fixture(scope="module", autouse=True)
def _numpy_errors():
    with np.errstate(all="ignore"):
        yield


class Built(types.SimpleNamespace):
    """A node and its inputs: model, feeds, shapes and input_dtypes (per graph input), inputs
    ((graph input name, manifest tensor, level) in node order), outputs (names), expected (per
    output the dims the manifest's text gives, None where free; None where unknown), dtypes (per
    output), env (the sizes and int attributes), attrs (the node's), signature."""


def node_attributes(signature, case: Case, run_: Run) -> dict:
    names = {a.name for a in signature.attributes}
    merged = {**case.attrs, **run_.attrs}
    return {k: v for k, v in merged.items() if k in names and v is not None}


def environment(signature, case: Case, run_: Run, attrs: dict) -> dict:
    env = {**case.sizes, **run_.sizes}
    for a in signature.attributes:
        if a.type == "int" and attrs.get(a.name, a.default) is not None:
            env[a.name] = attrs.get(a.name, a.default)
    return env


def graph_inputs(signature, env: dict, run_: Run) -> list:
    """(graph input name or "" for an absent optional one, manifest tensor, level) in node order."""
    result = []
    for t in signature.inputs:
        if t.name in run_.omit:
            assert t.optional, f"the case table leaves out {t.name}, which is not optional"
            result.append(("", t, None))
        elif t.variadic:
            result += [(f"{t.name}{k}", t, k) for k in range(env.get("levels", 1))]
        else:
            result.append((t.name, t, None))
    while result and result[-1][0] == "":
        result.pop()
    return result


def build(op, identity: str, case: Case, run_: Run, seed: str = "") -> Built:
    signature = op.signature(identity)
    attrs = node_attributes(signature, case, run_)
    env = environment(signature, case, run_, attrs)
    rng = np.random.default_rng(zlib.crc32(f"{identity}/{seed}".encode()))
    inputs = graph_inputs(signature, env, run_)
    feeds, shapes, dtypes = {}, {}, {}
    for name, tensor, level in inputs:
        if not name:
            continue
        if name in run_.shapes or tensor.name in run_.shapes:
            shape = tuple(run_.shapes.get(name, run_.shapes.get(tensor.name)))
        else:
            text = tokens(shape_text(tensor, run_.form))
            shape = tuple(env["..."]) if text == ["..."] else tuple(evaluate(t, env, level) for t in text)
        dtype = concrete_dtype(tensor.dtype, op, run_.dtype)
        ctx = types.SimpleNamespace(rng=rng, shape=shape, dtype=dtype, sizes=env, attrs={**case.attrs, **run_.attrs},
                                    level=level, name=tensor.name)
        make = case.values.get(tensor.name)
        if make is not None:
            values = make(ctx)
        elif np.dtype(dtype).kind == "f":
            values = rng.standard_normal(shape)
        else:
            values = np.zeros(shape)
        feeds[name] = np.ascontiguousarray(np.asarray(values).astype(dtype))
        shapes[name], dtypes[name] = list(shape), dtype
    outputs = [t.name for t in signature.outputs]
    # The inputs' shapes declared (GatherTopk's output is typed by shape inference, which needs data's rank).
    model = one_node_model(identity, attrs, [name for name, _, _ in inputs], outputs, input_shapes=shapes,
                           input_types=dtypes)
    expected, out_dtypes = {}, {}
    t_dtype = next((dtypes[n] for n, t, _ in inputs if n and t.dtype == "T"), None)
    for t in signature.outputs:
        out_dtypes[t.name] = t_dtype if t.dtype == "T" else concrete_dtype(t.dtype, op)
        if t.name in run_.expect:
            expected[t.name] = list(run_.expect[t.name])
        elif run_.shapes:
            expected[t.name] = None  # other ranks than the manifest's text
        else:
            text = tokens(shape_text(t, run_.form))
            expected[t.name] = list(env["..."]) if text == ["..."] else [resolve(d, env) for d in text]
    return Built(model=model, feeds=feeds, shapes=shapes, input_dtypes=dtypes, inputs=inputs, outputs=outputs,
                 expected=expected, dtypes=out_dtypes, env=env, attrs=attrs, signature=signature)


def resolve(token: str, env: dict):
    try:
        return evaluate(token, env)
    except (KeyError, SyntaxError, NameError):
        return None


def check_outputs(built: Built, outputs: list) -> None:
    """The outputs have the manifest's dtypes and, where the sizes fix them, its shapes."""
    assert len(outputs) == len(built.outputs)
    for name, value in zip(built.outputs, outputs):
        assert value.dtype == np.dtype(built.dtypes[name]), f"output {name}: {value.dtype}, expected {built.dtypes[name]}"
        expected = built.expected[name]
        if expected is None:
            continue
        assert value.ndim == len(expected) and all(e is None or e == a for e, a in zip(expected, value.shape)), (
            f"output {name} has shape {list(value.shape)}, the manifest's {shape_text_of(built, name)} gives "
            f"{['?' if e is None else e for e in expected]}")


def shape_text_of(built: Built, name: str) -> str:
    return next(t.shape for t in built.signature.outputs if t.name == name)


# --- parametrization: (identity, provider, case) ------------------------------------------------------


def providers(op, identity: str) -> list[str]:
    """The providers of `identity` this machine runs: the CUDA twin under ./run.sh test-gpu."""
    return [p for p in op.providers(identity) if p == "CPU" or cuda_twins.ENABLED]


def parametrize(make):
    """pytest parameters (identity, provider, case) for every identity and provider, with make(op,
    identity, signature, case) giving (name, payload) per case. The case value carries the kernel
    (so that --each-value-once keeps every op's cases) and a key into PAYLOADS."""
    params = []
    for kernel, op in OPS.items():
        case = CASES.get(kernel)
        if case is None:
            continue  # test_every_op_has_a_case_table_entry fails
        for identity in op.identities:
            signature = op.signature(identity)
            for name, payload in make(op, identity, signature, case):
                key = f"{kernel}:{name}"
                PAYLOADS[(identity, make.__name__, key)] = (op, case, payload)
                for provider in providers(op, identity):
                    params.append(pytest.param(identity, provider, key, id=f"{identity}-{provider}-{name or 'default'}"))
    return pytest.mark.parametrize("identity,provider,case", params)


PAYLOADS: dict = {}


def payload(identity: str, kind, case: str):
    return PAYLOADS[(identity, kind.__name__, case)]


def thread_runs(op, identity, signature, case):
    return [(name, r) for name, r in case.threads.items() if r.only is None or r.only(signature)]


def empty_runs(op, identity, signature, case):
    return [(name, r) for name, r in case.empty.items() if r.only is None or r.only(signature)]


def required_attributes(op, identity, signature, case):
    return [(a.name, a) for a in signature.attributes if a.required]


def all_attributes(op, identity, signature, case):
    return [(a.name, a) for a in signature.attributes]


def defaulted_attributes(op, identity, signature, case):
    return [(a.name, a) for a in signature.attributes if not a.required]


def allowed_values(op, identity, signature, case):
    result = []
    for a in signature.attributes:
        if not a.allowed:
            continue
        if a.type == "int":
            low, high = min(a.allowed), max(a.allowed)
            values = [low - 1] + [v for v in range(low, high) if v not in a.allowed] + [high + 1]
        else:
            values = [str(a.allowed[0]).upper(), "unknown"]
        for v in values + [v for v in case.bad_values.get(a.name, []) if v not in values]:
            result.append((f"{a.name}={v}", (a, v)))
    return result


def dtype_inputs(op, identity, signature, case):
    return [(t.name, t) for t in signature.inputs]


def shape_runs(op, identity, signature, case):
    """The case's shape-inference inputs, each with every dtype of the type parameter T where an
    input takes T (bfloat16's inferred types: test_half_dtypes_give_the_float32_kernels_outputs_rounded_once)."""
    runs = [(name, r) for name, r in case.inference.items() if r.only is None or r.only(signature)]
    if not any(t.dtype == "T" for t in signature.inputs):
        return runs
    return [(f"{name}-{dtype}" if name else dtype, dataclasses.replace(r, dtype=dtype)) for name, r in runs
            for dtype in op.dtypes if dtype != "bfloat16"]


def half_runs(op, identity, signature, case):
    """The thread-count inputs in each half dtype of the type parameter T."""
    if not any(t.dtype == "T" for t in signature.inputs):
        return []
    return [(f"{name}-{dtype}" if name else dtype, (r, dtype)) for name, r in thread_runs(op, identity, signature, case)
            for dtype in op.dtypes if dtype in HALF_DTYPES]


def mixed_type_inputs(op, identity, signature, case):
    """For an op with several inputs of the type parameter T, each T input after the first."""
    inputs = [t for t in signature.inputs if t.dtype == "T"]
    return [(t.name, t) for t in inputs[1:]] if any(d in HALF_DTYPES for d in op.dtypes) else []


# --- the checks -----------------------------------------------------------------------------------------


def test_every_op_has_a_case_table_entry():
    assert sorted(CASES) == sorted(OPS), "conformance_cases.CASES needs an entry per kernel of the manifest"
    for kernel, case in CASES.items():
        assert case.threads and case.empty, f"{kernel}: the case table needs thread-count and empty inputs"


@parametrize(thread_runs)
def test_thread_counts_give_identical_outputs(identity, provider, case):
    op, table, run_ = payload(identity, thread_runs, case)
    built = build(op, identity, table, run_, case)
    first = run(built.model, built.feeds, threads=1, provider=provider)
    check_outputs(built, first)
    assert any(o.size for o in first), "the thread-count input gives empty outputs"
    for threads in THREADS:
        again = run(built.model, built.feeds, threads=threads, provider=provider)
        for name, a, b in zip(built.outputs, first, again):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), (
                f"output {name} differs between 1 and {threads} threads")


@parametrize(empty_runs)
def test_empty_axes_give_empty_outputs(identity, provider, case):
    op, table, run_ = payload(identity, empty_runs, case)
    built = build(op, identity, table, run_, case)
    assert any(0 in shape for shape in built.shapes.values())
    check_outputs(built, run(built.model, built.feeds, provider=provider))


def valid_model(op, identity: str, table: Case, attrs: dict):
    """The node with `attrs` and every input (a variadic one twice) declared with a dtype it takes,
    shapes unknown: what session creation checks."""
    built = build(op, identity, table, Run(sizes={"levels": 2}))
    names = [n for n, _, _ in built.inputs]
    return one_node_model(identity, attrs, names, built.outputs, input_types=built.input_dtypes), built


@parametrize(required_attributes)
def test_missing_required_attribute_is_an_error(identity, provider, case):
    op, table, attribute = payload(identity, required_attributes, case)
    attrs = node_attributes(op.signature(identity), table, Run())
    assert attribute.name in attrs, f"the case table gives no value for the required attribute {attribute.name}"
    del attrs[attribute.name]
    model, _ = valid_model(op, identity, table, attrs)
    message = session_error(model, provider)
    assert f"{identity}: {MISSING[attribute.type].format(attribute.name)}" in message, message


@parametrize(defaulted_attributes)
def test_absent_attribute_takes_the_manifests_default(identity, provider, case):
    """The node without the attribute computes what it computes with the manifest's default written
    out (or fails alike)."""
    op, table, attribute = payload(identity, defaulted_attributes, case)
    built = build(op, identity, table, Run(), case)
    names = [n for n, _, _ in built.inputs]
    results = []
    for attrs in ({k: v for k, v in built.attrs.items() if k != attribute.name},
                  {**built.attrs, attribute.name: attribute.default}):
        model = one_node_model(identity, attrs, names, built.outputs, input_shapes=built.shapes,
                               input_types=built.input_dtypes)
        try:
            results.append(run(model, built.feeds, provider=provider))
        except Exception as e:  # ORT's own exception types
            results.append(cuda_twins.opbridge_message(str(e)))
    absent, given = results
    assert type(absent) is type(given), f"without {attribute.name}: {absent}; with its default: {given}"
    if isinstance(absent, str):
        assert absent == given
    else:
        for name, a, b in zip(built.outputs, absent, given):
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), (
                f"output {name} differs between {attribute.name} absent and {attribute.name}={attribute.default!r}")


@parametrize(all_attributes)
def test_attribute_of_another_kind_is_an_error(identity, provider, case):
    op, table, attribute = payload(identity, all_attributes, case)
    for value, described in WRONG_KINDS[attribute.type]:
        attrs = {**node_attributes(op.signature(identity), table, Run()), attribute.name: value}
        model, _ = valid_model(op, identity, table, attrs)
        message = session_error(model, provider)
        expected = f"{identity}: attribute '{attribute.name}' must be {KIND_NAMES[attribute.type]}, got {described}"
        assert expected in message, message


@parametrize(allowed_values)
def test_value_outside_allowed_is_an_error(identity, provider, case):
    op, table, (attribute, value) = payload(identity, allowed_values, case)
    attrs = {**node_attributes(op.signature(identity), table, Run()), attribute.name: value}
    model, _ = valid_model(op, identity, table, attrs)
    message = session_error(model, provider)
    assert f"{identity}: " in message, message
    ours = message[message.index(f"{identity}: "):]
    assert re.search(rf"\b{re.escape(attribute.name)}\b", ours), message
    assert re.search(rf"got \"?{re.escape(str(value))}\"?(?![\w.])", ours), message
    exact = table.messages.get(case.split(":", 1)[1])
    if exact is not None:
        assert f"{identity}: {exact}" in message, message


def test_every_pinned_message_is_an_allowed_value_case():
    """Each exact message of the case table belongs to a generated allowed-value case."""
    for kernel, case in CASES.items():
        op = OPS[kernel]
        generated = {name for identity in op.identities
                     for name, _ in allowed_values(op, identity, op.signature(identity), case)}
        assert set(case.messages) <= generated, f"{kernel}: {sorted(set(case.messages) - generated)}"


@parametrize(dtype_inputs)
def test_input_of_another_dtype_is_an_error(identity, provider, case):
    op, table, tensor = payload(identity, dtype_inputs, case)
    attrs = node_attributes(op.signature(identity), table, Run())
    _, built = valid_model(op, identity, table, attrs)
    names = [n for n, _, _ in built.inputs]
    taken, listed = taken_dtypes(tensor.dtype, op)
    for index in (i for i, (n, t, _) in enumerate(built.inputs) if t.name == tensor.name):  # each of a variadic one
        which = f" (input {index})" if tensor.variadic else ""
        for dtype in (d for d in DTYPES if d not in taken):
            model = one_node_model(identity, attrs, names, built.outputs,
                                   input_types={**built.input_dtypes, names[index]: dtype})
            message = session_error(model, provider)
            assert f"{identity}: input '{tensor.name}'{which} has dtype {dtype}; the op takes {listed}" in message, (
                message)


def free(dim) -> bool:
    """A dim the op leaves to run time: a symbol of its own (a kept count, a size from data)."""
    return isinstance(dim, str) and dim.startswith(("opbridge_", "unk__"))


def check_free_dims(signature, form: int, inferred: list, known: set) -> None:
    """The dims of the outputs' shape text that no input and attribute fixes (a kept count K) are
    symbols, not unknown, and one symbol is one dim: soft-NMS's dets [K, 5] and inds [K] agree."""
    dims: dict = {}
    for tensor, output in zip(signature.outputs, inferred):
        if inference_left_to_run_time(signature, tensor) or len(output.shape) != len(tokens(shape_text(tensor, form))):
            continue
        for token, dim in zip(tokens(shape_text(tensor, form)), output.shape):
            if IDENT.fullmatch(token) and token not in known:
                assert isinstance(dim, str) and dim, f"output {tensor.name}: {token} is {dim!r}, not a symbol"
                dims.setdefault(token, set()).add(dim)
    assert all(len(v) == 1 for v in dims.values()), f"one symbol of the text, several dims: {dims}"


def inference_left_to_run_time(signature, tensor) -> bool:
    """Where the library gives ORT no shape (DEVELOPERS.md, older runtimes' defects): ORT 1.21 to
    1.23, an op with an optional input followed by another; before 1.28, an optional output."""
    inputs = signature.inputs
    middle = any(t.optional for t in inputs[:-1])
    return (ort_minor() < 24 and middle) or (ort_minor() < 28 and tensor.optional)


@parametrize(shape_runs)
def test_inferred_output_shapes_follow_the_manifest(identity, provider, case):
    op, table, run_ = payload(identity, shape_runs, case)
    built = build(op, identity, table, run_, case)
    signature, form = built.signature, run_.form
    names = [n for n, _, _ in built.inputs]
    present = [(name, tensor) for name, tensor, _ in built.inputs if name]
    # 1. Inputs of symbolic dims (the manifest's letters): the outputs' dims are those symbols, the
    # attributes' values, or what the text fixes.
    attribute_names = {a.name for a in signature.attributes}
    seen: dict = {}
    for name, tensor in present:
        text = tokens(shape_text(tensor, form))
        for token, size in zip(text, built.shapes[name]) if text != ["..."] else ():
            if IDENT.fullmatch(token) and token not in attribute_names:
                seen.setdefault(token, set()).add(size)
    symbols = {token for token, sizes in seen.items() if len(sizes) == 1}
    declared = {}
    for name, tensor in present:
        text = tokens(shape_text(tensor, form))
        if text == ["..."]:
            declared[name] = [f"d{k}" for k in range(len(built.shapes[name]))]
        else:
            declared[name] = [token if token in symbols else size for token, size in zip(text, built.shapes[name])]
    ellipsis = next((v for n, v in declared.items() if v and v[0] == "d0"), None)
    model = one_node_model(identity, built.attrs, names, built.outputs, input_shapes=declared,
                           input_types=built.input_dtypes)
    inferred = session(model, provider=provider).get_outputs()
    for tensor, output in zip(signature.outputs, inferred):
        if inference_left_to_run_time(signature, tensor):
            continue
        text = tokens(shape_text(tensor, form))
        expected = ellipsis if text == ["..."] else [
            token if token in symbols else None if IDENT.fullmatch(token) and token in seen else resolve(token, built.env)
            for token in text]
        assert output.type == ORT_TYPES[built.dtypes[tensor.name]], f"output {tensor.name}: {output.type}"
        assert len(output.shape) == len(expected), (
            f"output {tensor.name}: ORT infers {output.shape}, the manifest says {tensor.shape}")
        for dim, want in zip(output.shape, expected):
            assert want is None or free(dim) or dim == want, (
                f"output {tensor.name}: ORT infers {output.shape}, the manifest's {tensor.shape} gives {expected}")
    check_free_dims(signature, form, inferred, set(seen) | set(built.env))
    # 2. Inputs of the run's shapes: what ORT infers is what the run gives, and every dim the
    # manifest's text fixes is inferred.
    model = one_node_model(identity, built.attrs, names, built.outputs, input_shapes=built.shapes,
                           input_types=built.input_dtypes)
    inferred = session(model, provider=provider).get_outputs()
    outputs = run(model, built.feeds, provider=provider)
    check_outputs(built, outputs)
    for tensor, output, value in zip(signature.outputs, inferred, outputs):
        if inference_left_to_run_time(signature, tensor):
            assert output.shape == [] or len(output.shape) == value.ndim
            continue
        assert len(output.shape) == value.ndim, f"output {tensor.name}: ORT infers {output.shape}, runs {value.shape}"
        for dim, actual, want in zip(output.shape, value.shape, built.expected[tensor.name]):
            assert free(dim) or dim == actual, f"output {tensor.name}: ORT infers {output.shape}, runs {value.shape}"
            assert want is None or dim == want, (
                f"output {tensor.name}: ORT infers {output.shape}, the manifest's {tensor.shape} gives "
                f"{built.expected[tensor.name]}")
    check_free_dims(signature, form, inferred, set(seen) | set(built.env))


# --- half precision -------------------------------------------------------------------------------------


def half_model(built: Built, identity: str, dtype: str, cast: bool) -> onnx.ModelProto:
    """The node of `built` with its T inputs and outputs in `dtype`: as graph inputs and outputs, or
    with cast, behind Cast nodes from and to float32 (bfloat16, graphs.cast_around)."""
    t_inputs = {n for n, t, _ in built.inputs if n and t.dtype == "T"}
    t_outputs = {t.name for t in built.signature.outputs if t.dtype == "T"}
    names = [n for n, _, _ in built.inputs]
    model = one_node_model(identity, built.attrs, names, built.outputs, input_shapes=built.shapes,
                           input_types={**built.input_dtypes, **{n: dtype for n in t_inputs}})
    return cast_around(model, dtype, t_inputs, t_outputs) if cast else model


@parametrize(half_runs)
def test_half_dtypes_give_the_float32_kernels_outputs_rounded_once(identity, provider, case):
    """In float16 and bfloat16 the op's outputs are the float32 kernel's outputs on the half values,
    rounded once (the issue's semantics: float32 arithmetic, one rounding as each output is
    written), bit for bit, at every thread count; ORT infers the outputs' dtype as T's."""
    op, table, (run_, dtype) = payload(identity, half_runs, case)
    built = build(op, identity, table, run_, case)
    t_inputs = {n for n, t, _ in built.inputs if n and t.dtype == "T"}
    t_outputs = {t.name for t in built.signature.outputs if t.dtype == "T"}
    half_feeds = {n: round_to(v, dtype) if n in t_inputs else v for n, v in built.feeds.items()}
    reference = run(built.model, half_feeds, provider=provider)
    expected = [round_to(v, dtype) if n in t_outputs else v for n, v in zip(built.outputs, reference)]
    inferred = session(half_model(built, identity, dtype, cast=False), provider=provider).get_outputs()
    for tensor, output in zip(built.signature.outputs, inferred):
        want = ORT_TYPES[dtype] if tensor.dtype == "T" else ORT_TYPES[built.dtypes[tensor.name]]
        assert output.type == want, f"output {tensor.name}: ORT infers {output.type}, expected {want}"
    cast = dtype == "bfloat16"
    model = half_model(built, identity, dtype, cast)
    feeds = half_feeds if cast else {n: v.astype(np.float16) if n in t_inputs else v for n, v in half_feeds.items()}
    for threads in (1, 4):
        outputs = run(model, feeds, threads=threads, provider=provider)
        for name, got, want in zip(built.outputs, outputs, expected):
            if name in t_outputs and not cast:
                got = got.astype(np.float32)
            assert got.dtype == want.dtype and same_bits_but_nan(want, got), (
                f"output {name} in {dtype} ({threads} threads) is not the float32 kernel's on the {dtype} inputs "
                f"rounded once: {int(np.sum(got != want))} of {want.size} elements differ")


@parametrize(mixed_type_inputs)
def test_inputs_of_the_type_parameter_take_one_dtype(identity, provider, case):
    """The inputs of T take one dtype together: float16 features with float32 RoIs are refused when
    the session is created, naming the identity, both inputs and their dtypes."""
    op, table, tensor = payload(identity, mixed_type_inputs, case)
    attrs = node_attributes(op.signature(identity), table, Run())
    _, built = valid_model(op, identity, table, attrs)
    names = [n for n, _, _ in built.inputs]
    first = next(t for _, t, _ in built.inputs if t.dtype == "T")
    _, listed = taken_dtypes("T", op)

    def named(t):  # how the error names an input: a variadic one with the index of its first tensor
        index = next(i for i, (_, other, _) in enumerate(built.inputs) if other.name == t.name)
        return f"'{t.name}' (input {index})" if t.variadic else f"'{t.name}'"

    for dtype in (d for d in op.dtypes if d != op.dtypes[0]):
        types_ = {**built.input_dtypes, **{n: dtype for n, t, _ in built.inputs if n and t.dtype == "T"},
                  **{n: op.dtypes[0] for n, t, _ in built.inputs if t.name == tensor.name}}
        model = one_node_model(identity, attrs, names, built.outputs, input_types=types_)
        message = session_error(model, provider)
        expected = (f"{identity}: input {named(tensor)} has dtype {op.dtypes[0]} and input {named(first)} {dtype}: "
                    f"the op takes one dtype for both (one of {listed})")
        assert expected in message, message


HALF_OPS = [pytest.param(kernel, id=kernel) for kernel, op in OPS.items() if "float16" in op.dtypes
            and any(t.dtype == "T" for t in op.signature(op.identities[0]).inputs)]


@pytest.mark.parametrize("kernel", HALF_OPS)
def test_half_nodes_run_without_casts(kernel, tmp_path):
    """ORT runs a float16 node of the op as it is: its CPU provider inserts Cast nodes around nodes
    whose kernels lack float16 (whole-tensor copies to float32 and back), and none around ours."""
    op = OPS[kernel]
    identity = op.identities[0]
    built = build(op, identity, CASES[kernel], Run())
    model = half_model(built, identity, "float16", cast=False)
    options = onnxruntime.SessionOptions()  # create_session registers the library on them
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    opbridge.create_session(model, options=options)
    assert [n.op_type for n in onnx.load(str(tmp_path / "optimized.onnx")).graph.node] == [identity.split("::")[1]]
