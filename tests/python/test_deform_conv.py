"""Deformable convolution through the built library in ORT, against torchvision.ops.deform_conv2d
in float64 (exact reference) and float32, for every node layout."""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest
import torch
import torchvision

from graphs import assert_close, one_node_model, run, run_error, session_error
from opbridge import manifest

DEFORM_CONV = manifest.load()["deform_conv"]
# identity -> its input names in order (no mask or bias where the layout has none)
LAYOUTS = {identity: [t.name for t in DEFORM_CONV.signature(identity).inputs] for identity in DEFORM_CONV.identities}


def make_case(seed, n, c, h, w, c_out, kh, kw, stride, pad, dil, groups, dgroups, mask, bias, offset_scale=2.0):
    rng = np.random.default_rng(seed)
    out_h = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    feeds = {
        "input": rng.standard_normal((n, c, h, w)).astype(np.float32),
        "offset": (rng.standard_normal((n, 2 * dgroups * kh * kw, out_h, out_w)) * offset_scale).astype(np.float32),
        "weight": rng.standard_normal((c_out, c // groups, kh, kw)).astype(np.float32),
    }
    if mask:
        feeds["mask"] = (1 / (1 + np.exp(-rng.standard_normal((n, dgroups * kh * kw, out_h, out_w))))).astype(np.float32)
    if bias:
        feeds["bias"] = rng.standard_normal(c_out).astype(np.float32)
    attrs = dict(stride=list(stride), padding=list(pad), dilation=list(dil), groups=groups, deform_groups=dgroups)
    return feeds, attrs


def dcn_model(identity, attrs, feeds):
    names = [name if name in feeds else "" for name in LAYOUTS[identity]]
    while names and names[-1] == "":
        names.pop()
    model = one_node_model(identity, attrs, [n for n in names if n], ["output"])
    del model.graph.node[0].input[:]
    model.graph.node[0].input.extend(names)  # "" marks an absent optional input
    return model


def torchvision_dcn(feeds, attrs, dtype):
    t = {k: torch.from_numpy(v).to(dtype) for k, v in feeds.items()}
    return torchvision.ops.deform_conv2d(
        t["input"], t["offset"], t["weight"], t.get("bias"), tuple(attrs["stride"]), tuple(attrs["padding"]),
        tuple(attrs["dilation"]), t.get("mask")).numpy()


SWEEP = [
    # n, c, h, w, c_out, kh, kw, stride, pad, dil, groups, deform_groups
    (1, 3, 12, 12, 8, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1),      # K = 27: not a multiple of 8 (mmdeploy's bug)
    (2, 4, 9, 11, 6, 3, 2, (2, 1), (1, 2), (1, 2), 2, 2),       # groups and deform groups together
    (2, 8, 10, 10, 4, 1, 1, (1, 1), (0, 0), (1, 1), 2, 4),      # 1x1, more deform groups than groups
    (1, 6, 7, 9, 6, 5, 5, (1, 2), (2, 1), (1, 1), 3, 3),        # 5x5, non-square stride and padding
    (1, 1, 8, 8, 2, 7, 7, (1, 1), (3, 3), (1, 1), 1, 1),        # 7x7, one channel (mmdeploy segfaults)
    (1, 16, 20, 24, 16, 3, 3, (1, 1), (1, 1), (2, 2), 4, 2),    # dilation 2
    (3, 2, 5, 6, 4, 2, 3, (3, 2), (0, 1), (1, 1), 1, 2),        # batch 3, even kernel
    (2, 64, 37, 29, 40, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1),    # 3 uneven pixel tiles; 40 outputs: a partial panel
]


@pytest.mark.parametrize("case,mask,bias", list(itertools.product(SWEEP, [True, False], [True, False])))
def test_opbridge_layout_matches_torchvision(case, mask, bias):
    seed = zlib.crc32(repr((case, mask, bias)).encode())
    feeds, attrs = make_case(seed, *case, mask=mask, bias=bias)
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    assert_close(actual, torchvision_dcn(feeds, attrs, torch.float32), "same_precision", "deform_conv")
    assert_close(actual, torchvision_dcn(feeds, attrs, torch.float64), "float64_reference", "deform_conv")


@pytest.mark.parametrize("identity", list(LAYOUTS))
def test_every_layout_as_its_exporter_writes_it(identity):
    modulated = "mask" in LAYOUTS[identity]
    feeds, attrs = make_case(3, 2, 4, 9, 11, 6, 3, 3, (1, 2), (1, 1), (1, 1), 2, 2, mask=modulated, bias=modulated)
    if identity.startswith("mmcv::MMCVDeformConv2d"):
        attrs.update(bias=0, im2col_step=32)  # mmcv writes these two; they mean nothing here
    if identity == "mmdeploy::MMCVDeformConv2d":
        attrs["padding"] = [1, 1, 1, 1]  # mmdeploy's [pad_h, pad_h, pad_w, pad_w]
    model = dcn_model(identity, attrs, feeds)
    model.opset_import[0].version = 11
    model.ir_version = 6
    (actual,) = run(model, feeds)
    assert_close(actual, torchvision_dcn(feeds, dict(attrs, padding=[1, 1]), torch.float64), "float64_reference",
                 "deform_conv")


def test_mmdeploy_four_value_padding_non_square():
    feeds, attrs = make_case(4, 1, 2, 8, 9, 3, 3, 3, (1, 1), (2, 1), (1, 1), 1, 1, mask=True, bias=True)
    model = dcn_model("mmdeploy::MMCVModulatedDeformConv2d", dict(attrs, padding=[2, 2, 1, 1]), feeds)
    (actual,) = run(model, feeds)
    assert_close(actual, torchvision_dcn(feeds, attrs, torch.float64), "float64_reference", "deform_conv")


def test_samples_far_outside_and_nan_offsets():
    feeds, attrs = make_case(5, 1, 2, 6, 6, 3, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1, mask=True, bias=False,
                             offset_scale=20.0)  # most samples leave the image
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    assert_close(actual, torchvision_dcn(feeds, attrs, torch.float64), "float64_reference", "deform_conv")
    feeds["offset"][0, 0, 2, 3] = np.nan  # one sample of one output pixel
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    assert np.isnan(actual[0, :, 2, 3]).all() and np.isfinite(np.delete(actual.reshape(3, -1), 2 * 6 + 3, axis=1)).all()


def test_samples_outside_are_zero_next_to_infinite_and_nan_inputs():
    # The map's border pixels are inf and NaN. A sample wholly outside the map is 0 (torchvision
    # never reads the map for it); a sample straddling the border reads them with their weights.
    feeds, attrs = make_case(8, 1, 2, 5, 5, 2, 1, 1, (1, 1), (0, 0), (1, 1), 1, 1, mask=False, bias=True)
    feeds["input"][:, :, 0, :] = np.inf
    feeds["input"][:, 1, :, 0] = np.nan
    offset = feeds["offset"].reshape(2, 5, 5)
    offset[:] = 0
    offset[0, 0, :] = -1.0   # top row: y = -1, outside by torchvision's rule (y <= -1)
    offset[1, :, 0] = -1.5   # left column: x = -1.5, outside
    offset[0, 4, 2] = -3.5   # y = 0.5: straddles rows 0 (inf) and 1; x = 2 gives weight 0 to column 3,
    #                          and torchvision multiplies that 0 by inf too: NaN, as here
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    expected = torchvision_dcn(feeds, attrs, torch.float64)
    assert np.isfinite(expected[0, :, 0, 1:]).all() and np.isfinite(expected[0, :, 1:, 0]).all()
    assert np.isnan(expected[0, :, 4, 2]).all()
    assert_close(actual, expected, "float64_reference", "deform_conv")


def test_size_one():
    feeds, attrs = make_case(6, 1, 2, 1, 1, 3, 1, 1, (1, 1), (0, 0), (1, 1), 1, 1, mask=True, bias=True)
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    assert_close(actual, torchvision_dcn(feeds, attrs, torch.float64), "float64_reference", "deform_conv")


@pytest.mark.parametrize("attrs,message", [
    (dict(stride=[1, 2, 3]), "stride must have 1 or 2 values (H, W), got 3"),
    (dict(stride=[0, 1]), "stride must be >= 1, got [0, 1]"),
    (dict(dilation=[1, 0]), "dilation must be >= 1, got [1, 0]"),
    (dict(padding=[1, 2, 3]), "padding must have 1, 2 (H, W) or 4 ([pad_h, pad_h, pad_w, pad_w]) values, got 3"),
    (dict(padding=[1, 2, 1, 2]), "a 4-value padding must be [pad_h, pad_h, pad_w, pad_w] (mmdeploy's form), got [1, 2, 1, 2]"),
    (dict(padding=[-1, 0]), "padding must be >= 0, got [-1, 0]"),
    (dict(groups=0), "groups must be >= 1, got 0"),
    (dict(deform_groups=-1), "deform_groups must be >= 1, got -1"),
])
@pytest.mark.parametrize("identity", ["opbridge::DeformConv2d", "mmcv::MMCVModulatedDeformConv2d"])
def test_bad_attributes_fail_at_session_creation(identity, attrs, message):
    feeds, base = make_case(8, 1, 2, 6, 6, 2, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1, mask=True, bias=True)
    assert f"{identity}: {message}" in session_error(dcn_model(identity, dict(base, **attrs), feeds))


def _bad(change):
    feeds, attrs = make_case(9, 1, 4, 6, 6, 4, 3, 3, (1, 1), (1, 1), (1, 1), 2, 2, mask=True, bias=True)
    attrs = dict(attrs)
    change(feeds, attrs)
    return feeds, attrs


@pytest.mark.parametrize("change,message", [
    (lambda f, a: f.update(weight=f["weight"][:, :1]), "input channels 4 must equal weight.shape[1] * groups = 1 * 2"),
    (lambda f, a: a.update(groups=3), "input channels 4 must be divisible by groups 3"),
    (lambda f, a: a.update(deform_groups=3), "input channels 4 must be divisible by deform_groups 3"),
    (lambda f, a: f.update(weight=f["weight"][:3]), "output channels 3 (weight.shape[0]) must be divisible by groups 2"),
    (lambda f, a: f.update(offset=f["offset"][:, :18]), "offset must have shape [N, 2 * deform_groups * kh * kw, H_out, W_out] = [1, 36, 6, 6], got [1, 18, 6, 6]"),
    (lambda f, a: f.update(mask=f["mask"][:, :9]), "mask must have shape [N, deform_groups * kh * kw, H_out, W_out] = [1, 18, 6, 6], got [1, 9, 6, 6]"),
    (lambda f, a: f.update(bias=f["bias"][:3]), "bias must have shape [C_out] = [4], got [3]"),
    (lambda f, a: f.update(input=f["input"][0]), "input must have rank 4 [N, C, H, W], got shape [4, 6, 6]"),
    (lambda f, a: a.update(padding=[0, 0], dilation=[4, 4]), "output size must be > 0"),
])
def test_bad_inputs_fail_at_run_time(change, message):
    feeds, attrs = _bad(change)
    assert f"opbridge::DeformConv2d: {message}" in run_error(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)


def test_absent_mask_before_bias_runs_on_every_runtime():
    """DeformConv2d's inputs [input, offset, weight, "", bias]: ORT 1.21 to 1.23 segfaulted
    creating the session (a null type for the absent input while preparing shape inference)."""
    feeds, attrs = make_case(8, 1, 4, 7, 7, 4, 3, 3, (1, 1), (1, 1), (1, 1), 1, 1, False, True)
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    assert_close(actual, torchvision_dcn(feeds, attrs, torch.float64), "float64_reference", "deform_conv")


@pytest.mark.parametrize("identity", list(LAYOUTS))
def test_single_int_stride_padding_dilation(identity):
    """mmcv's functional API writes stride, padding and dilation as plain ints when called with
    ints (its TensorRT plugin accepts them); they were refused with "stride must have 1 or 2
    values, got 0"."""
    modulated = "mask" in LAYOUTS[identity]
    feeds, attrs = make_case(5, 1, 4, 9, 8, 6, 3, 3, (2, 2), (1, 1), (2, 2), 1, 1, modulated, modulated)
    (as_lists,) = run(dcn_model(identity, attrs, feeds), feeds)
    int_attrs = dict(attrs, stride=2, padding=1, dilation=2)
    (as_ints,) = run(dcn_model(identity, int_attrs, feeds), feeds)
    np.testing.assert_array_equal(as_ints, as_lists)
    assert_close(as_ints, torchvision_dcn(feeds, attrs, torch.float64), "float64_reference", "deform_conv")


@pytest.mark.parametrize("stride,padding", [(2**32, 2**32), (1, 2**30), (1, 2**62), (2**62, 2**62)])
def test_padding_beyond_32_bit_coordinates_is_an_error(stride, padding):
    """Sample coordinates are 32-bit: size + 2 * padding must be < 2^31. Stride and padding 2^32
    overflowed them silently (a wrong output), and padding 2^62 overflowed the shape rules."""
    feeds, attrs = make_case(6, 1, 2, 6, 6, 2, 3, 3, (1, 1), (0, 0), (1, 1), 1, 1, False, False)
    attrs.update(stride=[stride, stride], padding=[padding, padding])
    out = min((6 + 2 * padding - 3) // stride + 1, 4)  # what the offset would need (kept small)
    feeds["offset"] = np.zeros((1, 18, out, out), np.float32)
    message = run_error(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    assert ("opbridge::DeformConv2d: input height and width plus twice the padding must each be < 2^31, "
            f"got input [1, 2, 6, 6] and padding ({padding}, {padding})") in message


def test_largest_padding_within_32_bit_coordinates_runs():
    """Padding (2^31 - 1 - 6) / 2 on a 6 x 6 input with stride 2^29: the output pixels sample the
    zero border except where they land on the input."""
    padding = (2**31 - 1 - 6) // 2
    feeds, attrs = make_case(7, 1, 1, 6, 6, 1, 1, 1, (1, 1), (0, 0), (1, 1), 1, 1, False, False)
    attrs.update(stride=[2**29, 2**29], padding=[padding, padding])
    out = (6 + 2 * padding - 1) // 2**29 + 1
    feeds["offset"] = np.zeros((1, 2, out, out), np.float32)
    (actual,) = run(dcn_model("opbridge::DeformConv2d", attrs, feeds), feeds)
    expected = torchvision_dcn(feeds, attrs, torch.float64)
    assert actual.shape == expected.shape == (1, 1, out, out)
    assert_close(actual, expected, "float64_reference", "deform_conv")
