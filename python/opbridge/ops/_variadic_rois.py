"""Export of the ops whose node takes the RoIs and then a variable list of feature maps
(MultiScaleRoiAlign, MultiLevelRoiAlign, MultiLevelRotatedRoiAlign): each op describes its node once
(VariadicRoiNode: the op type and its attributes with their kinds, in the node's order), and this
module makes both exporters' code from that.

The dynamo exporter needs @onnxscript.script functions for custom-domain nodes, and those have a
fixed arity: there is one per map count, generated here from one template (their source is put in
linecache, where onnxscript's parser reads it, as it reads a module's). They live in the wrapper
domain the exporter inlines away, so the graph holds the node itself, as with hand-written ones.
The legacy symbolic emits the same node with the same attribute names and declares its output
[R, C, output_height, output_width].
"""

from __future__ import annotations

import dataclasses
import functools
import linecache
from typing import Sequence

from onnxscript import FLOAT

import onnxscript

from opbridge.ops._onnx import OPBRIDGE, WRAPPERS, symbolic_helper

# Attribute kinds: the legacy exporter's suffix, the scripted function's annotation.
_ANNOTATIONS = {"i": "int", "f": "float", "fs": "Sequence[float]"}
_LEGACY_SUFFIX = {"i": "i", "f": "f", "fs": "f"}


@dataclasses.dataclass(frozen=True)
class VariadicRoiNode:
    op_type: str                        # the node's op type in the opbridge domain
    attributes: tuple[tuple[str, str], ...]  # (name, kind "i" / "f" / "fs"), in the node's order
    max_dynamo_maps: int                # the most maps the dynamo translations take
    max_maps: int                       # the most maps the node takes (the legacy exporter's limit)
    python_name: str                    # the op's name in messages

    @functools.cached_property
    def _functions(self) -> dict:
        return {count: self._script(count) for count in range(1, self.max_dynamo_maps + 1)}

    def _script(self, count: int):
        maps = [f"f{i}" for i in range(count)]
        name = f"_{self.op_type}_{count}"
        parameters = ", ".join(["rois: FLOAT"] + [f"{m}: FLOAT" for m in maps] +
                               [f"{a}: {_ANNOTATIONS[kind]}" for a, kind in self.attributes])
        arguments = ", ".join(["rois"] + maps + [f"{a}={a}" for a, _ in self.attributes])
        source = f"def {name}({parameters}) -> FLOAT:\n    return OPBRIDGE.{self.op_type}({arguments})\n"
        filename = f"<opbridge.ops._variadic_rois {name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        # This module's globals (FLOAT, OPBRIDGE, Sequence): onnxscript resolves names in the
        # function's module.
        namespace = {"__name__": __name__, "FLOAT": FLOAT, "OPBRIDGE": OPBRIDGE, "Sequence": Sequence}
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own template
        return onnxscript.script(WRAPPERS)(namespace[name])

    def translate(self, rois, features, attributes: dict):
        """The dynamo translation: the node over `features`, with `attributes` (name -> value)."""
        if len(features) > self.max_dynamo_maps:
            raise ValueError(f"opbridge.export: {self.python_name} over {len(features)} feature maps; the dynamo "
                             f"exporter takes at most {self.max_dynamo_maps}"
                             + (f" (exporter='legacy' takes up to {self.max_maps})"
                                if self.max_maps > self.max_dynamo_maps else ""))
        return self._functions[len(features)](rois, *features, **attributes)

    def symbolic(self, g, rois, features, attributes: dict):
        """The legacy symbolic: the node over the unpacked `features` list, output [R, C, out_h, out_w]."""
        helper = symbolic_helper()
        maps = helper._unpack_list(features)
        kinds = dict(self.attributes)
        out = g.op(f"opbridge::{self.op_type}", rois, *maps,
                   **{f"{name}_{_LEGACY_SUFFIX[kinds[name]]}": attributes[name] for name, _ in self.attributes})
        size = helper._get_tensor_dim_size
        out.setType(maps[0].type().with_sizes([size(rois, 0), size(maps[0], 1), attributes["output_height"],
                                               attributes["output_width"]]))
        return out
