"""The "do it by hand" numbers (ops/arith/worked_math.py) against PyTorch's own operators, and RoPE's relative-position
property. The worked examples use Python floats (float64); the references run in float64 too, so 1e-12 is
rounding noise, not a modelling gap."""
from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from ops.arith import worked_math
from ops.errors import InputError

TOL = 1e-12


def close(got, want, tol=TOL):
    got, want = torch.as_tensor(got, dtype=torch.float64), torch.as_tensor(want, dtype=torch.float64)
    diff = (got - want).abs().max().item()
    assert diff <= tol, f"max |diff| = {diff:.3g} > {tol:g}: {got.tolist()} vs {want.tolist()}"


@pytest.mark.parametrize("T", [0.5, 1.0, 2.0, 0.1, 5.0])
@pytest.mark.parametrize("logits", [(2.0, 1.0, 0.0), (-10.0, 10.0, 0.5), (3.0, 3.0, 3.0)])
def test_softmax_matches_torch(logits, T):
    r = worked_math.softmax_steps(logits, T)
    z = torch.tensor(logits, dtype=torch.float64)
    close(r["probs"], torch.softmax(z / T, -1))
    close(r["scaled"], z / T)
    close(r["exp_raw"], torch.exp(z / T), tol=1e-9 * float(torch.exp(z / T).max()))    # relative: e^100 is large
    assert abs(sum(r["probs"]) - 1) < TOL
    # the written-out way (exp, then divide by the sum) gives the same p as the max-shifted way
    close([e / r["sum_raw"] for e in r["exp_raw"]], r["probs"])


def test_temperature_sharpens_and_flattens():
    low, one, high = worked_math.softmax_temperatures((2.0, 1.0, 0.0))
    assert low["probs"][0] > one["probs"][0] > high["probs"][0]
    assert [x["T"] for x in (low, one, high)] == [0.5, 1.0, 2.0]


def test_softmax_refuses_a_zero_temperature_and_nan():
    with pytest.raises(InputError):
        worked_math.softmax_steps((1.0, 2.0, 3.0), 0.0)
    with pytest.raises(InputError):
        worked_math.softmax_steps((1.0, float("nan"), 3.0), 1.0)


def rotation(angle: float) -> torch.Tensor:
    c, s = math.cos(angle), math.sin(angle)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


def test_rope_clock_is_a_rotation_matrix():
    v, theta = (1.5, -0.5), 0.7
    for row in worked_math.rope_clock(v, theta, range(13)):
        want = rotation(row["m"] * theta) @ torch.tensor(v, dtype=torch.float64)
        close([row["x0"], row["x1"]], want)
        assert -180 < row["degrees"] <= 180


def test_rope_matches_the_models_rotate_half_form():
    """One pair (x_j, x_{j+hd/2}) of ops.engine.functional.apply_rope is the same 2-D rotation (hd = 2: one pair)."""
    from ops.engine import functional as fn

    theta, m = 0.9, 5
    x = torch.tensor([[[[0.3, -1.2]]]], dtype=torch.float64)                  # (B, nh, S, hd) = (1, 1, 1, 2)
    cos = torch.tensor([[[math.cos(m * theta)] * 2]], dtype=torch.float64)   # (B, S, hd)
    sin = torch.tensor([[[math.sin(m * theta)] * 2]], dtype=torch.float64)
    got = fn.apply_rope(x, cos, sin)[0, 0, 0]
    close(worked_math.rotate((0.3, -1.2), m * theta), got)


@pytest.mark.parametrize("theta", [0.05, 1.0, 2.5])
def test_rope_dot_depends_on_the_offset_only(theta):
    q, k = (1.0, 2.0), (-0.5, 1.5)
    for m, n in [(0, 3), (2, 5), (7, 10), (12, 15)]:                          # the same offset 3 everywhere
        r = worked_math.rope_dot(q, k, m, n, theta)
        want = (rotation(m * theta) @ torch.tensor(q, dtype=torch.float64)) @ (rotation(n * theta) @ torch.tensor(k, dtype=torch.float64))
        close(r["dot"], want)
        close(r["dot"], r["via_offset"])
        close(r["dot"], worked_math.rope_dot(q, k, 0, 3, theta)["dot"])
    assert abs(worked_math.rope_dot(q, k, 0, 1, theta)["dot"] - worked_math.rope_dot(q, k, 0, 3, theta)["dot"]) > 1e-6


def test_rope_angle_wraps_around():
    """At θ = 1 rad per position the hands are 171.9° apart at offset 3 but only 16.2° apart at offset 6."""
    rows = worked_math.rope_offsets((1.0, 0.0), (1.0, 0.0), 1.0, range(8))
    assert abs(rows[3]["degrees"]) > 170 and abs(rows[6]["degrees"]) < 17
    close([r["dot"] for r in rows], [math.cos(d) for d in range(8)])        # q = k = (1, 0): q·R(d)k = cos d


Q = [[1, 0], [0, 1], [1, 2]]
K = [[1, 0], [0, 2], [2, 0]]
V = [[1, 0], [0, 1], [2, 2]]


@pytest.mark.parametrize("i", [0, 1, 2])
def test_attention_row_matches_sdpa(i):
    r = worked_math.attention_row(Q, K, V, i)
    q, k, v = (torch.tensor(x, dtype=torch.float64)[None, None] for x in (Q, K, V))   # (1, 1, 3, 2)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True)[0, 0, i]
    close(r["out"], want)
    scores = (q[0, 0, i] @ k[0, 0].T) / math.sqrt(2)
    close(r["scores"], scores)
    probs = torch.softmax(scores.masked_fill(torch.arange(3) > i, -math.inf), -1)
    close(r["probs"], probs)
    assert r["visible"] == [j <= i for j in range(3)] and all(p == 0 for p, ok in zip(r["probs"], r["visible"]) if not ok)


@pytest.mark.parametrize("x, eps", [((1.0, -2.0, 3.0, 2.0), 1e-6), ((0.01, 0.0, -0.02, 0.005), 1.0),
                                    ((0.0, 0.0, 0.0, 0.0), 1e-6), ((100.0, -100.0, 50.0, 1.0), 0.01)])
def test_rmsnorm_matches_the_formula_and_torch(x, eps):
    g = (1.0, 1.0, 0.5, 2.0)
    r = worked_math.rmsnorm_steps(x, g, eps)
    xt, gt = torch.tensor(x, dtype=torch.float64), torch.tensor(g, dtype=torch.float64)
    want = xt * torch.rsqrt(xt.pow(2).mean() + eps) * gt
    close(r["y"], want)
    close(r["y"], F.rms_norm(xt, (4,), gt, eps))
    close(r["mean"], xt.pow(2).mean())
    assert all(math.isfinite(v) for v in r["y"] + [r["inv"]])               # all zeros: ε keeps it finite


def test_rmsnorm_refuses_mismatched_weights():
    with pytest.raises(InputError):
        worked_math.rmsnorm_steps((1.0, 2.0), (1.0,), 1e-6)
