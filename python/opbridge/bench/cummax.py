"""Cumulative maximum workloads (workloads.md: cummax.rows): opbridge::CumMax / CumMin against
torch.cummax / torch.cummin and, as ORT has no such op, against the best standard-ONNX formulation
run in ORT: a log-step (Hillis-Steele) scan of ceil(log2(L)) rounds, each shifting values and
indices by 2^k along the axis (Slice + Pad with -inf / +inf and index 0) and keeping the later
element where it replaces the earlier one (GreaterOrEqual / LessOrEqual, IsNaN, Or, Where): the
same results as torch.cummax, ties and NaN included (the rule is associative)."""

from __future__ import annotations

import math

import numpy as np

from opbridge.bench.harness import (F32, I64, ONNX_OPSET, Case, as_tensor, data_rng, one_node_model, ort_engine, sized,
                                    torch_engine)


def log_step_scan_model(shape: tuple[int, ...], axis: int, minimum: bool, reverse: bool, with_indices: bool):
    """The standard-ONNX running maximum (minimum) of x along `axis` (from the last element when
    `reverse`), as a model with input "x" and outputs "values" (and "indices")."""
    from onnx import TensorProto, checker, helper, numpy_helper

    rank, length = len(shape), shape[axis]
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    identity = const("identity", np.array(math.inf if minimum else -math.inf, np.float32))
    zero = const("zero", np.array(0, np.int64)) if with_indices else None
    compare = "LessOrEqual" if minimum else "GreaterOrEqual"
    values = "x"
    indices = None
    if with_indices:
        positions = np.arange(length, dtype=np.int64).reshape([length] + [1] * (rank - axis - 1))
        nodes.append(helper.make_node("Shape", ["x"], ["x_shape"]))
        nodes.append(helper.make_node("Expand", [const("positions", positions), "x_shape"], ["indices_0"]))
        indices = "indices_0"
    step, k = 1, 0
    while step < length:
        # The element `step` earlier in scan order, identity where there is none.
        starts, ends = (step, length) if reverse else (0, length - step)
        pads = [0] * (2 * rank)
        pads[axis + (rank if reverse else 0)] = step
        slice_args = [const(f"starts_{k}", [starts]), const(f"ends_{k}", [ends]), const(f"axes_{k}", [axis])]
        pads_name = const(f"pads_{k}", pads)

        def shifted(name, fill):
            nodes.append(helper.make_node("Slice", [name] + slice_args, [f"{name}_cut_{k}"]))
            nodes.append(helper.make_node("Pad", [f"{name}_cut_{k}", pads_name, fill], [f"{name}_earlier_{k}"]))
            return f"{name}_earlier_{k}"

        earlier = shifted(values, identity)
        nodes.append(helper.make_node(compare, [values, earlier], [f"better_{k}"]))
        nodes.append(helper.make_node("IsNaN", [values], [f"nan_{k}"]))
        nodes.append(helper.make_node("Or", [f"better_{k}", f"nan_{k}"], [f"take_{k}"]))
        nodes.append(helper.make_node("Where", [f"take_{k}", values, earlier], [f"values_{k + 1}"]))
        if with_indices:
            earlier_indices = shifted(indices, zero)
            nodes.append(helper.make_node("Where", [f"take_{k}", indices, earlier_indices], [f"indices_{k + 1}"]))
            indices = f"indices_{k + 1}"
        values = f"values_{k + 1}"
        step, k = step * 2, k + 1
    nodes.append(helper.make_node("Identity", [values], ["values"]))
    outputs = [helper.make_tensor_value_info("values", TensorProto.FLOAT, list(shape))]
    if with_indices:
        nodes.append(helper.make_node("Identity", [indices], ["indices"]))
        outputs.append(helper.make_tensor_value_info("indices", TensorProto.INT64, list(shape)))
    graph = helper.make_graph(nodes, "log_step_scan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    model.ir_version = 8
    checker.check_model(model)
    return model


def _torch_scan(x, dim, minimum):
    import torch

    return (torch.cummin if minimum else torch.cummax)(as_tensor(x), dim)


def cummax_rows(threads: int) -> list[Case]:
    """cummax.rows: [1,128,256,256] along dim 3 (each row a scan) and dim 2; cummin along dim 3."""
    x = data_rng(21).standard_normal(sized((1, 128, 256, 256), (1, 4, 32, 32)), dtype=np.float32)
    cases = []
    for dim, minimum in ((3, False), (2, False), (3, True)):
        op_type = "CumMin" if minimum else "CumMax"
        ours = one_node_model(op_type, [("input", F32, x.shape)], [("values", F32, x.shape), ("indices", I64, x.shape)],
                              domain="opbridge", dim=dim)
        cases.append(Case(
            name=f"cummax.rows {op_type} dim={dim}",
            opbridge=ort_engine(ours, {"input": x}, threads),
            ort=ort_engine(log_step_scan_model(x.shape, dim, minimum, False, True), {"x": x}, threads),
            torch=torch_engine(_torch_scan, x, dim, minimum),
        ))
    return cases


WORKLOADS = {
    "cummax.rows": cummax_rows,
}
