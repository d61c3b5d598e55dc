"""Export of the ops whose torch op call becomes ONE opbridge node: each describes its node once
(OneNode), and this module makes both exporters' code from that description and the manifest.

The manifest (ops.toml) states the node: its op type (the identity), its inputs (names, dtypes,
which are optional, which variadic), its outputs (names, dtypes) and its attributes (names, kinds,
in the node's order). The description adds what the manifest does not say: the torch op it
translates (whose schema gives its arguments' names, kinds and defaults), which argument feeds an
input or attribute whose name differs, attribute values that are fixed or computed from the
arguments, how many of the outputs the node gives, and the output sizes the legacy exporter
declares. An input or attribute the description does not name is fed by the torch argument of
the same name; an optional input or an attribute with a default that no argument feeds is left
out, as is an optional input whose argument is None.

The dynamo exporter needs @onnxscript.script functions for custom-domain nodes, and those have a
fixed arity: there is one per combination of present optional inputs (and per count of a variadic
input), generated here from one template (their source is put in linecache, where onnxscript's
parser reads it, as it reads a module's). They live in the wrapper domain the exporter inlines
away, so the graph holds the node itself, as with hand-written ones. The legacy symbolic emits the
same node with the same attributes and declares each output's type: the type of the description's
`like` input, with the output's dtype where the manifest's differs from that input's, and the
description's sizes.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import linecache
from typing import Any, Callable, Mapping, Sequence, TypeVar, Union

import onnxscript
import torch
from onnxscript import BFLOAT16, DOUBLE, FLOAT, FLOAT16, INT32, INT64  # noqa: F401 - the generated functions' annotations

from opbridge import manifest
from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, symbolic_helper  # noqa: F401 - OPBRIDGE: their calls

# Manifest dtypes: the scripted functions' annotation and the torch dtype.
_TENSOR_TYPES = {"float32": ("FLOAT", torch.float32), "float64": ("DOUBLE", torch.float64),
                 "float16": ("FLOAT16", torch.float16), "bfloat16": ("BFLOAT16", torch.bfloat16),
                 "int32": ("INT32", torch.int32), "int64": ("INT64", torch.int64)}
# Manifest attribute types: the scripted functions' annotation, the legacy exporter's suffix, and
# the conversion of the value (a bool becomes an int, as the node carries it).
_ATTRIBUTE_KINDS = {
    "int": ("int", "i", int),
    "float": ("float", "f", float),
    "string": ("str", "s", str),
    "ints": ("Sequence[int]", "i", lambda value: [int(v) for v in value]),
    "floats": ("Sequence[float]", "f", lambda value: [float(v) for v in value]),
}
# Torch schema types: how the legacy exporter reads a constant argument of that type.
_LEGACY_PARSE = {"int": "i", "SymInt": "i", "float": "f", "bool": "b", "str": "s", "List[int]": "is",
                 "List[SymInt]": "is", "List[float]": "fs"}
# What a variadic input is called in messages.
_VARIADIC_NOUNS = {"features": "feature maps"}
_SCRIPT_NAMES: set[str] = set()  # the generated functions' names (the exporter keys functions by name)


class Arguments(Mapping):
    """The torch op's arguments by schema name, as a description's callables see them (also as
    attributes: ``a.use_mask``): tensors as the exporter's values (None for an absent optional
    one, a list for a tensor list), other arguments as Python values."""

    def __init__(self, values: dict, read: Callable[[str, Any], Any] | None = None):
        self._values, self._read, self._cache = values, read, {}

    def __getitem__(self, name: str):
        if name not in self._cache:
            value = self._values[name]
            self._cache[name] = self._read(name, value) if self._read else value
        return self._cache[name]

    def __getattr__(self, name: str):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __contains__(self, name) -> bool:
        return name in self._values

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)


class Shapes:
    """What a description's `sizes` sees in the legacy exporter: the node's inputs by manifest
    name (a variadic input by its first tensor) and its attribute values (`attributes`)."""

    def __init__(self, inputs: dict, attributes: dict):
        self._inputs, self.attributes = inputs, attributes

    def tensor(self, name: str):
        value = self._inputs[name]
        return value[0] if isinstance(value, list) else value

    def dim(self, name: str, dim: int) -> int | None:
        return symbolic_helper()._get_tensor_dim_size(self.tensor(name), dim)

    def sizes(self, name: str) -> list | None:
        return symbolic_helper()._get_tensor_sizes(self.tensor(name))

    def rank(self, name: str) -> int | None:
        return symbolic_helper()._get_tensor_rank(self.tensor(name))


@dataclasses.dataclass(frozen=True, eq=False)
class OneNode:
    """One torch op call -> one node of `identity` (an "opbridge::OpType" of the manifest).

    inputs: node input -> the torch argument feeding it (its name, or f(Arguments) -> tensor or
        None), where it is not the argument of the same name.
    attributes: node attribute -> its value: a torch argument's name, f(Arguments), or the value
        itself (a fixed string is written as a callable); converted to the attribute's kind.
    outputs: how many of the identity's outputs the node gives (None: all).
    sizes: the legacy exporter's output sizes, f(Shapes) -> per output a list of dims (None in a
        list: unknown) or None (the `like` input's sizes); f returning None declares no types.
    like: the input whose type the legacy outputs take (default: the first input).
    max_dynamo_count: the most tensors a variadic input takes with the dynamo exporter, and
        max_count with the legacy one (None: any; in the message only).
    """

    identity: str
    torch_op: torch._ops.OpOverload
    inputs: Mapping[str, str | Callable] = dataclasses.field(default_factory=dict)
    attributes: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    outputs: int | None = None
    sizes: Callable[[Shapes], Sequence | None] | None = None
    like: str | None = None
    max_dynamo_count: int | None = None
    max_count: int | None = None

    def __post_init__(self):
        signature, arguments = self._signature, self._torch_arguments
        inputs = {t.name: t for t in signature.inputs}
        attributes = {a.name: a for a in signature.attributes}
        where = f"{self.identity} for {self.legacy_name}"
        for names, known, what in ((self.inputs, inputs, "inputs"), (self.attributes, attributes, "attributes")):
            if set(names) - set(known):
                raise ValueError(f"{where}: the manifest has no {what} {sorted(set(names) - set(known))}")
        for name, source in [*self.inputs.items(), *self.attributes.items()]:
            if isinstance(source, str) and source not in arguments:
                raise ValueError(f"{where}: {name} from {source}, which the torch op does not take")
        for tensor in signature.inputs:
            if tensor.name not in self.inputs and tensor.name not in arguments and not tensor.optional:
                raise ValueError(f"{where}: nothing feeds the required input {tensor.name}")
        for attribute in signature.attributes:
            if attribute.name not in self.attributes and attribute.name not in arguments and attribute.required:
                raise ValueError(f"{where}: nothing feeds the required attribute {attribute.name}")
        if self.outputs is not None and not 1 <= self.outputs <= len(signature.outputs):
            raise ValueError(f"{where}: outputs must be 1 to {len(signature.outputs)}, got {self.outputs}")
        clashes = set(inputs) & set(attributes)
        if clashes:
            raise ValueError(f"{where}: inputs and attributes share the names {sorted(clashes)}")

    # --- what the manifest and the torch schema say -----------------------------------------------

    @functools.cached_property
    def _signature(self) -> manifest.Signature:
        return manifest.find(self.identity).signature(self.identity)

    @property
    def op_type(self) -> str:
        return self.identity.split("::")[1]

    @property
    def legacy_name(self) -> str:
        """The legacy exporter's name of the torch op ("torchvision::roi_align")."""
        return self.torch_op._schema.name

    @functools.cached_property
    def _torch_arguments(self) -> dict:
        """The torch op's schema arguments by name."""
        return {a.name: a for a in self.torch_op._schema.arguments}

    @functools.cached_property
    def _python_signature(self) -> inspect.Signature:
        """The torch op's arguments as a Python signature (the dynamo exporter passes the node's
        arguments, positional or by keyword, and leaves defaulted ones out)."""
        parameters = []
        for argument in self.torch_op._schema.arguments:
            kind = inspect.Parameter.KEYWORD_ONLY if argument.kwarg_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
            default = argument.default_value if argument.has_default_value() else inspect.Parameter.empty
            parameters.append(inspect.Parameter(argument.name, kind, default=default))
        return inspect.Signature(parameters)

    @functools.cached_property
    def _written_attributes(self) -> tuple[manifest.Attribute, ...]:
        """The attributes the node carries, in the manifest's order."""
        return tuple(a for a in self._signature.attributes
                     if a.name in self.attributes or a.name in self._torch_arguments)

    @functools.cached_property
    def _outputs(self) -> tuple[manifest.Tensor, ...]:
        return self._signature.outputs[:self.outputs or len(self._signature.outputs)]

    # --- both exporters ---------------------------------------------------------------------------

    def _node_inputs(self, arguments: Arguments) -> list:
        """Per manifest input: its tensor, None (absent) or, for a variadic input, a list."""
        values = []
        for tensor in self._signature.inputs:
            source = self.inputs.get(tensor.name, tensor.name)
            if callable(source):
                values.append(source(arguments))
            else:
                values.append(arguments[source] if source in arguments else None)
        return values

    def _node_attributes(self, arguments: Arguments) -> dict:
        values = {}
        for attribute in self._written_attributes:
            source = self.attributes.get(attribute.name, attribute.name)
            if callable(source):
                value = source(arguments)
            elif isinstance(source, str):
                value = arguments[source]
            else:
                value = source
            values[attribute.name] = _ATTRIBUTE_KINDS[attribute.type][2](value)
        return values

    def _check_count(self, inputs: list) -> None:
        for tensor, value in zip(self._signature.inputs, inputs):
            if tensor.variadic and self.max_dynamo_count is not None and len(value) > self.max_dynamo_count:
                name = self.legacy_name.split("::")[1]
                noun = _VARIADIC_NOUNS.get(tensor.name, tensor.name)
                more = (f" (exporter='legacy' takes up to {self.max_count})"
                        if self.max_count is not None and self.max_count > self.max_dynamo_count else "")
                raise ValueError(f"opbridge.export: {name} over {len(value)} {noun}; the dynamo exporter takes at "
                                 f"most {self.max_dynamo_count}{more}")

    # --- the dynamo exporter ----------------------------------------------------------------------

    @property
    def dynamo(self) -> dict:
        """The dynamo translation table entry: {torch op: translation}."""
        return {self.torch_op: self.translation}

    @functools.cached_property
    def translation(self) -> Callable:
        """The dynamo translation (called with the torch op's arguments)."""

        def translation(*args, **kwargs):
            bound = self._python_signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = Arguments(dict(bound.arguments))
            inputs = self._node_inputs(arguments)
            self._check_count(inputs)
            present = [v for value in inputs for v in (value if isinstance(value, list) else [value])
                       if v is not None]
            return self._script(self._form(inputs))(*present, **self._node_attributes(arguments))

        translation.__name__ = translation.__qualname__ = f"{self.legacy_name.split('::')[1]}_to_{self.op_type}"
        translation.__signature__ = self._python_signature
        return translation

    @staticmethod
    def _form(inputs: list) -> tuple:
        """Which inputs are present: per input True / False, or a variadic input's count."""
        return tuple(len(v) if isinstance(v, list) else v is not None for v in inputs)

    def _script(self, form: tuple):
        cache = self.__dict__.setdefault("_scripts", {})
        if form not in cache:
            cache[form] = self._generate(form)
        return cache[form]

    def _generate(self, form: tuple):
        """The scripted function emitting the node with the inputs `form` says are present."""
        parameters, arguments = [], []
        type_vars = {}
        for tensor, present in zip(self._signature.inputs, form):
            if tensor.dtype in _TENSOR_TYPES:
                annotation = _TENSOR_TYPES[tensor.dtype][0]
            else:  # a type parameter: each input binds its own (the manifest's notes say so where it matters)
                annotation = type_vars[tensor.name] = self._type_var(tensor.name)
            names = ([f"{tensor.name}_{i}" for i in range(present)] if tensor.variadic
                     else [tensor.name] if present else [])
            parameters += [f"{name}: {annotation}" for name in names]
            arguments += names if names else ["None"]
        while arguments and arguments[-1] == "None":  # absent trailing inputs are left out
            arguments.pop()
        attributes = self._written_attributes
        parameters += [f"{a.name}: {_ATTRIBUTE_KINDS[a.type][0]}" for a in attributes]
        arguments += [f"{a.name}={a.name}" for a in attributes]
        first_type_var = next(iter(type_vars.values()), None)
        returns = [_TENSOR_TYPES[t.dtype][0] if t.dtype in _TENSOR_TYPES else first_type_var for t in self._outputs]
        taken = {t.name for t in self._signature.inputs} | {a.name for a in attributes}
        results = [t.name if t.name not in taken else f"{t.name}_out" for t in self._outputs]
        call = f"OPBRIDGE.{self.op_type}({', '.join(arguments)})"
        if len(results) == 1:
            signature, body = f"-> {returns[0]}", f"    return {call}\n"
        else:
            signature = f"-> tuple[{', '.join(returns)}]"  # the exporter counts outputs from this
            body = f"    {', '.join(results)} = {call}\n    return {', '.join(results)}\n"
        name = self._unique_name(form)
        source = f"def {name}({', '.join(parameters)}) {signature}:\n{body}"
        filename = f"<opbridge.ops._one_node {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = dict(globals())  # onnxscript resolves a function's names in its module: this one
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own template
        function = onnxscript.script(WRAPPERS)(namespace[name])
        _SCRIPT_NAMES.add(name)
        return function

    def _type_var(self, input_name: str) -> str:
        """The name of a TypeVar over the op's dtypes for `input_name`, defined in this module (where
        onnxscript looks up the generated functions' names)."""
        op = manifest.find(self.identity)
        name = f"T_{op.kernel}_{input_name}"
        if name not in globals():
            globals()[name] = TypeVar(name, bound=Union[tuple(globals()[_TENSOR_TYPES[d][0]] for d in op.dtypes)])
        return name

    def _unique_name(self, form: tuple) -> str:
        parts = [f"_{self.op_type}", self.legacy_name.split("::")[1]]
        for tensor, present in zip(self._signature.inputs, form):
            if tensor.variadic:
                parts.append(str(present))
            elif tensor.optional and not present:
                parts.append(f"without_{tensor.name}")
        base = name = "_".join(parts)
        count = 1
        while name in _SCRIPT_NAMES:
            count += 1
            name = f"{base}_{count}"
        return name

    # --- the legacy exporter ----------------------------------------------------------------------

    @property
    def legacy(self) -> dict:
        """The legacy symbolics entry: {"namespace::op": symbolic}."""
        return {self.legacy_name: self.symbolic}

    @functools.cached_property
    def symbolic(self) -> Callable:
        """The legacy symbolic (called with the graph and the torch op's arguments)."""

        def symbolic(g, *args):
            helper = symbolic_helper()
            arguments = Arguments(dict(zip(self._torch_arguments, args)), self._legacy_read)
            inputs = self._node_inputs(arguments)
            attributes = self._node_attributes(arguments)
            values = [value if isinstance(value, list) else [value] for value in inputs]
            while values and len(values[-1]) == 1 and values[-1][0] is None:  # absent trailing inputs: left out
                values.pop()
            flat = [helper._optional_input_placeholder_tensor(g) if v is None else v for vs in values for v in vs]
            kinds = {a.name: _ATTRIBUTE_KINDS[a.type][1] for a in self._written_attributes}
            outputs = g.op(self.identity, *flat, outputs=len(self._outputs),
                           **{f"{name}_{kinds[name]}": value for name, value in attributes.items()})
            results = (outputs,) if len(self._outputs) == 1 else tuple(outputs)
            self._declare_types(results, dict(zip([t.name for t in self._signature.inputs], inputs)), attributes)
            return results[0] if len(results) == 1 else results

        symbolic.__name__ = symbolic.__qualname__ = f"{self.legacy_name.split('::')[1]}_symbolic"
        return symbolic

    def _legacy_read(self, name: str, value):
        """A torch argument as the legacy exporter gives it -> what a description sees."""
        helper = symbolic_helper()
        kind = str(self._torch_arguments[name].type)
        if kind == "List[Tensor]":
            return helper._unpack_list(value)
        if kind in ("Tensor", "Optional[Tensor]"):
            return None if helper._is_none(value) else value
        return helper._parse_arg(value, _LEGACY_PARSE[kind])

    def _declare_types(self, results: tuple, inputs: dict, attributes: dict) -> None:
        shapes = Shapes(inputs, attributes)
        sizes = self.sizes(shapes) if self.sizes else [None] * len(results)
        if sizes is None:
            return
        like_name = self.like or self._signature.inputs[0].name
        like = shapes.tensor(like_name)
        like_dtype = next(t.dtype for t in self._signature.inputs if t.name == like_name)
        for result, output, shape in zip(results, self._outputs, sizes):
            declared = like.type()
            if output.dtype in _TENSOR_TYPES and output.dtype != like_dtype:
                declared = declared.with_dtype(_TENSOR_TYPES[output.dtype][1])
            if shape is None:
                # The like input's sizes, its dynamic dims as new unknowns: torch's shape inference
                # can give one symbol to dims that differ (the batch and the height of FCOS's head
                # convolutions, at every pyramid level), and ORT reuses buffers between values whose
                # declared dims share a name.
                shape = like.type().varyingSizes()
            if shape is not None:
                declared = declared.with_sizes(list(shape))
            result.setType(declared)


def pooled_output(features: str) -> Callable[[Shapes], list]:
    """The legacy sizes of a RoI pooling node's output: [R, C, output_height, output_width], R from
    the input rois and C from `features` (a variadic input: its first map)."""

    def sizes(shapes: Shapes) -> list:
        return [[shapes.dim("rois", 0), shapes.dim(features, 1), shapes.attributes["output_height"],
                 shapes.attributes["output_width"]]]

    return sizes
