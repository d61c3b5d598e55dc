"""Instance normalization through the built library in ORT (opbridge::InstanceNorm,
mmcv::MMCVInstanceNormalization, ::MMCVInstanceNormalization, mmdeploy::TRTInstanceNormalization)
against a float64 reference written here from the formula; ONNX InstanceNormalization and
F.instance_norm; the graphs mmcv's TensorRT preprocessing and mmdeploy's TensorRT group_norm
symbolic write; export round trips with both exporters."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import helper

import opbridge
from graphs import (EXPORTERS, assert_close, cast_around, one_node_model, round_to, run, run_error, run_half,
                    session_error)
from opbridge import manifest
from opbridge.export import custom_nodes
from opbridge.tolerances import same_bits_but_nan, tolerance

f32 = np.float32
NAN, INF = float("nan"), float("inf")
IDENTITIES = manifest.load()["instance_norm"].identities
INPUTS = ["input", "scale", "B"]
OP = "group_norm"  # the tolerance of the kernel both ops share


def reference(x, scale, bias, epsilon=1e-5):
    """y = (x - mean) / sqrt(var + epsilon) * scale[c] + B[c], mean and biased variance per
    (sample, channel) over every dim after C, in float64."""
    x = np.asarray(x, np.float64)
    axes = tuple(range(2, x.ndim))
    per_channel = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x.mean(axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + float(f32(epsilon)))
    return y * np.asarray(scale, np.float64).reshape(per_channel) + np.asarray(bias, np.float64).reshape(per_channel)


def norm_model(identity="opbridge::InstanceNorm", epsilon=None):
    return one_node_model(identity, {} if epsilon is None else {"epsilon": epsilon}, INPUTS, ["output"])


def run_norm(x, scale, bias, identity="opbridge::InstanceNorm", epsilon=None):
    (out,) = run(norm_model(identity, epsilon), {"input": x, "scale": scale, "B": bias})
    assert out.dtype == np.float32 and out.shape == x.shape
    return out


def problem(rng, shape, mean=0.0):
    x = (mean + rng.standard_normal(shape)).astype(f32)
    return x, rng.standard_normal(shape[1]).astype(f32), rng.standard_normal(shape[1]).astype(f32)


def onnx_instance_norm(x, scale, bias, epsilon=1e-5):
    """ONNX InstanceNormalization, as ORT runs it (no custom op library)."""
    import onnxruntime as ort

    model = one_node_model("::InstanceNormalization", {"epsilon": epsilon}, INPUTS, ["output"])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input": x, "scale": scale, "B": bias})[0]


# --- sweeps through ORT ---------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 4, 5, 6), (2, 3, 4, 3, 5), (1, 2, 3, 2, 2, 2), (4, 5, 1, 1), (2, 3, 1)],
                         ids=str)
def test_matches_reference(identity, shape):
    rng = np.random.default_rng(sum(shape))
    x, scale, bias = problem(rng, shape)
    out = run_norm(x, scale, bias, identity)
    assert_close(out, reference(x, scale, bias), "float64_reference", OP)
    if np.prod(shape[2:]) > 1:  # planes of one value: var 0, and ORT's own kernel is ~1e-5 off there
        assert_close(out, onnx_instance_norm(x, scale, bias), "same_precision", OP)
        expected = F.instance_norm(torch.from_numpy(x), weight=torch.from_numpy(scale), bias=torch.from_numpy(bias))
        assert_close(out, expected.numpy(), "same_precision", OP)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_half_is_the_float32_result_rounded_once(identity, dtype):
    """float16 and bfloat16 input, scale and B: bit for bit the float32 op's output on the half
    values, rounded once, in both task layouts (many planes; few large planes, summed in chunks on
    both threads); a value past float16's 65,504 is infinite there and makes its plane NaN; and
    F.instance_norm in float32 on the half values, rounded, within the half tolerance. (PyTorch's own
    CPU kernel on half tensors is further off: it rounds its intermediate results to the half type;
    docs/ops/instance_norm.md.)"""
    rng = np.random.default_rng(5)
    for shape in [(6, 8, 5, 4), (1, 3, 70, 60)]:
        x, scale, bias = problem(rng, shape)
        x[0, 1, 2, 3] = 7e4
        model = one_node_model(identity, {}, INPUTS, ["output"], input_types={n: dtype for n in INPUTS})
        rounded = {n: round_to(v, dtype) for n, v in zip(INPUTS, (x, scale, bias))}
        if dtype == "bfloat16":
            model = cast_around(model, dtype, set(INPUTS), {"output"})
        (got,) = run_half(model, rounded, dtype)
        exact = run_norm(rounded["input"], rounded["scale"], rounded["B"], identity)
        assert same_bits_but_nan(round_to(exact, dtype), got)
        assert np.isnan(got[0, 1]).all() == (dtype == "float16")
        float32 = F.instance_norm(*(torch.from_numpy(rounded[n]) for n in ("input",)),
                                  weight=torch.from_numpy(rounded["scale"]), bias=torch.from_numpy(rounded["B"])).numpy()
        tol = tolerance("half", dtype)
        np.testing.assert_allclose(got, round_to(float32, dtype), rtol=tol.rtol, atol=tol.atol)


@pytest.mark.parametrize("epsilon", [0.0, 1e-3, 0.5])
def test_epsilon(epsilon):
    rng = np.random.default_rng(2)
    x, scale, bias = problem(rng, (2, 3, 8, 8))
    assert_close(run_norm(x, scale, bias, epsilon=epsilon), reference(x, scale, bias, epsilon), "float64_reference", OP)


@pytest.mark.parametrize("mean", [1e4, -3e5])
def test_large_mean_keeps_its_digits(mean):
    """Values mean + N(0, 1): ORT's InstanceNormalization and PyTorch are ~1e-3 to 1e-2 off at 1e4;
    the float64 statistics are not."""
    rng = np.random.default_rng(3)
    x, scale, bias = problem(rng, (2, 4, 40, 40), mean)
    assert_close(run_norm(x, scale, bias), reference(x, scale, bias), "float64_reference", OP)


def test_constant_planes_give_bias():
    x = np.repeat(np.arange(6, dtype=f32), 9).reshape(2, 3, 3, 3)
    scale, bias = np.array([1, 2, 3], f32), np.array([-1, 0, 4], f32)
    np.testing.assert_array_equal(run_norm(x, scale, bias), np.broadcast_to(bias[None, :, None, None], x.shape))
    assert np.isnan(run_norm(x, scale, bias, epsilon=0.0)).all()  # 0 / 0, as in PyTorch


def test_non_finite_values_spoil_their_plane_only():
    rng = np.random.default_rng(4)
    x, scale, bias = problem(rng, (2, 3, 4, 4))
    x[0, 1, 2, 2] = NAN
    x[1, 0, 0, 0] = INF
    x[1, 2, 3, 1] = -INF
    out = run_norm(x, scale, bias)
    bad = np.zeros((2, 3), bool)
    bad[0, 1] = bad[1, 0] = bad[1, 2] = True
    assert np.isnan(out[bad]).all() and not np.isnan(out[~bad]).any()
    assert_close(out, reference(x, scale, bias), "float64_reference", OP)


def test_shape_inference_keeps_the_input_shape_of_any_rank():
    """Of rank 5 (test_conformance.py infers the manifest's [N, C, H, W])."""
    model = one_node_model("opbridge::InstanceNorm", {}, INPUTS, ["output"],
                           input_shapes={"input": ["n", 3, "h", 5, 2], "scale": [3], "B": [3]})
    assert opbridge.create_session(model).get_outputs()[0].shape == ["n", 3, "h", 5, 2]


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES)
def test_bad_inputs_and_attributes(identity):
    prefix = f"{identity}: "
    for epsilon, shown in ((-1e-5, "-1e-05"), (NAN, "nan"), (-INF, "-inf")):
        assert f"{prefix}epsilon must be a finite number >= 0, got {shown}" in session_error(norm_model(identity, epsilon))
    ones, zeros = np.ones(3, f32), np.zeros(3, f32)
    model = norm_model(identity)
    message = run_error(model, {"input": np.zeros((2, 3), f32), "scale": ones, "B": zeros})
    assert f"{prefix}input must have rank >= 3 [N, C, D1, ...], got shape [2, 3]" in message
    x = np.zeros((2, 3, 4), f32)
    message = run_error(model, {"input": x, "scale": np.ones(4, f32), "B": zeros})
    assert f"{prefix}scale must have shape [C] = [3] (one value per channel), got shape [4]" in message
    message = run_error(model, {"input": x, "scale": ones, "B": np.zeros((3, 1), f32)})
    assert f"{prefix}B must have shape [C] = [3] (one value per channel), got shape [3, 1]" in message


# --- the peers' graphs ----------------------------------------------------------------------------


def legacy_export(model, args, opset=11, **kwargs) -> onnx.ModelProto:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buffer, dynamo=False, opset_version=opset, input_names=["x"],
                          output_names=["y"], **kwargs)
    return onnx.load_from_string(buffer.getvalue())


def mmcv_preprocess(model: onnx.ModelProto) -> onnx.ModelProto:
    """What mmcv.tensorrt.preprocess_onnx does to instance norm nodes: it renames the op type of
    every InstanceNormalization node in place (the domain stays "")."""
    for node in model.graph.node:
        if node.op_type == "InstanceNormalization":
            node.op_type = "MMCVInstanceNormalization"
    return model


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("domain", ["", "mmcv"])
def test_mmcv_tensorrt_graph(affine, domain):
    """An InstanceNorm2d model exported by torch at opset 11 (as mmcv 1.x exports), then renamed
    by mmcv's TensorRT preprocessing: the node keeps the default domain; with domain "mmcv" it is
    the same node in mmcv's domain."""
    torch.manual_seed(0)
    module = torch.nn.InstanceNorm2d(5, affine=affine, eps=1e-3).eval()
    if affine:
        with torch.no_grad():
            module.weight.normal_()
            module.bias.normal_()
    x = torch.randn(2, 5, 9, 7) * 2 + 3
    model = mmcv_preprocess(legacy_export(module, (x,), dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}}))
    if domain:
        for node in model.graph.node:
            if node.op_type == "MMCVInstanceNormalization":
                node.domain = domain
        model.opset_import.append(helper.make_opsetid(domain, 1))
    assert [(n.domain, n.op_type) for n in model.graph.node if "Instance" in n.op_type] == \
        [(domain, "MMCVInstanceNormalization")]
    session = opbridge.create_session(model)
    for inputs in (x, torch.randn(3, 5, 4, 11)):
        (y,) = session.run(None, {"x": inputs.numpy()})
        assert_close(y, module(inputs).detach().numpy(), "same_precision", OP)


def mmdeploy_group_norm_symbolic(g, input, num_groups, weight, bias, eps, cudnn_enabled):
    """mmdeploy's TensorRT symbolic of group_norm (mmdeploy/pytorch/symbolics/instance_norm.py,
    v1.3.1), rewritten here from what it does: Reshape [0, G, -1], TRTInstanceNormalization with
    unit scale and zero bias, Reshape back to the input's shape, Mul by the weight and Add the
    bias, both unsqueezed over the spatial axes."""
    from opbridge.ops._onnx import symbolic_helper

    helper_ = symbolic_helper()
    num_groups, eps = helper_._parse_arg(num_groups, "i"), helper_._parse_arg(eps, "f")
    rank = helper_._get_tensor_rank(input)
    reshaped = g.op("Reshape", input, g.op("Constant", value_t=torch.LongTensor([0, num_groups, -1])))
    unit = g.op("Constant", value_t=torch.tensor([1.0] * num_groups))
    zero = g.op("Constant", value_t=torch.tensor([0.0] * num_groups))
    norm = g.op("mmdeploy::TRTInstanceNormalization", reshaped, unit, zero, epsilon_f=eps)
    norm = g.op("Reshape", norm, g.op("Shape", input))
    if helper_._is_none(weight):
        weight = g.op("Constant", value_t=torch.tensor([1.0]))
    if helper_._is_none(bias):
        bias = g.op("Constant", value_t=torch.tensor([0.0]))
    axes = list(range(1, rank - 1))
    return g.op("Add", g.op("Mul", norm, helper_._unsqueeze_helper(g, weight, axes)),
                helper_._unsqueeze_helper(g, bias, axes))


@pytest.mark.parametrize("shape,groups,affine", [((2, 8, 6, 5), 4, True), ((3, 6, 10), 3, True),
                                                 ((2, 4, 3, 3, 3), 2, False), ((1, 16, 4, 4), 16, True)])
def test_mmdeploy_tensorrt_group_norm_graph(shape, groups, affine):
    """nn.GroupNorm exported at opset 11 with mmdeploy's TensorRT group_norm symbolic runs here and
    gives F.group_norm's result."""
    torch.manual_seed(1)
    module = torch.nn.GroupNorm(groups, shape[1], affine=affine).eval()
    if affine:
        with torch.no_grad():
            module.weight.normal_()
            module.bias.normal_()
    x = torch.randn(shape) + 2
    torch.onnx.register_custom_op_symbolic("aten::group_norm", mmdeploy_group_norm_symbolic, 11)
    try:
        model = legacy_export(module, (x,), custom_opsets={"mmdeploy": 1}, dynamic_axes={"x": {0: "n", 2: "d"}})
    finally:
        torch.onnx.unregister_custom_op_symbolic("aten::group_norm", 11)
    types = [(n.domain, n.op_type) for n in model.graph.node if n.op_type not in ("Constant",)]
    assert ("mmdeploy", "TRTInstanceNormalization") in types
    assert [t for _, t in types if t in ("Reshape", "TRTInstanceNormalization", "Mul", "Add")] == \
        ["Reshape", "TRTInstanceNormalization", "Reshape", "Mul", "Add"]
    session = opbridge.create_session(model)
    other = (shape[0] + 1, shape[1], shape[2] + 2) + shape[3:]
    for inputs in (x, torch.randn(other) * 3 - 1):
        (y,) = session.run(None, {"x": inputs.numpy()})
        assert_close(y, module(inputs).detach().numpy(), "same_precision", OP)


# --- export round trips ---------------------------------------------------------------------------


class InstanceNorms(torch.nn.Module):
    """Instance norm of every kind the exporters see: affine and not, F.instance_norm with weight
    only, and running statistics (which stay PyTorch's translation)."""

    def __init__(self, dims: int, channels=4):
        super().__init__()
        cls = {1: torch.nn.InstanceNorm1d, 2: torch.nn.InstanceNorm2d, 3: torch.nn.InstanceNorm3d}[dims]
        self.affine = cls(channels, affine=True, eps=1e-3)
        self.plain = cls(channels)
        self.running = cls(channels, track_running_stats=True)
        self.w = torch.nn.Parameter(torch.randn(channels))
        with torch.no_grad():
            self.affine.weight.normal_()
            self.affine.bias.normal_()
            self.running.running_mean.normal_()
            self.running.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.affine(x) + self.plain(x) + F.instance_norm(x, weight=self.w) + self.running(x)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("shape", [(2, 4, 9), (2, 4, 5, 6), (1, 4, 3, 4, 5)], ids=str)
def test_export_round_trip(exporter, shape):
    torch.manual_seed(0)
    model = InstanceNorms(len(shape) - 2).eval()
    x = torch.randn(shape) * 2 + 1
    # torch's legacy translation of running statistics needs static sizes, and its dynamo one
    # fails on an empty spatial dim (a Reshape to [1, -1, 0]).
    axes = {"x": {0: "n", 2: "d"}} if exporter == "dynamo" else None
    sizes = {"n": [3, 0], "d": [shape[2] + 2]} if exporter == "dynamo" else None
    report = opbridge.verify(model, (x,), exporter=exporter, dynamic_axes=axes, dynamic_sizes=sizes,
                             print_report=False)
    assert report.ok, str(report)
    assert set(report.custom_ops) == {"opbridge::InstanceNorm"} and len(report.custom_ops) >= 2


def test_standard_ops_and_compat_write_onnx_instance_normalization():
    import onnxruntime as ort

    torch.manual_seed(0)
    model, x = torch.nn.InstanceNorm2d(3, affine=True).eval(), torch.randn(2, 3, 6, 6)
    for kwargs in ({"standard_ops": ("instance_norm",)}, {"standard_ops": ("instance_norm",), "exporter": "legacy"},
                   {"compat": "mmcv"}, {"compat": "mmdeploy", "exporter": "legacy"}):
        proto = opbridge.export(model, (x,), **kwargs)
        assert not custom_nodes(proto) and "InstanceNormalization" in [n.op_type for n in proto.graph.node], kwargs
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        (actual,) = session.run(None, {"input": x.numpy()})
        np.testing.assert_allclose(actual, model(x).detach().numpy(), atol=1e-5)
