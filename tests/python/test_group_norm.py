"""Group normalization through the built library in ORT (opbridge::GroupNorm and the ONNX tutorial's
mydomain::mygroupnorm, mydomain::testgroupnorm, org.pytorch.mydomain::testgroupnorm) against a
float64 reference written here from the formula; F.group_norm; the tutorial's model exported
the tutorial's way; export round trips with both exporters."""

from __future__ import annotations

import io
import warnings

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F
from onnx import helper

import onnxscript
import opbridge
from onnxscript import FLOAT
from graphs import (EXPORTERS, assert_close, cast_around, one_node_model, round_to, run, run_error, run_half,
                    session_error)
from opbridge import manifest
from opbridge.export import custom_nodes
from opbridge.tolerances import same_bits_but_nan, tolerance

f32 = np.float32
NAN, INF = float("nan"), float("inf")
GROUP_NORM = manifest.load()["group_norm"]
# The ONNX tutorial's identities: num_groups is their second input.
TUTORIAL = [i for i in GROUP_NORM.identities if any(t.name == "num_groups" for t in GROUP_NORM.signature(i).inputs)]
OP = "group_norm"


def reference(x, num_groups, scale=None, bias=None, epsilon=1e-5):
    """y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c], mean and biased variance per
    (sample, group) over the group's channels and every spatial position, in float64."""
    x = np.asarray(x, np.float64)
    n, c = x.shape[:2]
    blocks = x.reshape(n, num_groups, -1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = blocks.mean(-1, keepdims=True)
        var = ((blocks - mean) ** 2).mean(-1, keepdims=True)
        y = ((blocks - mean) / np.sqrt(var + float(f32(epsilon)))).reshape(x.shape)
    per_channel = (1, c) + (1,) * (x.ndim - 2)
    if scale is not None:
        y = y * np.asarray(scale, np.float64).reshape(per_channel)
    if bias is not None:
        y = y + np.asarray(bias, np.float64).reshape(per_channel)
    return y


def group_norm_model(num_groups, epsilon=None, inputs=("input", "scale", "bias")):
    attrs = {"num_groups": num_groups} | ({} if epsilon is None else {"epsilon": epsilon})
    return one_node_model("opbridge::GroupNorm", attrs, list(inputs), ["output"])


def run_group_norm(x, num_groups, scale=None, bias=None, epsilon=None):
    names = ["input", "scale" if scale is not None else "", "bias" if bias is not None else ""]
    while names[-1] == "":
        names.pop()
    feeds = {n: v for n, v in (("input", x), ("scale", scale), ("bias", bias)) if v is not None}
    (out,) = run(group_norm_model(num_groups, epsilon, names), feeds)
    assert out.dtype == np.float32 and out.shape == x.shape
    return out


def tutorial_model(identity, epsilon=None):
    return one_node_model(identity, {} if epsilon is None else {"epsilon": epsilon},
                          ["input", "num_groups", "scale", "bias"], ["output"])


def run_tutorial(identity, x, num_groups, scale, bias, epsilon=None):
    feeds = {"input": x, "num_groups": np.array([num_groups], f32), "scale": scale, "bias": bias}
    (out,) = run(tutorial_model(identity, epsilon), feeds)
    return out


def problem(rng, shape, mean=0.0):
    x = (mean + rng.standard_normal(shape)).astype(f32)
    c = shape[1]
    return x, rng.standard_normal(c).astype(f32), rng.standard_normal(c).astype(f32)


# --- sweeps through ORT ---------------------------------------------------------------------------

SHAPES = [(2, 6), (2, 6, 7), (3, 12, 5, 4), (2, 4, 3, 2, 5), (1, 8, 1, 1), (2, 6, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("groups", ["one", "between", "per_channel"])
@pytest.mark.parametrize("affine", ["both", "scale", "bias", "none"])
def test_matches_reference(shape, groups, affine):
    rng = np.random.default_rng(len(shape) * 100 + shape[1])
    x, scale, bias = problem(rng, shape)
    g = {"one": 1, "between": shape[1] // 2, "per_channel": shape[1]}[groups]
    scale = scale if affine in ("both", "scale") else None
    bias = bias if affine in ("both", "bias") else None
    out = run_group_norm(x, g, scale, bias)
    assert_close(out, reference(x, g, scale, bias), "float64_reference", OP)
    if x.size // (shape[0] * g) == 1:
        return  # groups of one value: PyTorch refuses some ([1, C, 1, 1]) and is 1e-5 off on others
    # F.group_norm computes the same thing in float32.
    expected = F.group_norm(torch.from_numpy(x), g, None if scale is None else torch.from_numpy(scale),
                            None if bias is None else torch.from_numpy(bias)).numpy()
    assert_close(out, expected, "same_precision", OP)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("identity", GROUP_NORM.identities)
def test_half_is_the_float32_result_rounded_once(identity, dtype):
    """float16 and bfloat16 input, scale and bias (and the tutorial's num_groups): bit for bit the
    float32 op's output on the half values, rounded once, in both task layouts (many groups; one
    sample's few large groups, summed in chunks on both threads); a value past float16's 65,504 is
    infinite there and makes its group NaN. F.group_norm in float32 on the half values, rounded, is
    within the half tolerance, and so is PyTorch's own half kernel (F.group_norm on half tensors,
    which computes in float32 too)."""
    rng = np.random.default_rng(7)
    for shape, groups in [((6, 12, 5, 4), 6), ((1, 4, 60, 50), 2)]:
        x, scale, bias = problem(rng, shape)
        x[0, 1, 2, 3] = 7e4
        tutorial = identity in TUTORIAL
        names = ["input", "num_groups", "scale", "bias"] if tutorial else ["input", "scale", "bias"]
        attrs = {} if tutorial else {"num_groups": groups}
        model = one_node_model(identity, attrs, names, ["output"], input_types={n: dtype for n in names})
        feeds = {"input": x, "scale": scale, "bias": bias} | ({"num_groups": np.array([groups], f32)} if tutorial else {})
        rounded = {n: round_to(v, dtype) for n, v in feeds.items()}
        if dtype == "bfloat16":
            model = cast_around(model, dtype, set(names), {"output"})
        (got,) = run_half(model, rounded, dtype)
        (exact,) = run(one_node_model(identity, attrs, names, ["output"]), rounded)
        assert same_bits_but_nan(round_to(exact, dtype), got)
        assert np.isnan(got[0, 1 // (shape[1] // groups) * (shape[1] // groups)]).all() == (dtype == "float16")
        torch_dtype = getattr(torch, dtype)
        t = {n: torch.from_numpy(rounded[n]) for n in ("input", "scale", "bias")}
        float32 = F.group_norm(t["input"], groups, t["scale"], t["bias"]).numpy()
        tol = tolerance("half", dtype)
        np.testing.assert_allclose(got, round_to(float32, dtype), rtol=tol.rtol, atol=tol.atol)
        half = F.group_norm(*(t[n].to(torch_dtype) for n in ("input",)), groups,
                            *(t[n].to(torch_dtype) for n in ("scale", "bias"))).float().numpy()
        np.testing.assert_allclose(got, half, rtol=tol.rtol, atol=tol.atol)


@pytest.mark.parametrize("identity", TUTORIAL)
@pytest.mark.parametrize("shape,groups", [((3, 2, 1, 2), 2), ((2, 6, 5), 3), ((2, 8, 3, 3), 1), ((1, 4, 2, 2, 2), 4)])
def test_tutorial_identities_match_reference(identity, shape, groups):
    rng = np.random.default_rng(shape[1] + groups)
    x, scale, bias = problem(rng, shape)
    out = run_tutorial(identity, x, groups, scale, bias, epsilon=1e-5)
    assert_close(out, reference(x, groups, scale, bias), "float64_reference", OP)


def test_tutorials_own_example():
    """The tutorial's test (ort_custom_op/custom_op_test.cc): X [3, 2, 1, 2], num_groups 2, scale
    [2, 1], bias [1, 0]; its expected values, printed to 4 decimals, are those of epsilon 1e-5."""
    x = np.array([1.5410, -0.2934, -2.1788, 0.5684, -1.0845, -1.3986, 0.4033, 0.8380, -0.7193, -0.4033, -0.5966,
                  0.1820], f32).reshape(3, 2, 1, 2)
    expected = np.array([3.0000, -1.0000, -1.0000, 1.0000, 2.9996, -0.9996, -0.9999, 0.9999, -0.9996, 2.9996,
                         -1.0000, 1.0000]).reshape(3, 2, 1, 2)
    for identity in TUTORIAL:
        out = run_tutorial(identity, x, 2, np.array([2, 1], f32), np.array([1, 0], f32), epsilon=1e-5)
        np.testing.assert_allclose(out, expected, atol=5e-5)
        # Without the attribute, epsilon is 1e-5 too.
        np.testing.assert_array_equal(run_tutorial(identity, x, 2, np.array([2, 1], f32), np.array([1, 0], f32)), out)


def test_num_groups_may_be_a_scalar():
    rng = np.random.default_rng(3)
    x, scale, bias = problem(rng, (2, 6, 4))
    feeds = {"input": x, "num_groups": np.array(3, f32), "scale": scale, "bias": bias}
    (out,) = run(tutorial_model("mydomain::mygroupnorm"), feeds)
    assert_close(out, reference(x, 3, scale, bias), "float64_reference", OP)


@pytest.mark.parametrize("mean", [1e4, -2.5e5])
def test_large_mean_keeps_its_digits(mean):
    """Values mean + N(0, 1): the naive float32 E[x^2] - E[x]^2 loses every digit of the variance
    (and PyTorch's float32 group_norm is ~1e-3 off at 1e4); the float64 statistics are not."""
    rng = np.random.default_rng(7)
    x, scale, bias = problem(rng, (2, 8, 30, 30), mean)
    for g in (1, 4, 8):
        assert_close(run_group_norm(x, g, scale, bias), reference(x, g, scale, bias), "float64_reference", OP)


def test_spatial_size_one_and_constant_groups():
    """A group of one value, or of equal values, has variance 0: y = bias. With epsilon 0 it is
    0 / 0 = NaN, as in PyTorch."""
    x = np.arange(12, dtype=f32).reshape(2, 6, 1)
    scale, bias = np.full(6, 3, f32), np.arange(6, dtype=f32) - 2
    out = run_group_norm(x, 6, scale, bias)
    np.testing.assert_array_equal(out, np.broadcast_to(bias[None, :, None], x.shape))
    assert np.isnan(run_group_norm(x, 6, scale, bias, epsilon=0.0)).all()
    equal = np.full((1, 4, 3, 3), 2.5, f32)
    np.testing.assert_array_equal(run_group_norm(equal, 2), np.zeros_like(equal))
    expected = F.group_norm(torch.from_numpy(x), 6, torch.from_numpy(scale), torch.from_numpy(bias), eps=0.0)
    assert torch.isnan(expected).all()


def test_non_finite_values_spoil_their_group_only():
    rng = np.random.default_rng(5)
    x, scale, bias = problem(rng, (3, 4, 5, 5))
    x[0, 1, 2, 3] = NAN       # sample 0, group 0
    x[1, 2, 0, 0] = INF       # sample 1, group 1 (its first value)
    x[2, 0, 4, 4] = -INF      # sample 2, group 0
    out = run_group_norm(x, 2, scale, bias)
    expected = reference(x, 2, scale, bias)
    assert np.isnan(out[0, :2]).all() and np.isnan(out[1, 2:]).all() and np.isnan(out[2, :2]).all()
    assert_close(out, expected, "float64_reference", OP)
    torch_out = F.group_norm(torch.from_numpy(x), 2, torch.from_numpy(scale), torch.from_numpy(bias)).numpy()
    np.testing.assert_array_equal(np.isnan(out), np.isnan(torch_out))


# --- errors ---------------------------------------------------------------------------------------


def test_bad_attributes_fail_the_session():
    prefix = "opbridge::GroupNorm: "
    for groups in (0, -3):
        assert f"{prefix}num_groups must be >= 1, got {groups}" in session_error(group_norm_model(groups))
    for epsilon, shown in ((-1e-3, "-0.001"), (NAN, "nan"), (INF, "inf")):
        assert f"{prefix}epsilon must be a finite number >= 0, got {shown}" in session_error(
            group_norm_model(2, epsilon))
    assert "mydomain::mygroupnorm: epsilon must be a finite number >= 0, got -1" in session_error(
        tutorial_model("mydomain::mygroupnorm", -1.0))


def test_bad_shapes_fail_the_run():
    prefix = "opbridge::GroupNorm: "
    x = np.zeros((2, 6, 3), f32)
    message = run_error(group_norm_model(4, inputs=["input"]), {"input": x})
    assert f"{prefix}the channel count C = 6 of input [2, 6, 3] must be divisible by num_groups = 4" in message
    message = run_error(group_norm_model(1, inputs=["input"]), {"input": np.zeros(5, f32)})
    assert f"{prefix}input must have rank >= 2 [N, C, ...], got shape [5]" in message
    message = run_error(group_norm_model(2), {"input": x, "scale": np.ones(5, f32), "bias": np.zeros(6, f32)})
    assert f"{prefix}scale must have shape [C] = [6] (one value per channel), got shape [5]" in message
    message = run_error(group_norm_model(2), {"input": x, "scale": np.ones(6, f32), "bias": np.zeros((1, 6), f32)})
    assert f"{prefix}bias must have shape [C] = [6] (one value per channel), got shape [1, 6]" in message


@pytest.mark.parametrize("identity", TUTORIAL)
def test_bad_num_groups_tensor_fails_the_run(identity):
    x = np.zeros((2, 6, 3), f32)
    ones, zeros = np.ones(6, f32), np.zeros(6, f32)
    model = tutorial_model(identity)
    for value, shown in ((2.5, "2.5"), (0.0, "0"), (-2.0, "-2"), (NAN, "nan"), (INF, "inf"), (1e30, "1e+30")):
        message = run_error(model, {"input": x, "num_groups": np.array([value], f32), "scale": ones, "bias": zeros})
        assert f"{identity}: num_groups must hold a positive integer value, got {shown}" in message
    message = run_error(model, {"input": x, "num_groups": np.array([4], f32), "scale": ones, "bias": zeros})
    assert f"{identity}: the channel count C = 6 of input [2, 6, 3] must be divisible by num_groups = 4" in message
    message = run_error(model, {"input": x, "num_groups": np.array([2, 3], f32), "scale": ones, "bias": zeros})
    assert f"{identity}: num_groups must be a float32 tensor of shape [1] (or a scalar), got shape [2]" in message
    message = run_error(model, {"input": x, "num_groups": np.array([2], f32), "scale": ones[:3], "bias": zeros})
    assert f"{identity}: scale must have shape [C] = [6] (one value per channel), got shape [3]" in message


# --- the ONNX tutorial's model, exported the tutorial's way --------------------------------------


@torch.library.custom_op("mynamespace::custom_group_norm", mutates_args=())
def custom_group_norm(x: torch.Tensor, num_groups: torch.Tensor, scale: torch.Tensor, bias: torch.Tensor,
                      eps: float) -> torch.Tensor:
    """Stands in for the tutorial's TorchScript C++ extension (same schema, per-channel affine)."""
    return F.group_norm(x, int(num_groups[0]), scale, bias, eps)


@custom_group_norm.register_fake
def _(x, num_groups, scale, bias, eps):
    return torch.empty_like(x)


class CustomModel(torch.nn.Module):
    """The tutorial's CustomModel (export_custom_op.py), with an epsilon of our choice."""

    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x, num_groups, scale, bias):
        return torch.ops.mynamespace.custom_group_norm(x, num_groups, scale, bias, self.eps)


def tutorial_inputs(shape=(3, 2, 1, 2), groups=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    c = shape[1]
    return (torch.randn(shape, generator=g), torch.tensor([float(groups)]), torch.randn(c, generator=g),
            torch.randn(c, generator=g))


@pytest.mark.parametrize("node,eps", [("mydomain::testgroupnorm", 0.0), ("mydomain::mygroupnorm", 1e-5)])
def test_tutorial_model_exported_with_the_legacy_exporter(node, eps):
    """register_custom_op_symbolic at opset 9, the node as the tutorial's files write it:
    export_custom_op.py writes mydomain::testgroupnorm with epsilon_f=0., the README
    mydomain::mygroupnorm with epsilon_f=eps."""
    def my_group_norm(g, input, num_groups, scale, bias, eps_value):
        epsilon = 0.0 if node.endswith("testgroupnorm") else symbolic_eps(eps_value)
        return g.op(node, input, num_groups, scale, bias, epsilon_f=epsilon)

    torch.onnx.register_custom_op_symbolic("mynamespace::custom_group_norm", my_group_norm, 9)
    try:
        buffer = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(CustomModel(eps), tutorial_inputs(), buffer, dynamo=False, opset_version=9,
                              input_names=["X", "num_groups", "scale", "bias"], output_names=["Y"],
                              custom_opsets={"mydomain": 1},
                              dynamic_axes={"X": {0: "n", 1: "c", 2: "h", 3: "w"}, "scale": {0: "c"}, "bias": {0: "c"}})
    finally:
        torch.onnx.unregister_custom_op_symbolic("mynamespace::custom_group_norm", 9)
    model = onnx.load_from_string(buffer.getvalue())
    assert custom_nodes(model) == [node]
    attrs = {a.name: helper.get_attribute_value(a) for a in model.graph.node[0].attribute}
    assert attrs == {"epsilon": pytest.approx(eps)}
    session = opbridge.create_session(model)
    for shape, groups in [((3, 2, 1, 2), 2), ((2, 6, 4, 5), 3), ((4, 8, 9, 1), 1)]:
        x, num_groups, scale, bias = tutorial_inputs(shape, groups, seed=groups)
        (y,) = session.run(None, {"X": x.numpy(), "num_groups": num_groups.numpy(), "scale": scale.numpy(),
                                  "bias": bias.numpy()})
        assert_close(y, F.group_norm(x, groups, scale, bias, eps).numpy(), "same_precision", OP)


def symbolic_eps(value) -> float:
    from opbridge.ops._onnx import symbolic_helper

    return symbolic_helper()._parse_arg(value, "f")


MYDOMAIN = onnxscript.values.Opset("mydomain", 1)


@onnxscript.script(onnxscript.values.Opset("tutorial.export", 1))
def _mygroupnorm_onnx(x: FLOAT, num_groups: FLOAT, scale: FLOAT, bias: FLOAT, eps: float) -> FLOAT:
    return MYDOMAIN.mygroupnorm(x, num_groups, scale, bias, epsilon=eps)


def test_tutorial_model_exported_with_the_dynamo_exporter():
    """The dynamo exporter takes a translation of the custom op to mydomain::mygroupnorm."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(
            CustomModel(1e-5), tutorial_inputs(), dynamo=True,
            custom_translation_table={torch.ops.mynamespace.custom_group_norm.default: _mygroupnorm_onnx},
            input_names=["X", "num_groups", "scale", "bias"], output_names=["Y"], report=False, verbose=False)
    model = program.model_proto
    assert custom_nodes(model) == ["mydomain::mygroupnorm"]
    session = opbridge.create_session(model)
    x, num_groups, scale, bias = tutorial_inputs((3, 2, 1, 2), 2, seed=4)
    (y,) = session.run(None, {"X": x.numpy(), "num_groups": num_groups.numpy(), "scale": scale.numpy(),
                              "bias": bias.numpy()})
    assert_close(y, F.group_norm(x, 2, scale, bias, 1e-5).numpy(), "same_precision", OP)


# --- export round trips ---------------------------------------------------------------------------


class GroupNormModules(torch.nn.Module):
    """nn.GroupNorm with and without affine, and F.group_norm with weight only and bias only."""

    def __init__(self, channels=8):
        super().__init__()
        self.affine = torch.nn.GroupNorm(4, channels)
        self.plain = torch.nn.GroupNorm(2, channels, affine=False, eps=1e-3)
        self.w = torch.nn.Parameter(torch.randn(channels))
        self.b = torch.nn.Parameter(torch.randn(channels))
        with torch.no_grad():
            self.affine.weight.normal_()
            self.affine.bias.normal_()

    def forward(self, x):
        return (self.affine(x) + self.plain(x) + F.group_norm(x, 8, self.w) + F.group_norm(x, 1, None, self.b))


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("shape", [(2, 8, 5, 6), (3, 8, 7), (1, 8, 2, 3, 4)], ids=str)
def test_export_round_trip(exporter, shape):
    torch.manual_seed(0)
    model = GroupNormModules().eval()
    x = torch.randn(shape) * 3 + 1
    axes = {"x": {0: "n", 2: "d2"}}
    report = opbridge.verify(model, (x,), exporter=exporter, dynamic_axes=axes, print_report=False)
    assert report.ok, str(report)
    assert report.custom_ops == ["opbridge::GroupNorm"] * 4


def test_export_writes_the_node_with_its_attributes():
    torch.manual_seed(0)
    for exporter in EXPORTERS:
        proto = opbridge.export(GroupNormModules().eval(), (torch.randn(2, 8, 3, 3),), exporter=exporter)
        nodes = [n for n in proto.graph.node if n.domain == "opbridge"]
        found = sorted((len(n.input), {a.name: round(helper.get_attribute_value(a), 6) for a in n.attribute}["num_groups"],
                        n.input[1] == "" if len(n.input) == 3 else None) for n in nodes)
        # (inputs, num_groups, scale left out): affine (3, 4), plain (1, 2), weight only (2, 8),
        # bias only (3, 1) with an empty scale.
        assert found == [(1, 2, None), (2, 8, None), (3, 1, True), (3, 4, False)], (exporter, found)
        epsilons = sorted(round(helper.get_attribute_value(a), 7) for n in nodes for a in n.attribute
                          if a.name == "epsilon")
        assert epsilons == [1e-5, 1e-5, 1e-5, 1e-3], exporter


def test_standard_ops_and_compat_write_pytorchs_chain():
    """standard_ops=("group_norm",) and compat write what PyTorch writes: Reshape ->
    InstanceNormalization -> Reshape -> Mul -> Add, which ORT runs itself."""
    import onnxruntime as ort

    torch.manual_seed(0)
    model, x = torch.nn.GroupNorm(4, 8).eval(), torch.randn(2, 8, 5, 5)
    for kwargs in ({"standard_ops": ("group_norm",)}, {"standard_ops": ("group_norm",), "exporter": "legacy"},
                   {"compat": "mmdeploy"}, {"compat": "mmcv"}, {"compat": "mmcv", "exporter": "legacy"}):
        proto = opbridge.export(model, (x,), **kwargs)
        types = [n.op_type for n in proto.graph.node]
        assert not custom_nodes(proto) and "InstanceNormalization" in types, (kwargs, types)
        session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
        (actual,) = session.run(None, {"input": x.numpy()})
        np.testing.assert_allclose(actual, model(x).detach().numpy(), atol=1e-5)


def test_legacy_override_is_scoped_to_the_call():
    """After opbridge's legacy export, torch's own legacy export of GroupNorm writes its chain again."""
    opbridge.export(torch.nn.GroupNorm(2, 4), (torch.randn(1, 4, 3, 3),), exporter="legacy")
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(torch.nn.GroupNorm(2, 4), (torch.randn(1, 4, 3, 3),), buffer, dynamo=False, opset_version=17)
    assert "InstanceNormalization" in [n.op_type for n in onnx.load_from_string(buffer.getvalue()).graph.node]
