"""Scaled dot-product attention through the built library in ORT (opbridge::ScaledDotProductAttention,
mmdeploy::ScaledDotProductAttentionTRT), against the formula in float64 (torch) and
F.scaled_dot_product_attention in float32; masks, an all -inf row, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphs import assert_close, one_node_model, run, run_error
from opbridge import manifest

OP = "scaled_dot_product_attention"  # the tolerance table entry
IDENTITIES = manifest.load()["scaled_dot_product_attention"].identities


def attention_model(identity, with_mask):
    inputs = ["q", "k", "v"] + (["mask"] if with_mask else [])
    return one_node_model(identity, {}, inputs, ["output", "attn"])


def run_attention(identity, q, k, v, mask=None):
    feeds = {"q": q, "k": k, "v": v} | ({} if mask is None else {"mask": mask})
    return run(attention_model(identity, mask is not None), feeds)


def reference(q, k, v, mask=None):
    """mmdeploy's forward in float64."""
    q, k, v = (torch.from_numpy(t).double() for t in (q, k, v))
    attn = torch.bmm(q / np.sqrt(q.shape[-1]), k.transpose(-2, -1))
    if mask is not None:
        attn = attn + torch.from_numpy(mask).double()
    attn = attn.softmax(-1)
    return torch.bmm(attn, v).numpy(), attn.numpy()


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("b,nt,ns,e,ev", [(2, 5, 7, 4, 4), (8, 33, 40, 32, 32), (1, 1, 1, 1, 1), (3, 17, 9, 8, 5),
                                       (2, 200, 900, 32, 32)])
@pytest.mark.parametrize("mask_kind", ["none", "shared", "batched"])
def test_matches_float64_formula_and_torch(identity, b, nt, ns, e, ev, mask_kind):
    rng = np.random.default_rng(b * 100 + nt)
    q, k = (rng.standard_normal((b, n, e)).astype(np.float32) for n in (nt, ns))
    v = rng.standard_normal((b, ns, ev)).astype(np.float32)
    mask = {"none": None, "shared": rng.standard_normal((nt, ns)).astype(np.float32),
            "batched": rng.standard_normal((b, nt, ns)).astype(np.float32)}[mask_kind]
    out, attn = run_attention(identity, q, k, v, mask)
    ref_out, ref_attn = reference(q, k, v, mask)
    assert out.shape == (b, nt, ev) and attn.shape == (b, nt, ns)
    assert_close(attn, ref_attn, "float64_reference", OP)
    assert_close(out, ref_out, "float64_reference", OP)
    if ev == e:
        expected = F.scaled_dot_product_attention(*(torch.from_numpy(t) for t in (q, k, v)),
                                                  attn_mask=None if mask is None else torch.from_numpy(mask))
        assert_close(out, expected.numpy(), "float64_reference", OP)


def test_all_minus_infinity_mask_row_is_nan_as_in_torch():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(3))
    mask = np.zeros((4, 4), np.float32)
    mask[2, :] = -np.inf
    mask[1, :3] = -np.inf
    out, attn = run_attention("mmdeploy::ScaledDotProductAttentionTRT", q, k, v, mask)
    ref_out, ref_attn = reference(q, k, v, mask)
    assert np.isnan(attn[:, 2]).all() and np.isnan(out[:, 2]).all() and np.isnan(ref_attn[:, 2]).all()
    np.testing.assert_allclose(attn[:, 1], [[0, 0, 0, 1]] * 2)
    assert_close(out, ref_out, "float64_reference", OP)


def test_empty_keys_give_zero_output():
    q = np.ones((2, 3, 4), np.float32)
    out, attn = run_attention("opbridge::ScaledDotProductAttention", q, np.zeros((2, 0, 4), np.float32),
                              np.zeros((2, 0, 4), np.float32))
    assert attn.shape == (2, 3, 0)
    np.testing.assert_array_equal(out, np.zeros((2, 3, 4), np.float32))


@pytest.mark.parametrize("identity", IDENTITIES)
@pytest.mark.parametrize("shapes,message", [
    (((2, 3), (2, 5, 4), (2, 5, 4), None), "q must have rank 3 [B, Nt, E], got shape [2, 3]"),
    (((2, 3, 4), (2, 5, 3), (2, 5, 4), None), "k must be [B, Ns, E] with q's B and E, got q [2, 3, 4] and k [2, 5, 3]"),
    (((2, 3, 4), (2, 5, 4), (2, 6, 4), None), "v must be [B, Ns, Ev] with q's B and k's Ns, got q [2, 3, 4], k [2, 5, 4] and v [2, 6, 4]"),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4), (3, 4)), "mask must be [Nt, Ns] = [3, 5] or [B, Nt, Ns] = [2, 3, 5], got shape [3, 4]"),
])
def test_shape_errors(identity, shapes, message):
    q, k, v, m = (None if s is None else np.zeros(s, np.float32) for s in shapes)
    feeds = {"q": q, "k": k, "v": v} | ({} if m is None else {"mask": m})
    assert f"{identity}: {message}" in run_error(attention_model(identity, m is not None), feeds)
