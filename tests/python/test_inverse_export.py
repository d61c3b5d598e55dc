"""Export round trips of torch.inverse, torch.linalg.inv and torch.linalg.inv_ex: exported with each
exporter, to opbridge::Inverse (the default) and to ORT's com.microsoft::Inverse
(standard_ops=("inverse",)), with a dynamic batch, run in ORT with the library at other batch sizes
(0 included) and compared with eager PyTorch; singular matrices, the info output and float64 models
through each target."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch

import opbridge
from graphs import EXPORTERS, assert_close
from opbridge.export import custom_nodes
TARGETS = {"opbridge": ((), "opbridge::Inverse"), "com.microsoft": (("inverse",), "com.microsoft::Inverse")}


class TorchInverse(torch.nn.Module):
    """Maps points through the inverses of a batch of homographies."""

    def forward(self, homographies, points):
        return points @ torch.inverse(homographies).transpose(-1, -2)


class LinalgInv(torch.nn.Module):
    def forward(self, matrices):
        return torch.linalg.inv(matrices) * 2.0


class LinalgInvEx(torch.nn.Module):
    def __init__(self, check_errors: bool = False):
        super().__init__()
        self.check_errors = check_errors

    def forward(self, matrices):
        inverse, info = torch.linalg.inv_ex(matrices, check_errors=self.check_errors)
        return inverse, info


def matrices(batch: tuple, m: int, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    """Well-conditioned matrices that need row swaps: normal entries plus 2 sqrt(m) on the diagonal,
    rows reversed."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(batch + (m, m), generator=g, dtype=torch.float64) + 2.0 * m ** 0.5 * torch.eye(m, dtype=torch.float64)
    return a.flip(-2).to(dtype)


def homography_inputs(batch: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed + 100)
    return matrices((batch,), 3, seed), torch.randn(batch, 7, 3, generator=g)


def export(model, args, exporter, target, dynamic_axes):
    standard_ops, node = TARGETS[target]
    proto = opbridge.export(model.eval(), args, exporter=exporter, dynamic_axes=dynamic_axes,
                            standard_ops=standard_ops)
    assert custom_nodes(proto) == [node]
    return proto


def run_and_compare(proto, model, args, names):
    """Runs the exported model on `args` and compares every output with eager PyTorch."""
    session = opbridge.create_session(proto)
    outputs = session.run(None, {name: a.numpy() for name, a in zip(names, args)})
    with torch.no_grad():
        expected = model(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(outputs) == len(expected)
    for actual, want in zip(outputs, expected):
        assert actual.shape == tuple(want.shape) and actual.dtype == want.numpy().dtype
        assert_close(actual, want.numpy(), "model", "inverse")


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("target", TARGETS)
def test_torch_inverse_round_trip(exporter, target):
    proto = export(TorchInverse(), homography_inputs(5), exporter, target,
                   {"homographies": {0: "batch"}, "points": {0: "batch"}})
    if target == "opbridge":
        (node,) = [n for n in proto.graph.node if n.op_type == "Inverse"]
        assert {a.name: a.i for a in node.attribute} == {"check_errors": 1}
        assert len(node.output) == 1
    for batch in (5, 3, 1, 0):
        run_and_compare(proto, TorchInverse(), homography_inputs(batch, seed=batch), ["homographies", "points"])


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("target", TARGETS)
def test_linalg_inv_round_trip(exporter, target):
    proto = export(LinalgInv(), (matrices((4,), 6),), exporter, target, {"matrices": {0: "batch"}})
    for batch, m_seed in ((4, 1), (9, 2), (0, 3)):
        run_and_compare(proto, LinalgInv(), (matrices((batch,), 6, m_seed),), ["matrices"])


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_verify_with_dynamic_batch(exporter):
    """opbridge.verify: the default export at the example's batch, another and 0."""
    report = opbridge.verify(LinalgInv(), (matrices((6,), 12),), exporter=exporter,
                             dynamic_axes={"matrices": {0: "batch"}}, print_report=False)
    assert report.ok and report.custom_ops == ["opbridge::Inverse"], str(report)
    assert [s.size for s in report.sizes] == [4, 0]


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("target", TARGETS)
def test_rank4_with_two_dynamic_dims(exporter, target):
    proto = export(LinalgInv(), (matrices((2, 3), 4),), exporter, target, {"matrices": {0: "a", 1: "b"}})
    run_and_compare(proto, LinalgInv(), (matrices((3, 1), 4, 5),), ["matrices"])
    run_and_compare(proto, LinalgInv(), (matrices((2, 3), 4, 6),), ["matrices"])


def singular_batch() -> torch.Tensor:
    a = matrices((3,), 3, seed=7)
    # Singular, with an elimination exact in float32, so that PyTorch's LAPACK finds the zero pivot
    # (diagonal element 3) on every CPU (test_inverse.py's EXACTLY_SINGULAR["rows_doubled"]).
    a[1] = torch.tensor([[1.0, 2.0, 4.0], [4.0, 4.0, 8.0], [2.0, 4.0, 8.0]])
    return a


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_singular_matrix_through_each_target(exporter):
    """PyTorch raises; the default export raises in ORT, naming the matrix; com.microsoft::Inverse
    returns non-finite values without an error."""
    a = singular_batch()
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): The diagonal element 3 is zero"):
        LinalgInv()(a)
    ours = opbridge.create_session(export(LinalgInv(), (matrices((3,), 3),), exporter, "opbridge",
                                          {"matrices": {0: "batch"}}))
    with pytest.raises(Exception, match=r"opbridge::Inverse: the matrix input\[1, :, :\] is singular: "
                                        r"diagonal element 3 \(counting from 1\)"):
        ours.run(None, {"matrices": a.numpy()})
    microsoft = opbridge.create_session(export(LinalgInv(), (matrices((3,), 3),), exporter, "com.microsoft",
                                               {"matrices": {0: "batch"}}))
    (output,) = microsoft.run(None, {"matrices": a.numpy()})
    assert not np.all(np.isfinite(output[1])) and np.all(np.isfinite(output[[0, 2]]))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_linalg_inv_ex_exports_info(exporter):
    proto = export(LinalgInvEx(), (matrices((3,), 3),), exporter, "opbridge", {"matrices": {0: "batch"}})
    (node,) = proto.graph.node
    assert len(node.output) == 2 and {a.name: a.i for a in node.attribute} == {"check_errors": 0}
    assert proto.graph.output[1].type.tensor_type.elem_type == onnx.TensorProto.INT32
    a = singular_batch()
    inverse, info = opbridge.create_session(proto).run(None, {"matrices": a.numpy()})
    expected_inverse, expected_info = LinalgInvEx()(a)
    assert info.tolist() == expected_info.tolist() == [0, 3, 0]
    assert not np.all(np.isfinite(inverse[1]))
    assert_close(inverse[[0, 2]], expected_inverse[[0, 2]].numpy(), "model", "inverse")
    run_and_compare(proto, LinalgInvEx(), (matrices((5,), 3, 8),), ["matrices"])


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_linalg_inv_ex_with_check_errors(exporter):
    proto = export(LinalgInvEx(check_errors=True), (matrices((3,), 3),), exporter, "opbridge",
                   {"matrices": {0: "batch"}})
    assert {a.name: a.i for a in proto.graph.node[0].attribute} == {"check_errors": 1}
    with pytest.raises(Exception, match=r"opbridge::Inverse: the matrix input\[1, :, :\] is singular"):
        opbridge.create_session(proto).run(None, {"matrices": singular_batch().numpy()})


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_linalg_inv_ex_is_refused_for_com_microsoft(exporter):
    with pytest.raises(Exception, match="torch.linalg.inv_ex has no com.microsoft::Inverse translation"):
        opbridge.export(LinalgInvEx(), (matrices((3,), 3),), exporter=exporter, standard_ops=("inverse",))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_float64_needs_com_microsoft(exporter):
    a = matrices((4,), 5, dtype=torch.float64)
    with pytest.raises(Exception, match=r"opbridge::Inverse takes float32 matrices, got float64; export with "
                                        r"standard_ops=\(\"inverse\",\)"):
        opbridge.export(LinalgInv(), (a,), exporter=exporter)
    proto = export(LinalgInv(), (a,), exporter, "com.microsoft", {"matrices": {0: "batch"}})
    run_and_compare(proto, LinalgInv(), (matrices((2,), 5, 9, dtype=torch.float64),), ["matrices"])
