"""opbridge.ops._one_node: one description of a one-node export (OneNode), checked against the
manifest and the torch op's schema, gives both exporters' code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
import torch.nn.functional as F

import opbridge
from opbridge.ops._one_node import OneNode

EXPORTERS = ["dynamo", "legacy"]


def test_a_description_is_checked_against_the_manifest_and_the_torch_op():
    corner_pool = torch.ops.opbridge.corner_pool.default
    with pytest.raises(ValueError, match=r"the manifest has no attributes \['size'\]"):
        OneNode("opbridge::CornerPool", corner_pool, attributes={"size": 3})
    with pytest.raises(ValueError, match="mode from direction, which the torch op does not take"):
        OneNode("opbridge::CornerPool", corner_pool, attributes={"mode": "direction"})
    with pytest.raises(ValueError, match="nothing feeds the required input rois"):
        OneNode("opbridge::RoiAlign", corner_pool)
    with pytest.raises(ValueError, match="nothing feeds the required attribute mode"):
        OneNode("opbridge::CornerPool", torch.ops.aten.cummax.default, inputs={"input": "self"})
    with pytest.raises(ValueError, match="outputs must be 1 to 2, got 3"):
        OneNode("opbridge::CumMax", torch.ops.aten.cummax.default, inputs={"input": "self"}, outputs=3)


class GroupNorm(torch.nn.Module):
    def __init__(self, weight: bool, bias: bool):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.weight = torch.randn(6, generator=g) if weight else None
        self.bias = torch.randn(6, generator=g) if bias else None

    def forward(self, x):
        return F.group_norm(x, 3, self.weight, self.bias, 1e-3)


@pytest.mark.parametrize("exporter", EXPORTERS)
@pytest.mark.parametrize("weight,bias", [(True, True), (True, False), (False, True), (False, False)])
def test_absent_optional_inputs_are_left_out_or_empty(exporter, weight, bias):
    """An absent trailing optional input is left out, an absent one before a present one is an
    empty name; the attributes are the manifest's, with the torch op's values."""
    model, x = GroupNorm(weight, bias), torch.randn(2, 6, 5, 4)
    proto = opbridge.export(model, (x,), exporter=exporter)
    (node,) = [n for n in proto.graph.node if n.domain == "opbridge"]
    assert node.op_type == "GroupNorm"
    present = [True, weight, bias]
    while not present[-1]:
        present.pop()
    assert [name != "" for name in node.input] == present
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attributes == {"num_groups": 3, "epsilon": pytest.approx(1e-3)}
    (actual,) = opbridge.create_session(proto).run(None, {"x": x.numpy()})
    np.testing.assert_allclose(actual, model(x).numpy(), rtol=1e-5, atol=1e-5)


def torchvision_deform_conv():
    import torchvision

    class DeformConv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.conv = torchvision.ops.DeformConv2d(4, 6, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                     groups=2)
            self.offset = torch.nn.Conv2d(4, 2 * 9, 3, stride=(2, 1), padding=(1, 2), dilation=(1, 2))

        def forward(self, x):
            return self.conv(x, self.offset(x))

    return DeformConv().eval()


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_bool_and_list_attributes(exporter):
    """torchvision's deform_conv2d: pairs of ints become int lists, use_mask=False leaves the
    mask out (an empty input before the bias)."""
    conv = torchvision_deform_conv()
    x = torch.randn(1, 4, 9, 9)
    proto = opbridge.export(conv, (x,), exporter=exporter)
    (node,) = [n for n in proto.graph.node if n.domain == "opbridge"]
    assert node.input[3] == "" and len(node.input) == 5
    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attributes == {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2], "groups": 2, "deform_groups": 1}


def test_the_first_export_of_an_op_with_a_type_parameter():
    """The generated function's TypeVar (cummax's T) exists before its source runs, also when it is
    the process's first export of the op."""
    code = ("import torch, opbridge\n"
            "class M(torch.nn.Module):\n"
            "    def forward(self, x):\n"
            "        return torch.cummax(x, 1)\n"
            "proto = opbridge.export(M(), (torch.randn(2, 5, dtype=torch.float64),))\n"
            "print([n.op_type for n in proto.graph.node if n.domain == 'opbridge'])\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "python"))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "['CumMax']"
