"""Cumulative maximum / minimum through the built library in ORT (opbridge::CumMax, opbridge::CumMin,
mmcv::cummax, mmcv::cummin), against a reference written here from the rule (section 5.7 of the
compatibility reference and the op's notes) and against torch.cummax / torch.cummin themselves,
whose numerics the op follows exactly; mmcv's graph; export round trips with both exporters and
compat="mmcv"."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import opbridge
from graphs import EXPORTERS, one_node_model, run, run_error, session_error
from opbridge import manifest
from opbridge.export import custom_nodes

NAN, INF = float("nan"), float("inf")
OUTPUTS = ["values", "indices"]
IDENTITIES = manifest.load()["cummax"].identities
DTYPES = ["float32", "float64", "int32", "int64"]


def is_min(identity: str) -> bool:
    return identity.lower().endswith("min")


def scan_model(identity, dim, shape=None, dtype="float32"):
    return one_node_model(identity, {"dim": dim}, ["input"], OUTPUTS, input_shapes={"input": shape},
                          input_types={"input": dtype})


def run_scan(identity, x, dim, shape=None):
    values, indices = run(scan_model(identity, dim, shape, str(x.dtype)), {"input": x})
    assert values.dtype == x.dtype and values.shape == x.shape
    assert indices.dtype == np.int64 and indices.shape == x.shape
    return values, indices


def torch_scan(identity, x, dim):
    values, indices = (torch.cummin if is_min(identity) else torch.cummax)(torch.from_numpy(x), dim)
    return values.numpy(), indices.numpy()


# --- the reference -------------------------------------------------------------------------------


def reference(x: np.ndarray, dim: int, minimum: bool) -> tuple[np.ndarray, np.ndarray]:
    """Position by position along dim, from scratch: among x[0..s], the last NaN if there is one;
    otherwise the largest (smallest) value, at the last position holding a value equal to it
    (so -0 and +0 tie). A scalar is one element. Values are copied, so dtypes and signs are kept."""
    x = np.asarray(x)
    if x.ndim == 0:
        return x.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(x, dim, -1)
    values, indices = np.empty_like(moved), np.zeros(moved.shape, np.int64)
    floating = moved.dtype.kind == "f"
    for line in np.ndindex(moved.shape[:-1]):
        row = moved[line]
        for s in range(row.shape[0]):
            head = row[: s + 1]
            nans = np.flatnonzero(np.isnan(head)) if floating else []
            if len(nans):
                best = nans[-1]
            else:
                target = head.min() if minimum else head.max()
                best = np.flatnonzero(head == target)[-1]
            values[line + (s,)], indices[line + (s,)] = row[best], best
    return np.moveaxis(values, -1, dim), np.moveaxis(indices, -1, dim)


def assert_same(actual, expected):
    """Values bit for bit (NaN payloads aside: NaN where NaN, the sign of zeros kept), indices exactly."""
    (av, ai), (ev, ei) = actual, expected
    assert av.dtype == ev.dtype and av.shape == ev.shape
    if av.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(av), np.isnan(ev))
        finite = ~np.isnan(ev)
        np.testing.assert_array_equal(av[finite], ev[finite])
        np.testing.assert_array_equal(np.signbit(av[finite]), np.signbit(ev[finite]))
    else:
        np.testing.assert_array_equal(av, ev)
    np.testing.assert_array_equal(ai, ei)


def tie_data(rng, shape, dtype, specials=True):
    """Values from a few levels (many ties); for floats also NaN, +-inf and -0 at random places."""
    x = rng.integers(-3, 4, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "f" and specials and x.size:
        flat = x.reshape(-1)
        picks = rng.choice(flat.size, size=max(1, flat.size // 8), replace=True)
        flat[picks] = rng.choice(np.array([NAN, INF, -INF, -0.0], dtype), size=picks.size)
    elif np.dtype(dtype).kind == "i" and x.size:
        info = np.iinfo(dtype)
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, size=max(1, flat.size // 10))] = info.max
        flat[rng.choice(flat.size, size=max(1, flat.size // 10))] = info.min
    return x


def test_reference_agrees_with_torch_on_hand_cases():
    """The reference against torch's own answers on the cases that define the rule."""
    x = np.array([1, NAN, 3, NAN, 0], np.float32)
    for minimum in (False, True):
        values, indices = reference(x, 0, minimum)
        np.testing.assert_array_equal(indices, [0, 1, 1, 3, 3])
        assert values[0] == 1 and np.isnan(values[1:]).all()
    values, indices = reference(np.array([2, 2, 1, 2, 3, 3], np.float32), 0, False)
    np.testing.assert_array_equal(values, [2, 2, 2, 2, 3, 3])
    np.testing.assert_array_equal(indices, [0, 1, 1, 3, 4, 5])
    values, indices = reference(np.array([2, 2, 1, 2, 3, 3], np.float32), 0, True)
    np.testing.assert_array_equal(indices, [0, 1, 2, 2, 2, 2])
    rng = np.random.default_rng(0)
    for dtype in DTYPES:
        x = tie_data(rng, (3, 4, 9), dtype)
        for dim in (0, 1, 2, -1):
            for identity in ("opbridge::CumMax", "opbridge::CumMin"):
                assert_same(reference(x, dim, is_min(identity)), torch_scan(identity, x, dim))


# --- sweeps through ORT ---------------------------------------------------------------------------

SHAPES = [(7,), (1,), (3, 1), (9, 17), (16, 24), (2, 3, 4), (8, 9, 10), (2, 1, 5, 3), (2, 3, 4, 19), (1, 2, 3, 2, 3),
          (2, 2, 2, 9, 8)]


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_reference_and_torch_every_rank_and_dim(identity, dtype):
    rng = np.random.default_rng(DTYPES.index(dtype) + 10 * IDENTITIES.index(identity))
    for shape in SHAPES:
        x = tie_data(rng, shape, dtype)
        for dim in range(-len(shape), len(shape)):
            actual = run_scan(identity, x, dim)
            assert_same(actual, reference(x, dim, is_min(identity)))
            assert_same(actual, torch_scan(identity, x, dim))


@pytest.mark.parametrize("identity", IDENTITIES)
def test_random_normal_data(identity):
    """Continuous data (few ties) over rows long enough for the eight-row blocks and lane chunks."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 40, 1100)).astype(np.float32)
    for dim in (0, 1, 2):
        assert_same(run_scan(identity, x, dim), torch_scan(identity, x, dim))


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_at_every_position(identity, dtype):
    """One NaN at each position of a row (in its own row), two NaNs, a NaN first and last: a NaN sticks
    and a later NaN takes the index over."""
    n = 11
    rows = []
    for p in range(n):
        row = np.arange(n, dtype=dtype) % 4
        row[p] = NAN
        rows.append(row)
    rows.append(np.where(np.isin(np.arange(n), [2, 7]), NAN, np.arange(n)).astype(dtype))
    rows.append(np.where(np.isin(np.arange(n), [0, n - 1]), NAN, np.arange(n)).astype(dtype))
    rows.append(np.full(n, NAN, dtype))
    x = np.stack(rows)
    for dim in (1, 0):
        actual = run_scan(identity, x, dim)
        assert_same(actual, reference(x, dim, is_min(identity)))
        assert_same(actual, torch_scan(identity, x, dim))
    values, indices = run_scan(identity, x, 1)
    second = 0 if is_min(identity) else 1  # the row is 0, 1, NaN, 3, 4, 5, 6, NaN, ...
    np.testing.assert_array_equal(indices[-3], [0, second, 2, 2, 2, 2, 2, 7, 7, 7, 7])
    assert np.isnan(values[-3, 2:]).all() and not np.isnan(values[-3, :2]).any()


@pytest.mark.parametrize("identity", IDENTITIES)
def test_infinities_and_signed_zeros(identity):
    x = np.array([[-INF, -INF, INF, INF, 1.0], [0.0, -0.0, 0.0, -1.0, -0.0], [INF, -INF, INF, -INF, 0.0]], np.float32)
    for dim in (1, 0):
        actual = run_scan(identity, x, dim)
        assert_same(actual, reference(x, dim, is_min(identity)))
        assert_same(actual, torch_scan(identity, x, dim))
    values, indices = run_scan(identity, x, 1)
    if not is_min(identity):  # equal zeros: the later one is taken, with its sign
        np.testing.assert_array_equal(np.signbit(values[1]), [False, True, False, False, True])
        np.testing.assert_array_equal(indices[1], [0, 1, 2, 2, 4])


@pytest.mark.parametrize("identity", IDENTITIES)
def test_integer_extremes(identity):
    for dtype in ("int32", "int64"):
        info = np.iinfo(dtype)
        x = np.array([[info.min, info.min, 0, info.max, info.max, info.min]], dtype)
        assert_same(run_scan(identity, x, 1), torch_scan(identity, x, 1))


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("dim", [0, -1])
def test_scalar_is_one_element(identity, dim):
    """A rank-0 input, as torch treats it: the scalar and index 0."""
    x = np.array(2.5, np.float32)
    values, indices = run(scan_model(identity, dim, shape=[]), {"input": x})
    assert values.shape == () and indices.shape == ()
    assert values == 2.5 and indices == 0
    assert_same((values, indices), torch_scan(identity, x, dim))


@pytest.mark.parametrize("identity", IDENTITIES)
def test_size_one_axes(identity):
    rng = np.random.default_rng(7)
    for shape in [(1, 1), (1, 6), (6, 1), (1, 1, 1, 1), (2, 1, 3, 1)]:
        x = tie_data(rng, shape, "float32")
        for dim in range(-len(shape), len(shape)):
            assert_same(run_scan(identity, x, dim), torch_scan(identity, x, dim))


def test_cummax_and_cummin_identities_agree():
    rng = np.random.default_rng(11)
    x = tie_data(rng, (5, 13), "float64")
    for ours, theirs in (("opbridge::CumMax", "mmcv::cummax"), ("opbridge::CumMin", "mmcv::cummin")):
        assert_same(run_scan(ours, x, 1), run_scan(theirs, x, 1))


def test_mmcv_graph_as_mmcv_writes_it():
    """mmcv's register_extra_symbolics: cummax(g, input, dim) -> g.op('mmcv::cummax', input,
    dim_i=dim, outputs=2), likewise cummin; mmcv exports at opset 11. ORT accepts IR versions 6 and 7."""
    rng = np.random.default_rng(13)
    x = tie_data(rng, (2, 5, 7), "float32")
    for op_type in ("cummax", "cummin"):
        for dim in (1, -1):
            node = helper.make_node(op_type, ["input"], ["values", "indices"], domain="mmcv", dim=dim)
            graph = helper.make_graph(
                [node], f"mmcv_{op_type}", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["n", 5, 7])],
                [helper.make_tensor_value_info("values", TensorProto.FLOAT, ["n", 5, 7]),
                 helper.make_tensor_value_info("indices", TensorProto.INT64, ["n", 5, 7])])
            for ir_version in (6, 7):
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid("mmcv", 1)],
                                          ir_version=ir_version)
                onnx.checker.check_model(model)
                assert_same(tuple(run(model, {"input": x})), torch_scan(op_type, x, dim))


# --- errors -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("dim,shape,message", [
    (3, [2, 3, 4], "dim must be in [-3, 2] for an input of rank 3, got 3"),
    (-4, [2, 3, 4], "dim must be in [-3, 2] for an input of rank 3, got -4"),
    (1, ["n"], "dim must be in [-1, 0] for an input of rank 1, got 1"),
    (2**40, [2, 3], "dim must be in [-2, 1] for an input of rank 2, got 1099511627776"),
    (-(2**63), [2, 3], "dim must be in [-2, 1] for an input of rank 2, got -9223372036854775808"),
])
def test_dim_out_of_range_fails_the_session_when_the_rank_is_known(identity, dim, shape, message):
    assert f"{identity}: {message}" in session_error(scan_model(identity, dim, shape))


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("dim,x,message", [
    (3, np.zeros((2, 3, 4), np.float32), "dim must be in [-3, 2] for an input of rank 3, got 3"),
    (-2, np.zeros((5,), np.float32), "dim must be in [-1, 0] for an input of rank 1, got -2"),
    (1, np.zeros((), np.float32), "dim must be -1 or 0 for a scalar input (rank 0, scanned as one element), got 1"),
    (-2, np.zeros((), np.float32), "dim must be -1 or 0 for a scalar input (rank 0, scanned as one element), got -2"),
])
def test_dim_out_of_range_fails_the_run_when_the_rank_is_not_known(identity, dim, x, message):
    model = scan_model(identity, dim)  # input of unknown rank
    assert f"{identity}: {message}" in run_error(model, {"input": x})


@pytest.mark.parametrize("identity", IDENTITIES)
def test_scalar_with_a_known_rank_is_checked_at_run_time(identity):
    """ORT shows an input of unknown rank as rank 0, so a declared scalar is checked when the model runs."""
    error = run_error(scan_model(identity, 1, shape=[]), {"input": np.zeros((), np.float32)})
    assert f"{identity}: dim must be -1 or 0 for a scalar input (rank 0, scanned as one element), got 1" in error


# --- export round trips ---------------------------------------------------------------------------------


class Scans(torch.nn.Module):
    """torch.cummax and torch.cummin inside a model, along a positive and a negative dim, their
    indices used as data."""

    def forward(self, x):
        high, where_high = torch.cummax(x * 2, 1)
        low, where_low = torch.cummin(x, -1)
        return high + low, where_high + where_low, where_low


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat,identities", [(None, ["opbridge::CumMax", "opbridge::CumMin"]),
                                               ("mmcv", ["mmcv::cummax", "mmcv::cummin"])])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_export_round_trip(exporter, compat, identities, dtype):
    model = Scans().eval()
    x = (torch.randn(2, 3, 5) * 3).round().to(dtype)
    proto = opbridge.export(model, (x,), exporter=exporter, compat=compat, dynamic_axes={"x": {0: "n", 2: "w"}})
    assert custom_nodes(proto) == identities
    if compat:
        assert "opbridge" not in {o.domain for o in proto.opset_import}
    for node in proto.graph.node:
        if f"{node.domain}::{node.op_type}" in identities:
            assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == \
                {"dim": 1 if node.op_type.lower() == "cummax" else -1}
            assert len(node.input) == 1 and len(node.output) == 2
    session = opbridge.create_session(proto)
    rng = np.random.default_rng(17)
    for shape in [(2, 3, 5), (4, 3, 9), (1, 3, 1)]:
        data = torch.from_numpy(tie_data(rng, shape, "float32", specials=dtype.is_floating_point)).to(dtype)
        with torch.no_grad():
            expected = [t.numpy() for t in model(data)]
        actual = session.run(None, {"x": data.numpy()})
        for a, e in zip(actual, expected):
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_export_of_a_scalar_and_of_float64(exporter):
    class Scalar(torch.nn.Module):
        def forward(self, x, y):
            v, i = torch.cummax(x, 0)
            w, j = torch.cummin(y, -1)
            return v, i, w, j

    x, y = torch.tensor(1.5), torch.randn(3, 4, dtype=torch.float64)
    proto = opbridge.export(Scalar().eval(), (x, y), exporter=exporter)
    assert custom_nodes(proto) == ["opbridge::CumMax", "opbridge::CumMin"]
    actual = opbridge.create_session(proto).run(None, {"x": x.numpy(), "y": y.numpy()})
    for a, e in zip(actual, Scalar()(x, y)):
        np.testing.assert_array_equal(a, e.numpy())
