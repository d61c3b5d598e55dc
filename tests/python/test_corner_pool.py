"""Corner pooling through the built library in ORT (opbridge::CornerPool, mmcv::MMCVCornerPool) and
the eager PyTorch op (opbridge.ops.corner_pool, mmcv's torch.cummax formulation), against a
reference written here from the mode definitions (section 5.8 of the compatibility reference);
mmcv's graphs; export round trips with both exporters and compat="mmcv"."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge
import opbridge.ops
from graphs import EXPORTERS, assert_close, one_node_model, run, run_error
from opbridge import manifest
from opbridge.export import custom_nodes

NAN, INF = float("nan"), float("inf")
IDENTITIES = manifest.load()["corner_pool"].identities
MODES = {"top": 0, "bottom": 1, "left": 2, "right": 3}


def pool_model(identity, mode):
    return one_node_model(identity, {"mode": mode}, ["input"], ["output"])


def run_pool(identity, x, mode):
    (out,) = run(pool_model(identity, mode), {"input": x})
    assert out.dtype == np.float32 and out.shape == x.shape
    return out


def eager(x, mode):
    return opbridge.ops.corner_pool(torch.from_numpy(x), mode).numpy()


# --- the reference -------------------------------------------------------------------------------


def reference(x: np.ndarray, mode: int) -> np.ndarray:
    """Per output position, the maximum of the positions it pools, taken in scan order from the
    edge the mode starts at: top out[h] = max(x[h..H-1]) (from the bottom), bottom max(x[0..h]),
    left out[w] = max(x[w..W-1]) (from the right), right max(x[0..w]). NaN if any of them is NaN;
    otherwise the maximum, and of equal values (-0 and +0) the last one in scan order."""
    x = np.asarray(x, np.float32)
    out = np.empty_like(x)
    _, _, h, w = x.shape
    for n, c, y, z in np.ndindex(x.shape):
        plane = x[n, c]
        order = {0: [plane[k, z] for k in range(h - 1, y - 1, -1)], 1: [plane[k, z] for k in range(0, y + 1)],
                 2: [plane[y, k] for k in range(w - 1, z - 1, -1)], 3: [plane[y, k] for k in range(0, z + 1)]}[mode]
        if any(np.isnan(v) for v in order):
            out[n, c, y, z] = NAN
            continue
        best = order[0]
        for v in order:
            if v >= best:
                best = v
        out[n, c, y, z] = best
    return out


def assert_same(actual, expected):
    """Bit for bit: NaN where NaN, equal values elsewhere, the sign of zeros kept."""
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    finite = ~np.isnan(expected)
    np.testing.assert_array_equal(actual[finite], expected[finite])
    np.testing.assert_array_equal(np.signbit(actual[finite]), np.signbit(expected[finite]))


def data(rng, shape, specials=True):
    """Half normal values, half from a few levels (ties); NaN, +-inf and signed zeros scattered."""
    x = np.where(rng.random(shape) < 0.5, rng.standard_normal(shape), rng.integers(-2, 3, shape)).astype(np.float32)
    if specials and x.size:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 20))
        flat[picks] = rng.choice(np.array([NAN, INF, -INF, -0.0, 0.0], np.float32), size=picks.size)
    return x


def test_reference_on_a_worked_example():
    x = np.array([[1, 3, 2], [4, 0, 5]], np.float32)[None, None]
    np.testing.assert_array_equal(reference(x, 0)[0, 0], [[4, 3, 5], [4, 0, 5]])  # top
    np.testing.assert_array_equal(reference(x, 1)[0, 0], [[1, 3, 2], [4, 3, 5]])  # bottom
    np.testing.assert_array_equal(reference(x, 2)[0, 0], [[3, 3, 2], [5, 5, 5]])  # left
    np.testing.assert_array_equal(reference(x, 3)[0, 0], [[1, 3, 3], [4, 4, 5]])  # right


# --- sweeps through ORT ---------------------------------------------------------------------------

SHAPES = [(2, 3, 5, 7), (1, 2, 8, 8), (1, 3, 17, 16), (2, 1, 9, 24), (1, 1, 33, 31), (1, 2, 4, 600)]


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("mode", list(MODES.values()), ids=list(MODES))
def test_matches_reference_and_eager(identity, mode):
    rng = np.random.default_rng(mode + 10 * IDENTITIES.index(identity))
    for shape in SHAPES:
        x = data(rng, shape)
        actual = run_pool(identity, x, mode)
        assert_same(actual, reference(x, mode))
        assert_same(actual, eager(x, mode))


@pytest.mark.parametrize("mode", list(MODES.values()), ids=list(MODES))
def test_nan_propagates_away_from_the_starting_edge(mode):
    """A NaN makes every output that pools it NaN: the ones between it and the far side."""
    x = np.arange(5 * 6, dtype=np.float32).reshape(1, 1, 5, 6) % 7
    x[0, 0, 2, 3] = NAN
    out = run_pool("mmcv::MMCVCornerPool", x, mode)
    nan = np.zeros((5, 6), bool)
    if mode == 0:
        nan[:3, 3] = True   # top: rows 0-2 pool row 2
    elif mode == 1:
        nan[2:, 3] = True   # bottom: rows 2-4
    elif mode == 2:
        nan[2, :4] = True   # left: columns 0-3
    else:
        nan[2, 3:] = True   # right: columns 3-5
    np.testing.assert_array_equal(np.isnan(out[0, 0]), nan)
    assert_same(out, reference(x, mode))


@pytest.mark.parametrize("mode", list(MODES.values()), ids=list(MODES))
def test_infinities_and_signed_zeros(mode):
    x = np.array([[0.0, -0.0, 0.0, -0.0], [-INF, -0.0, -INF, -1.0], [INF, -INF, 1.0, -0.0]], np.float32)[None, None]
    out = run_pool("opbridge::CornerPool", x, mode)
    assert_same(out, reference(x, mode))
    assert_same(out, eager(x, mode))


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (2, 3, 1, 7), (2, 3, 6, 1), (1, 1, 1, 9), (1, 1, 9, 1)])
def test_size_one_axes(identity, shape):
    rng = np.random.default_rng(sum(shape))
    x = data(rng, shape)
    for mode in MODES.values():
        assert_same(run_pool(identity, x, mode), reference(x, mode))


@pytest.mark.parametrize("shape", [(0, 3, 4, 5), (2, 0, 4, 5), (2, 3, 0, 5), (2, 3, 4, 0), (0, 0, 0, 0)])
def test_eager_empty_axes(shape):
    x = np.zeros(shape, np.float32)
    for mode in MODES.values():
        assert eager(x, mode).shape == shape


def test_mmcv_graph_as_mmcv_writes_it():
    """mmcv's Top/Bottom/Left/RightPoolFunction.symbolic: g.op('mmcv::MMCVCornerPool', input,
    mode_i=...) with mode 0-3; mmcv's tests export at opset 11. ORT accepts IR versions 6 and 7."""
    rng = np.random.default_rng(41)
    x = data(rng, (2, 3, 5, 6), specials=False)
    for mode in MODES.values():
        node = helper.make_node("MMCVCornerPool", ["input"], ["output"], domain="mmcv", mode=mode)
        graph = helper.make_graph(
            [node], "mmcv_corner_pool", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["n", 3, "h", "w"])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["n", 3, "h", "w"])])
        for ir_version in (6, 7):
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmcv", 1)],
                                      ir_version=ir_version)
            onnx.checker.check_model(model)
            (out,) = run(model, {"input": x})
            assert_same(out, reference(x, mode))


# --- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 2, 3, 4, 5), (7,), ()])
def test_wrong_rank(identity, shape):
    error = run_error(pool_model(identity, 0), {"input": np.zeros(shape, np.float32)})
    assert f"{identity}: input must have rank 4 [N, C, H, W], got shape [{', '.join(map(str, shape))}]" in error


def test_eager_errors():
    x = torch.zeros(1, 2, 3, 4)
    with pytest.raises(ValueError, match=r"corner_pool: input must be \[N, C, H, W\], got shape \[2, 3, 4\]"):
        opbridge.ops.corner_pool(torch.zeros(2, 3, 4), "top")
    with pytest.raises(ValueError, match="corner_pool: input must be float32, got torch.float64"):
        opbridge.ops.corner_pool(x.double(), 0)
    with pytest.raises(ValueError, match=r"corner_pool: mode must be one of \['top', 'bottom', 'left', 'right'\] "
                                         r"or 0-3, got 'up'"):
        opbridge.ops.corner_pool(x, "up")
    for mode in (-1, 4):
        with pytest.raises(ValueError, match=f"corner_pool: mode must be 0 \\(top\\), 1 \\(bottom\\), 2 \\(left\\) "
                                             f"or 3 \\(right\\), got {mode}"):
            opbridge.ops.corner_pool(x, mode)


def test_eager_takes_mode_names_and_codes():
    rng = np.random.default_rng(51)
    x = data(rng, (1, 2, 6, 5))
    for name, code in MODES.items():
        by_name = opbridge.ops.corner_pool(torch.from_numpy(x), name).numpy()
        assert_same(by_name, eager(x, code))
        assert_same(by_name, reference(x, code))


# --- export round trips ---------------------------------------------------------------------------------


class CornerHead(torch.nn.Module):
    """CornerNet's use: the sum of two directional pools of convolved features (top + left)."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        features = self.conv(x)
        return opbridge.ops.corner_pool(features, "top") + opbridge.ops.corner_pool(features, "left")


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat,identity", [(None, "opbridge::CornerPool"), ("mmcv", "mmcv::MMCVCornerPool")])
def test_export_round_trip(exporter, compat, identity):
    torch.manual_seed(1)
    model = CornerHead().eval()
    x = torch.randn(2, 3, 10, 12)
    proto = opbridge.export(model, (x,), exporter=exporter, compat=compat,
                            dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
    assert custom_nodes(proto) == [identity, identity]
    if compat:
        assert "opbridge" not in {o.domain for o in proto.opset_import}
    modes = [helper.get_attribute_value(a) for n in proto.graph.node for a in n.attribute
             if f"{n.domain}::{n.op_type}" == identity]
    assert modes == [0, 2]
    session = opbridge.create_session(proto)
    for shape in [(2, 3, 10, 12), (1, 3, 7, 16), (3, 3, 1, 5)]:
        data_in = torch.randn(*shape)
        with torch.no_grad():
            expected = model(data_in).numpy()
        (actual,) = session.run(None, {"x": data_in.numpy()})
        assert_close(actual, expected, "model")  # ORT's and PyTorch's convolutions round differently


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_mmcv_cummax_formulation_exports_to_cummax(exporter):
    """mmcv's CornerPool.forward with PyTorch >= 1.5 (flip, torch.cummax, flip) exports through
    opbridge's cummax mapping, and compat="mmcv" gives mmcv::cummax nodes, as mmcv's own export does;
    the graph computes what CornerPool computes."""

    class CummaxCornerPool(torch.nn.Module):
        def forward(self, x):
            top = torch.cummax(x.flip(2), 2)[0].flip(2)
            right = torch.cummax(x, 3)[0]
            return top, right

    x = torch.randn(2, 2, 6, 5)
    proto = opbridge.export(CummaxCornerPool().eval(), (x,), exporter=exporter, compat="mmcv",
                            dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}})
    assert custom_nodes(proto) == ["mmcv::cummax", "mmcv::cummax"]
    rng = np.random.default_rng(61)
    data_in = data(rng, (3, 2, 7, 9))
    top, right = opbridge.create_session(proto).run(None, {"x": data_in})
    assert_same(top, run_pool("mmcv::MMCVCornerPool", data_in, MODES["top"]))
    assert_same(right, run_pool("mmcv::MMCVCornerPool", data_in, MODES["right"]))
