"""Building one-node ONNX models and running them through the built library in ORT."""

from __future__ import annotations

import ml_dtypes  # onnx's dependency: numpy has no bfloat16
import numpy as np
import onnx
from onnx import TensorProto, helper

import cuda_twins
import opbridge

ELEM = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int64"): TensorProto.INT64}

# The two torch exporters (opbridge.export's exporter=...); the export tests run with each.
EXPORTERS = ["dynamo", "legacy"]


def onnx_type(dtype: str) -> int:
    """The ONNX element type of a numpy dtype name ("float32", "int64", "bool", ...), or of
    "bfloat16" (which numpy lacks)."""
    if dtype == "bfloat16":
        return TensorProto.BFLOAT16
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def one_node_model(
    identity: str,
    attrs: dict,
    inputs: list[str],
    outputs: list[str],
    input_shapes: dict | None = None,
    default_opset: int = 17,
    ir_version: int = 8,
    input_types: dict | None = None,
) -> onnx.ModelProto:
    """A model with a single node `identity` ("domain::OpType"). Graph inputs have the shapes given
    in input_shapes (None: unknown rank) and are float32 unless input_types names another dtype
    ("int64", ...); "" in `inputs` leaves an optional input out. Outputs are left untyped for ORT
    to infer."""
    domain, op_type = identity.split("::")
    node = helper.make_node(op_type, inputs, outputs, domain=domain, **attrs)
    input_shapes = input_shapes or {}
    graph = helper.make_graph(
        [node], "one_node",
        [helper.make_tensor_value_info(n, onnx_type((input_types or {}).get(n, "float32")), input_shapes.get(n))
         for n in inputs if n],
        [helper.make_value_info(n, onnx.TypeProto()) for n in outputs],
    )
    # An op in the default domain "" (mmcv's renamed MMCVInstanceNormalization) takes its opset.
    opsets = [helper.make_opsetid("", default_opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)


def round_to(values: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded to the nearest `dtype` value ("float16" or "bfloat16"; ties to even,
    as torch and the kernels round), as float32."""
    target = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float16
    with np.errstate(over="ignore"):  # beyond the largest half value: infinity, as intended
        return np.asarray(values, dtype=np.float32).astype(target).astype(np.float32)


def cast_around(model: onnx.ModelProto, dtype: str, inputs: set, outputs: set) -> onnx.ModelProto:
    """`model` (one node) with its graph inputs `inputs` and outputs `outputs` in `dtype` behind Cast
    nodes from and to float32 graph inputs and outputs, of the same names: how the tests feed and
    read bfloat16, which ORT's Python API cannot (numpy has no bfloat16). The float32 values fed
    must be `dtype` values (then both casts are exact)."""
    node = onnx.NodeProto()
    node.CopyFrom(model.graph.node[0])
    node.input[:] = [f"{n}_t" if n in inputs else n for n in node.input]
    node.output[:] = [f"{n}_t" if n in outputs else n for n in node.output]
    casts = [helper.make_node("Cast", [n], [f"{n}_t"], to=onnx_type(dtype)) for n in sorted(inputs)]
    casts_back = [helper.make_node("Cast", [f"{n}_t"], [n], to=TensorProto.FLOAT) for n in sorted(outputs)]
    graph_inputs = []
    for value in model.graph.input:
        copy = onnx.ValueInfoProto()
        copy.CopyFrom(value)
        if value.name in inputs:
            copy.type.tensor_type.elem_type = TensorProto.FLOAT
        graph_inputs.append(copy)
    graph = helper.make_graph(casts + [node] + casts_back, model.graph.name, graph_inputs, list(model.graph.output))
    return helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)


def run_half(model: onnx.ModelProto, feeds: dict, dtype: str) -> list[np.ndarray]:
    """The outputs of `model`, whose inputs are `dtype` (float16, or bfloat16 behind cast_around), on
    the float32 `feeds` rounded to `dtype`, as float32 arrays (a float16 output checked to be float16)."""
    rounded = {name: round_to(value, dtype) for name, value in feeds.items()}
    if dtype == "float16":
        rounded = {name: value.astype(np.float16) for name, value in rounded.items()}
    outputs = run(model, rounded)
    for out in outputs:
        assert out.dtype == (np.float16 if dtype == "float16" else np.float32), out.dtype
    return [out.astype(np.float32) for out in outputs]


def ort_minor() -> int:
    """The minor version of the onnxruntime under test (1.x): the library works around some older
    runtimes' defects by inferring fewer shapes there."""
    import onnxruntime

    return int(onnxruntime.__version__.split(".")[1])


def session(model: onnx.ModelProto, threads: int = 1, provider: str = "CPU"):
    """A session for `model` on `provider`: "CPU", or "CUDA" (ORT's CUDA execution provider: the
    nodes with a CUDA kernel run on the GPU, ./run.sh test-gpu only)."""
    if provider == "CUDA":
        return _cuda_session(model, threads)
    assert provider == "CPU", provider
    return opbridge.create_session(model, intra_op_threads=threads)


def run(model: onnx.ModelProto, feeds: dict, threads: int = 1, provider: str = "CPU") -> list[np.ndarray]:
    outputs = session(model, threads, provider).run(None, feeds)
    kernels = cuda_twins.cuda_kernels(model) if cuda_twins.ENABLED and provider == "CPU" else []
    if kernels:  # ./run.sh test-gpu: the CUDA twin must give the same outputs
        cuda = _cuda_session(model).run(None, feeds)
        cuda_twins.compare_outputs(kernels[0], outputs, cuda)
    return outputs


def _cuda_session(model: onnx.ModelProto, threads: int | None = None):
    return opbridge.create_session(model, intra_op_threads=threads, providers=("CUDAExecutionProvider",))


def session_error(model: onnx.ModelProto, provider: str = "CPU") -> str:
    """The message of the error creating a session for `model` (fails the test if none)."""
    try:
        session(model, provider=provider)
    except Exception as e:  # ORT raises its own pybind exception types
        kernels = cuda_twins.cuda_kernels(model) if cuda_twins.ENABLED and provider == "CPU" else []
        if kernels:  # ./run.sh test-gpu: the CUDA twin must refuse the model alike
            try:
                _cuda_session(model)
            except Exception as cuda_error:
                cuda_twins.compare_errors(kernels[0], str(e), str(cuda_error), None)
            else:
                raise AssertionError(f"the CPU session fails ({e}) but the CUDA session was created") from None
        return str(e)
    raise AssertionError("expected the session creation to fail")


def run_error(model: onnx.ModelProto, feeds: dict, provider: str = "CPU") -> str:
    """The message of the error running `model` on `feeds` (fails the test if none)."""
    created = session(model, provider=provider)
    try:
        created.run(None, feeds)
    except Exception as e:
        kernels = cuda_twins.cuda_kernels(model) if cuda_twins.ENABLED and provider == "CPU" else []
        if kernels:  # ./run.sh test-gpu: the CUDA twin must fail alike (or give its defined result)
            cuda_error, cuda_outputs = None, None
            try:
                cuda_outputs = _cuda_session(model).run(None, feeds)
            except Exception as error:
                cuda_error = str(error)
            cuda_twins.compare_errors(kernels[0], str(e), cuda_error, cuda_outputs)
        return str(e)
    raise AssertionError("expected the run to fail")


def assert_close(actual: np.ndarray, expected: np.ndarray, comparison: str, op: str = "*") -> None:
    """Compares with opbridge's tolerance table entry (op, comparison, actual's dtype); NaNs must match."""
    tol = opbridge.tolerances.tolerance(comparison, actual.dtype, op)
    np.testing.assert_allclose(
        actual.astype(np.float64), np.asarray(expected, dtype=np.float64), rtol=tol.rtol, atol=tol.atol,
        equal_nan=True, err_msg=f"{op} {comparison}",
    )


def pytorch_interpolation_is_fused() -> bool:
    """Whether PyTorch runs its AVX2 / AVX-512 builds of F.interpolate here, whose fused multiply-adds
    PasteMasks and HeatmapsToKeypoints reproduce bit for bit (src/kernels/cpu/interpolate.h): what
    PyTorch runs on every x86-64 CPU with AVX2. Its unfused build (a CPU without AVX2, or
    ATEN_CPU_CAPABILITY=default) differs in the last bits, so a test compares with it through the
    tolerance table instead."""
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    return "AVX2" in capability or "AVX512" in capability


def assert_matches_fused_interpolation(actual: np.ndarray, expected: np.ndarray, op: str) -> None:
    """actual == expected bit for bit where PyTorch's interpolation is fused (see above), else within
    the tolerance table's same_precision entry of `op`."""
    if pytorch_interpolation_is_fused():
        np.testing.assert_array_equal(actual, expected)
    else:
        assert_close(actual, expected, "same_precision", op)

