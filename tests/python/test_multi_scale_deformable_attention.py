"""Multi-scale deformable attention through the built library in ORT
(opbridge::MultiScaleDeformableAttention, mmdeploy::MMCVMultiScaleDeformableAttention) and the eager
PyTorch op, against a float64 reference written here from section 5.12 of the compatibility
reference and against the pure-PyTorch formulation (per level F.grid_sample); mmdeploy's graph;
every input error (dtypes and attribute kinds: test_conformance.py); export round trips of the op and of the Deformable DETR layer with both exporters."""

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
from opbridge.ops.multi_scale_deformable_attention import multi_scale_deformable_attention_pytorch

NAN, INF = float("nan"), float("inf")
IDENTITIES = manifest.load()["multi_scale_deformable_attention"].identities
OP = "multi_scale_deformable_attention"
INPUTS = ["value", "spatial_shapes", "level_start_index", "sampling_locations", "attention_weights"]


class Problem:
    """The five inputs of one call (numpy), with the level shapes as Python ints."""

    def __init__(self, value, shapes, locations, weights, index_dtype="int64", starts=None):
        self.value, self.shapes = np.asarray(value, np.float32), [tuple(s) for s in shapes]
        self.locations, self.weights = np.asarray(locations, np.float32), np.asarray(weights, np.float32)
        sizes = [h * w for h, w in self.shapes]
        self.spatial_shapes = np.array(self.shapes, index_dtype).reshape(-1, 2)
        self.starts = np.array(starts if starts is not None else np.cumsum([0] + sizes[:-1]), index_dtype)

    def feeds(self) -> dict:
        return dict(zip(INPUTS, [self.value, self.spatial_shapes, self.starts, self.locations, self.weights]))

    def torch_args(self):
        return [torch.from_numpy(np.ascontiguousarray(a)) for a in self.feeds().values()]


def random_problem(rng, n=2, queries=5, heads=2, channels=3, shapes=((4, 5), (2, 3)), points=2,
                   low=-0.1, high=1.1, index_dtype="int64") -> Problem:
    s = sum(h * w for h, w in shapes)
    value = rng.standard_normal((n, s, heads, channels)).astype(np.float32)
    locations = rng.uniform(low, high, (n, queries, heads, len(shapes), points, 2)).astype(np.float32)
    weights = rng.uniform(0, 1, (n, queries, heads, len(shapes), points)).astype(np.float32)
    return Problem(value, shapes, locations, weights, index_dtype)


def msda_model(identity, attrs=None, index_dtype="int64"):
    types = {"spatial_shapes": index_dtype, "level_start_index": index_dtype}
    return one_node_model(identity, attrs or {}, INPUTS, ["output"], input_types=types)


def run_msda(identity, problem: Problem, threads=1, attrs=None):
    model = msda_model(identity, attrs, problem.spatial_shapes.dtype.name)
    (out,) = run(model, problem.feeds(), threads=threads)
    n, _, heads, channels = problem.value.shape
    assert out.dtype == np.float32 and out.shape == (n, problem.locations.shape[1], heads * channels)
    return out


# --- the reference -------------------------------------------------------------------------------


def reference(p: Problem) -> np.ndarray:
    """Spec 5.12 in float64: for each (n, q, m, d) the sum over levels l and points of
    attn * bilinear(value_l[:, m, d], h, w) with h = y * H_l - 0.5, w = x * W_l - 0.5; the corners
    floor(h) + {0, 1}, floor(w) + {0, 1} each read 0 outside the level's map. A NaN or infinite
    location gives a NaN sample (F.grid_sample's result, which the pure formulation sums)."""
    value = p.value.astype(np.float64)
    n, _, heads, channels = value.shape
    queries, points = p.locations.shape[1], p.locations.shape[4]
    out = np.zeros((n, queries, heads, channels))
    ni = np.arange(n)[:, None, None, None]
    mi = np.arange(heads)[None, None, :, None]
    start = 0
    for level, (height, width) in enumerate(p.shapes):
        loc = p.locations[:, :, :, level].astype(np.float64)  # [N, Lq, M, P, 2]
        attn = p.weights[:, :, :, level].astype(np.float64)    # [N, Lq, M, P]
        h, w = loc[..., 1] * height - 0.5, loc[..., 0] * width - 0.5
        finite = np.isfinite(h) & np.isfinite(w)
        h, w = np.where(finite, h, 0.0), np.where(finite, w, 0.0)
        h0, w0 = np.floor(h), np.floor(w)
        for dy in (0, 1):
            for dx in (0, 1):
                y, x = h0 + dy, w0 + dx
                weight = (h - h0 if dy else 1 - (h - h0)) * (w - w0 if dx else 1 - (w - w0))
                inside = (y >= 0) & (y < height) & (x >= 0) & (x < width)
                rows = start + np.where(inside, y * width + x, 0).astype(np.int64)
                corner = value[ni, rows, mi]  # [N, Lq, M, P, D]
                term = np.where(inside, attn * weight, 0.0)[..., None] * corner
                out += term.sum(axis=3)
        nan_rows = (~finite).any(axis=3)  # [N, Lq, M]
        out[nan_rows] = NAN
        start += height * width
    return out.reshape(n, queries, heads * channels)


def pure(p: Problem) -> np.ndarray:
    """The pure-PyTorch formulation in float32 (mmcv's multi_scale_deformable_attn_pytorch)."""
    return multi_scale_deformable_attention_pytorch(
        torch.from_numpy(p.value), p.shapes, torch.from_numpy(p.locations), torch.from_numpy(p.weights)).numpy()


def eager(p: Problem) -> np.ndarray:
    return opbridge.ops.multi_scale_deformable_attention(*p.torch_args()).numpy()


def test_reference_on_a_worked_example():
    """One head, one channel, a 2x2 level of values 1..4 and a 1x1 level of 10; the first point at
    the map's centre (the mean, 2.5), the second at the top-left pixel's centre (1), the third
    half a pixel left of the map's edge (h = 0, w = -1: no contribution)."""
    value = np.array([1, 2, 3, 4, 10], np.float32).reshape(1, 5, 1, 1)
    locations = np.zeros((1, 1, 1, 2, 3, 2), np.float32)
    locations[0, 0, 0, 0] = [[0.5, 0.5], [0.25, 0.25], [-0.25, 0.25]]
    locations[0, 0, 0, 1] = [[0.5, 0.5], [0.75, 0.5], [0.5, 1.5]]  # 10, half of 10 (w = 0.25 -> 0.75 * 10), 0
    weights = np.array([1, 2, 100, 1, 1, 100], np.float32).reshape(1, 1, 1, 2, 3)
    p = Problem(value, [(2, 2), (1, 1)], locations, weights)
    expected = 2.5 + 2 * 1 + 0 + 10 + 0.75 * 10 + 0
    np.testing.assert_allclose(reference(p), [[[expected]]])
    for identity in IDENTITIES:
        assert_close(run_msda(identity, p), reference(p), "float64_reference", OP)


# --- sweeps against the reference and the pure formulation --------------------------------------------

LEVEL_SHAPES = [(6, 7), (3, 4), (2, 2), (1, 1)]


@pytest.mark.parametrize("levels,points", [(1, 1), (1, 4), (2, 3), (3, 2), (4, 1), (4, 4)])
@pytest.mark.parametrize("channels", [1, 3, 32, 33])
def test_matches_reference_and_pure_formulation(levels, points, channels):
    rng = np.random.default_rng(levels * 100 + points * 10 + channels)
    heads = [1, 2, 3, 8][(levels + points + channels) % 4]
    for identity, index_dtype in [(IDENTITIES[0], "int64"), (IDENTITIES[1], "int32")]:
        p = random_problem(rng, n=2, queries=7, heads=heads, channels=channels, shapes=LEVEL_SHAPES[:levels],
                           points=points, index_dtype=index_dtype)
        out = run_msda(identity, p)
        assert_close(out, reference(p), "float64_reference", OP)
        assert_close(out, pure(p), "same_precision", OP)
        assert_close(eager(p), pure(p), "same_precision", OP)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_larger_maps_and_many_queries(identity):
    rng = np.random.default_rng(5)
    p = random_problem(rng, n=2, queries=300, heads=8, channels=32, shapes=[(25, 38), (13, 19), (7, 10), (4, 5)],
                       points=4)
    out = run_msda(identity, p, threads=2)
    assert_close(out, reference(p), "float64_reference", OP)
    assert_close(out, pure(p), "same_precision", OP)


def test_locations_on_edges_and_pixel_centres():
    """Locations at the map's edges (0, 1), on pixel centres, half a pixel outside (h or w = -1 or
    H, where no corner is inside) and just inside that."""
    w_px, h_px = 5, 4
    xs = [0.0, 1.0, 0.5 / w_px, 1 - 0.5 / w_px, -0.5 / w_px, 1 + 0.5 / w_px, -0.499 / w_px, 1 + 0.499 / w_px, 0.5]
    ys = [0.0, 1.0, 0.5 / h_px, 1 - 0.5 / h_px, -0.5 / h_px, 1 + 0.5 / h_px, -0.499 / h_px, 1 + 0.499 / h_px, 0.5]
    grid = np.array([(x, y) for x in xs for y in ys], np.float32)  # 81 points, one query each
    rng = np.random.default_rng(9)
    value = rng.standard_normal((1, h_px * w_px, 1, 4)).astype(np.float32)
    locations = grid.reshape(1, len(grid), 1, 1, 1, 2)
    weights = np.ones((1, len(grid), 1, 1, 1), np.float32)
    p = Problem(value, [(h_px, w_px)], locations, weights)
    expected = reference(p)
    for identity in IDENTITIES:
        out = run_msda(identity, p)
        assert_close(out, expected, "float64_reference", OP)
        assert_close(out, pure(p), "same_precision", OP)
    # Half a pixel outside on either axis reads nothing.
    outside = [i for i, (x, y) in enumerate(grid) if x in (xs[4], xs[5]) or y in (ys[4], ys[5])]
    assert outside and np.all(expected[0, outside] == 0)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_nan_infinite_and_far_locations_follow_grid_sample(identity):
    """A NaN or infinite coordinate makes F.grid_sample's sample NaN, so the pure formulation's sum
    for that query's head is NaN whatever the weight (0 included); finite locations far outside
    read 0, without overflow."""
    rng = np.random.default_rng(13)
    p = random_problem(rng, n=1, queries=8, heads=2, channels=3, shapes=[(4, 5), (2, 3)], points=2)
    specials = [(NAN, 0.5), (0.5, NAN), (INF, 0.5), (0.5, -INF), (1e30, 0.5), (-1e30, -1e30), (3e9, 0.5),
                (1e38, 0.5)]
    for q, (x, y) in enumerate(specials):
        p.locations[0, q, 0, 1, 0] = (x, y)
    p.weights[0, 0, 0, 1, 0] = 0.0  # NaN * 0 is NaN
    out, expected = run_msda(identity, p), pure(p)
    assert_close(out, expected, "same_precision", OP)
    assert np.isnan(out[0, :4, :3]).all() and not np.isnan(out[0, 4:, :3]).any()
    assert not np.isnan(out[0, :, 3:]).any()  # the other head
    assert_close(out, reference(p), "float64_reference", OP)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_all_points_far_outside_give_zeros(identity):
    rng = np.random.default_rng(17)
    p = random_problem(rng, n=2, queries=3, shapes=[(3, 3)], low=5.0, high=1e6)
    assert np.all(run_msda(identity, p) == 0)


@pytest.mark.parametrize("identity", IDENTITIES)
def test_no_points_give_zeros(identity):
    rng = np.random.default_rng(19)
    p = random_problem(rng, n=2, queries=3, points=0)
    out = run_msda(identity, p)
    assert np.all(out == 0)  # a sum over nothing
    np.testing.assert_array_equal(out, eager(p))


@pytest.mark.parametrize("identity", IDENTITIES)
def test_size_one_maps_heads_and_channels(identity):
    rng = np.random.default_rng(23)
    p = random_problem(rng, n=1, queries=1, heads=1, channels=1, shapes=[(1, 1), (1, 1)], points=1)
    assert_close(run_msda(identity, p), reference(p), "float64_reference", OP)


def test_int32_and_int64_index_inputs_agree_and_mix():
    rng = np.random.default_rng(29)
    p = random_problem(rng, queries=11, heads=4, channels=8, shapes=LEVEL_SHAPES, points=3)
    want = run_msda(IDENTITIES[0], p)
    for shapes_dtype, starts_dtype in [("int32", "int32"), ("int32", "int64"), ("int64", "int32")]:
        model = one_node_model(IDENTITIES[0], {}, INPUTS, ["output"],
                               input_types={"spatial_shapes": shapes_dtype, "level_start_index": starts_dtype})
        feeds = p.feeds()
        feeds["spatial_shapes"] = feeds["spatial_shapes"].astype(shapes_dtype)
        feeds["level_start_index"] = feeds["level_start_index"].astype(starts_dtype)
        np.testing.assert_array_equal(run(model, feeds)[0], want)
        args = p.torch_args()
        args[1], args[2] = torch.from_numpy(feeds["spatial_shapes"]), torch.from_numpy(feeds["level_start_index"])
        assert_close(opbridge.ops.multi_scale_deformable_attention(*args).numpy(), want, "same_precision", OP)


# --- mmdeploy's graph ------------------------------------------------------------------------------------


def test_mmdeploy_graph_as_mmdeploy_writes_it():
    """mmdeploy's ms_deform_attn_default symbolic: g.op('mmdeploy::MMCVMultiScaleDeformableAttention',
    value, value_spatial_shapes, value_level_start_index, sampling_locations, attention_weights,
    im2col_step_i=im2col_step), the index inputs int64 tensors of the traced model (here
    initializers), opset 11; ORT accepts IR versions 6 and 7."""
    rng = np.random.default_rng(37)
    p = random_problem(rng, n=1, queries=10, heads=8, channels=32, shapes=[(8, 10), (4, 5), (2, 3), (1, 2)], points=4)
    for im2col_step in (64, 128):
        node = helper.make_node("MMCVMultiScaleDeformableAttention", INPUTS, ["output"], domain="mmdeploy",
                                im2col_step=im2col_step)
        graph = helper.make_graph(
            [node], "mmdeploy_msda",
            [helper.make_tensor_value_info("value", TensorProto.FLOAT, [1, "s", 8, 32]),
             helper.make_tensor_value_info("sampling_locations", TensorProto.FLOAT, [1, "q", 8, 4, 4, 2]),
             helper.make_tensor_value_info("attention_weights", TensorProto.FLOAT, [1, "q", 8, 4, 4])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, "q", 256])],
            initializer=[onnx.numpy_helper.from_array(p.spatial_shapes, "spatial_shapes"),
                         onnx.numpy_helper.from_array(p.starts, "level_start_index")])
        for ir_version in (6, 7):
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11),
                                                            helper.make_opsetid("mmdeploy", 1)], ir_version=ir_version)
            onnx.checker.check_model(model)
            (out,) = run(model, {"value": p.value, "sampling_locations": p.locations, "attention_weights": p.weights})
            assert_close(out, reference(p), "float64_reference", OP)


# --- errors -------------------------------------------------------------------------------------------


def bad(problem: Problem, **changes) -> dict:
    feeds = problem.feeds()
    feeds.update(changes)
    return feeds


ERROR_CASES = [
    ("value", lambda p: {"value": p.value[0]},
     "value must have rank 4 [N, S, M, D], got shape [26, 2, 3]"),
    ("shapes_rank", lambda p: {"spatial_shapes": p.spatial_shapes.reshape(-1)},
     "spatial_shapes must have shape [L, 2] (H, W per level), got shape [4]"),
    ("shapes_columns", lambda p: {"spatial_shapes": np.ones((2, 3), np.int64)},
     "spatial_shapes must have shape [L, 2] (H, W per level), got shape [2, 3]"),
    ("no_levels", lambda p: {"spatial_shapes": np.ones((0, 2), np.int64)},
     "spatial_shapes must have at least one level, got shape [0, 2]"),
    ("starts_size", lambda p: {"level_start_index": np.array([0, 20, 26], np.int64)},
     "level_start_index must have shape [L] with L = 2 (the rows of spatial_shapes), got shape [3]"),
    ("locations_rank", lambda p: {"sampling_locations": p.locations[..., 0]},
     "sampling_locations must have shape [N, Lq, M, L, P, 2] (x, y last), got shape [2, 5, 2, 2, 2]"),
    ("locations_batch", lambda p: {"sampling_locations": p.locations[:1]},
     "sampling_locations must have shape [N, Lq, M, L, P, 2] with N = 2 and M = 2 (value [N, S, M, D]) and L = 2 "
     "(spatial_shapes [L, 2]), got shape [1, 5, 2, 2, 2, 2]"),
    ("locations_heads", lambda p: {"sampling_locations": p.locations[:, :, :1]},
     "with N = 2 and M = 2 (value [N, S, M, D]) and L = 2 (spatial_shapes [L, 2]), got shape [2, 5, 1, 2, 2, 2]"),
    ("locations_levels", lambda p: {"sampling_locations": p.locations[:, :, :, :1]},
     "got shape [2, 5, 2, 1, 2, 2]"),
    ("weights_rank", lambda p: {"attention_weights": p.weights[..., 0]},
     "attention_weights must have rank 5 [N, Lq, M, L, P], got shape [2, 5, 2, 2]"),
    ("weights_points", lambda p: {"attention_weights": p.weights[..., :1]},
     "attention_weights must have shape [N, Lq, M, L, P] = [2, 5, 2, 2, 2] (from value and sampling_locations), "
     "got shape [2, 5, 2, 2, 1]"),
    ("weights_queries", lambda p: {"attention_weights": p.weights[:, :4]},
     "attention_weights must have shape [N, Lq, M, L, P] = [2, 5, 2, 2, 2] (from value and sampling_locations), "
     "got shape [2, 4, 2, 2, 2]"),
    ("sum_short", lambda p: {"value": p.value[:, :25]},
     "spatial_shapes must sum to S = 25 (value [N, S, M, D]) over the levels (sum of H * W), but level 1 (2x3) "
     "starting at row 20 ends past it"),
    ("sum_long", lambda p: {"value": np.zeros((2, 27, 2, 3), np.float32)},
     "spatial_shapes must sum to S = 27 (value [N, S, M, D]) over the levels (sum of H * W), got 26"),
    ("start", lambda p: {"level_start_index": np.array([0, 19], np.int64)},
     "level_start_index[1] must be 20 (the sum of H * W of the levels before it, from spatial_shapes), got 19"),
    ("first_start", lambda p: {"level_start_index": np.array([1, 20], np.int64)},
     "level_start_index[0] must be 0 (the sum of H * W of the levels before it, from spatial_shapes), got 1"),
    ("zero_shape", lambda p: {"spatial_shapes": np.array([[4, 5], [0, 3]], np.int64)},
     "spatial_shapes[1] = (0, 3) must hold a height and width >= 1"),
    ("negative_shape", lambda p: {"spatial_shapes": np.array([[-4, -5], [2, 3]], np.int64)},
     "spatial_shapes[0] = (-4, -5) must hold a height and width >= 1"),
    ("huge_shape", lambda p: {"spatial_shapes": np.array([[2**40, 2**40], [2, 3]], np.int64)},
     "but level 0 (1099511627776x1099511627776) starting at row 0 ends past it"),
]


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("case,change,message", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_input_errors(identity, case, change, message):
    p = random_problem(np.random.default_rng(41))
    feeds = p.feeds()
    feeds.update(change(p))
    assert f"{identity}: " in run_error(msda_model(identity), feeds)
    assert message in run_error(msda_model(identity), feeds)


def test_int32_index_errors_name_the_values():
    p = random_problem(np.random.default_rng(43), index_dtype="int32")
    feeds = bad(p, level_start_index=np.array([0, 21], np.int32))
    error = run_error(msda_model(IDENTITIES[1], index_dtype="int32"), feeds)
    assert (f"{IDENTITIES[1]}: level_start_index[1] must be 20 (the sum of H * W of the levels before it, "
            "from spatial_shapes), got 21") in error


def test_eager_errors():
    p = random_problem(np.random.default_rng(47))
    value, shapes, starts, locations, weights = p.torch_args()
    msda = opbridge.ops.multi_scale_deformable_attention
    cases = [
        ((value[0], shapes, starts, locations, weights), r"value must have rank 4 \[N, S, M, D\], got shape \[26, 2, 3\]"),
        ((value, shapes.float(), starts, locations, weights), "spatial_shapes must be int32 or int64, got torch.float32"),
        ((value, shapes[:0], starts[:0], locations, weights), r"spatial_shapes must have shape \[L, 2\] with L >= 1"),
        ((value, shapes, starts[:1], locations, weights), r"level_start_index must have shape \[2\], got \[1\]"),
        ((value, shapes, starts, locations[:, :, :1], weights), r"sampling_locations must have shape"),
        ((value, shapes, starts, locations, weights[..., :1]), r"attention_weights must have shape \[2, 5, 2, 2, 2\]"),
        ((value, shapes, torch.tensor([0, 19]), locations, weights), r"level_start_index\[1\] must be 20, got 19"),
        ((value, torch.tensor([[4, 5], [0, 3]]), starts, locations, weights),
         r"spatial_shapes\[1\] = \(0, 3\) must hold a height and width >= 1"),
        ((value[:, :25], shapes, starts, locations, weights), "spatial_shapes must sum to S = 25 over the levels"),
    ]
    for args, message in cases:
        with pytest.raises(ValueError, match="multi_scale_deformable_attention: " + message):
            msda(*args)


# --- export round trips ---------------------------------------------------------------------------------


class OpModule(torch.nn.Module):
    def forward(self, value, spatial_shapes, level_start_index, sampling_locations, attention_weights):
        return opbridge.ops.multi_scale_deformable_attention(
            value, spatial_shapes, level_start_index, sampling_locations, attention_weights)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("compat,identity", [(None, IDENTITIES[0]), ("mmdeploy", IDENTITIES[1])])
def test_op_export_round_trip(exporter, compat, identity):
    rng = np.random.default_rng(53)
    p = random_problem(rng, queries=6, heads=2, channels=4, shapes=[(4, 5), (2, 3)], points=3)
    proto = opbridge.export(OpModule(), tuple(p.torch_args()), exporter=exporter, compat=compat,
                            dynamic_axes={"sampling_locations": {1: "q"}, "attention_weights": {1: "q"}})
    assert custom_nodes(proto) == [identity]
    node = next(n for n in proto.graph.node if f"{n.domain}::{n.op_type}" == identity)
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == (
        {"im2col_step": 64} if compat else {})
    session = opbridge.create_session(proto)
    for queries in (6, 1, 17, 0):
        q = random_problem(rng, queries=queries, heads=2, channels=4, shapes=[(4, 5), (2, 3)], points=3)
        (out,) = session.run(None, q.feeds())
        assert_close(out, eager(q), "same_precision", OP)


def layer_inputs(rng, n=2, queries=30, embed=64, shapes=((12, 16), (6, 8), (3, 4), (2, 2))):
    s = sum(h * w for h, w in shapes)
    starts = np.cumsum([0] + [h * w for h, w in shapes][:-1])
    return (torch.from_numpy(rng.standard_normal((n, queries, embed)).astype(np.float32)),
            torch.from_numpy(rng.standard_normal((n, s, embed)).astype(np.float32)),
            torch.from_numpy(rng.uniform(0, 1, (n, queries, len(shapes), 2)).astype(np.float32)),
            torch.tensor(shapes, dtype=torch.int64), torch.tensor(starts, dtype=torch.int64))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_deformable_detr_layer_exports_runs_and_verifies(exporter):
    torch.manual_seed(3)
    layer = opbridge.ops.MultiScaleDeformableAttention(embed_dims=64, num_heads=8, num_levels=4, num_points=4).eval()
    rng = np.random.default_rng(59)
    args = layer_inputs(rng)
    proto = opbridge.export(layer, args, exporter=exporter, dynamic_axes={"query": {1: "q"}, "reference_points": {1: "q"}})
    assert custom_nodes(proto) == [IDENTITIES[0]]
    report = opbridge.verify(layer, args, exporter=exporter, print_report=False,
                             dynamic_axes={"query": {1: "q"}, "reference_points": {1: "q"}},
                             dynamic_sizes={"q": [1, 45, 0]})
    assert report.ok, str(report)
    assert [s.size for s in report.sizes] == [1, 45, 0]


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_deformable_detr_layer_with_compat_mmdeploy(exporter):
    """The layer as mmdeploy exports it: one mmdeploy::MMCVMultiScaleDeformableAttention node with
    im2col_step 64 (mmdeploy's default); it runs in ORT as eager PyTorch does, at other query counts."""
    torch.manual_seed(4)
    layer = opbridge.ops.MultiScaleDeformableAttention(embed_dims=32, num_heads=4, num_levels=2, num_points=3).eval()
    rng = np.random.default_rng(61)
    shapes = ((6, 8), (3, 4))
    proto = opbridge.export(layer, layer_inputs(rng, queries=9, embed=32, shapes=shapes), exporter=exporter,
                            compat="mmdeploy", dynamic_axes={"query": {1: "q"}, "reference_points": {1: "q"}})
    assert custom_nodes(proto) == [IDENTITIES[1]]
    node = next(n for n in proto.graph.node if n.domain == "mmdeploy")
    assert [(a.name, helper.get_attribute_value(a)) for a in node.attribute] == [("im2col_step", 64)]
    session = opbridge.create_session(proto)
    names = [i.name for i in session.get_inputs()]
    assert names == ["query", "value", "reference_points", "spatial_shapes", "level_start_index"]
    for queries in (9, 2, 20):
        args = layer_inputs(rng, queries=queries, embed=32, shapes=shapes)
        feeds = {name: a.numpy() for name, a in zip(names, args)}
        (out,) = session.run(None, feeds)
        with torch.no_grad():
            assert_close(out, layer(*args).numpy(), "model")
