"""Where the nodes of a model run in an ONNX Runtime session with the CUDA execution provider.

ORT assigns each node to an execution provider and puts a MemcpyFromHost / MemcpyToHost node on
every edge between a CPU node and a GPU node. An opbridge node next to such a copy ran on the CPU
(its identity has no CUDA kernel, or the library was built without CUDA): the copies around it
are what makes a CPU fallback slow. ORT writes the partitioned graph, copies included, to
`optimized_model_filepath`; this module reads it. Needs onnxruntime-gpu for cuda_placement.

    placement = opbridge.placement.cuda_placement("model.onnx")
    placement.memcpy_nodes, placement.opbridge_nodes_next_to_copies
"""

from __future__ import annotations

import dataclasses
import os
import tempfile

import onnx

from opbridge import manifest

COPY_OPS = ("MemcpyFromHost", "MemcpyToHost")


@dataclasses.dataclass
class CudaPlacement:
    memcpy_nodes: int  # copies between the CPU and the GPU ORT inserted
    opbridge_nodes: int  # opbridge nodes in the partitioned graph
    # "domain::op_type 'node name'" of every opbridge node that reads or feeds a copy
    opbridge_nodes_next_to_copies: list[str] = dataclasses.field(default_factory=list)

    @property
    def all_opbridge_nodes_on_gpu(self) -> bool:
        return not self.opbridge_nodes_next_to_copies


def copies_next_to_opbridge_nodes(partitioned: onnx.ModelProto) -> CudaPlacement:
    """The placement read from a graph as ORT writes it after partitioning (see the module docstring)."""
    graph = partitioned.graph
    copy_outputs = {o for n in graph.node if n.op_type in COPY_OPS for o in n.output}
    copy_inputs = {i for n in graph.node if n.op_type in COPY_OPS for i in n.input}
    registered = {(domain, name) for domain, name, _ in manifest.identities()}
    ours = [n for n in graph.node if (n.domain, n.op_type) in registered]
    next_to = [f"{n.domain}::{n.op_type} {n.name!r}" for n in ours
               if set(n.input) & copy_outputs or set(n.output) & copy_inputs]
    copies = sum(n.op_type in COPY_OPS for n in graph.node)
    return CudaPlacement(copies, len(ours), next_to)


def cuda_placement(model, options=None) -> CudaPlacement:
    """Creates a CUDA session for `model` (a path, bytes or onnx.ModelProto) with opbridge's library
    and reports where its opbridge nodes run."""
    import onnxruntime as ort

    from opbridge._library import CUDA, create_session

    options = options or ort.SessionOptions()
    # Basic optimizations only: the partitioned graph is written as ORT assigns it, without the
    # layout-specific fusions that cannot be serialized.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "partitioned.onnx")
        options.optimized_model_filepath = path
        create_session(model, options=options, providers=(CUDA,))
        return copies_next_to_opbridge_nodes(onnx.load(path, load_external_data=False))
