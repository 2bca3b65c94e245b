"""Worked examples small enough to do by hand: the numbers behind the plain-language "do it by hand" blocks.

Plain Python floats (a learner checks them with a pocket calculator), no tensors: softmax of a few logits at a
temperature, one RoPE pair as a clock hand, one attention row over three tokens, RMSNorm of four numbers.
tests/unit/test_worked.py checks each against PyTorch's own operators.
"""
from __future__ import annotations

import math

from ..errors import InputError

TEMPERATURES = (0.5, 1.0, 2.0)        # the comparison the plain text makes: sharper, as is, flatter


def _numbers(values, name: str) -> list[float]:
    out = [float(v) for v in values]
    if not out or not all(math.isfinite(v) for v in out):
        raise InputError(f"{name} must be finite numbers, got {list(values)!r}")
    return out


def softmax_steps(logits, T: float = 1.0) -> dict:
    """softmax(z / T) written out: z/T, the largest of them m, exp(z/T - m), their sum, and p = exp / sum.
    Subtracting m changes nothing in p (it cancels) and keeps exp from overflowing; "exp_raw" = exp(z/T)
    is the version a learner writes first (None where it would overflow)."""
    z = _numbers(logits, "logits")
    if not T > 0:
        raise InputError(f"temperature must be > 0 (T = 0 is greedy: take the largest logit), got {T!r}")
    scaled = [v / T for v in z]
    m = max(scaled)
    e = [math.exp(v - m) for v in scaled]
    total = sum(e)
    raw = [math.exp(v) if v < 700 else None for v in scaled]
    return dict(logits=z, T=float(T), scaled=scaled, max=m, exp=e, sum=total, probs=[x / total for x in e],
                exp_raw=raw, sum_raw=sum(raw) if None not in raw else None)


def softmax_temperatures(logits, temperatures=TEMPERATURES) -> list[dict]:
    """softmax_steps at each temperature: the same logits, sharper (T < 1) or flatter (T > 1)."""
    return [softmax_steps(logits, T) for T in temperatures]


# ---- RoPE: one dimension pair as the hand of a clock ---------------------------------------------------------
def rotate(v, angle: float) -> tuple[float, float]:
    """The 2-D vector v turned anticlockwise by angle (radians): R(angle) @ v."""
    x0, x1 = _numbers(v, "vector")
    c, s = math.cos(angle), math.sin(angle)
    return (c * x0 - s * x1, s * x0 + c * x1)


def wrap_degrees(angle: float) -> float:
    """An angle in radians as degrees in (-180, 180]: how far apart two hands look on the dial."""
    d = math.degrees(angle) % 360.0
    return d - 360.0 if d > 180.0 else d


def rope_clock(v, theta: float, positions) -> list[dict]:
    """v rotated by m·θ for each position m: {m, angle (rad), degrees (wrapped), x0, x1}."""
    out = []
    for m in positions:
        a = m * theta
        x0, x1 = rotate(v, a)
        out.append(dict(m=int(m), angle=a, degrees=wrap_degrees(a), x0=x0, x1=x1))
    return out


def dot(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


def rope_dot(q, k, m: int, n: int, theta: float) -> dict:
    """q at position m and k at position n, both rotated: their dot product equals q · R((n - m)θ) k,
    which holds only the vectors and the offset n - m (never m or n themselves)."""
    qm, kn = rotate(q, m * theta), rotate(k, n * theta)
    return dict(q_rot=qm, k_rot=kn, dot=dot(qm, kn), offset=n - m, via_offset=dot(q, rotate(k, (n - m) * theta)),
                unrotated=dot(q, k), degrees=wrap_degrees((n - m) * theta))


def rope_offsets(q, k, theta: float, offsets) -> list[dict]:
    """For each offset d = n - m: the angle between the two hands (wrapped to ±180°) and q · R(dθ) k.
    The angle grows with d only until it passes 180°; then the hands come round towards each other again."""
    return [dict(offset=int(d), angle=d * theta, degrees=wrap_degrees(d * theta), dot=dot(q, rotate(k, d * theta)))
            for d in offsets]


# ---- one attention row from three tokens --------------------------------------------------------------------
def attention_row(q, k, v, i: int) -> dict:
    """Query i of a causal attention over len(k) tokens, every number kept: scores q_i·k_j/√d, the causal mask
    (j > i is -inf), softmax over the keys it may see, and out = Σ_j p_j v_j.
    q, k, v: lists of equal-length vectors (one per token)."""
    q = [_numbers(r, "q") for r in q]
    k = [_numbers(r, "k") for r in k]
    v = [_numbers(r, "v") for r in v]
    n, d = len(k), len(k[0])
    if not 0 <= i < len(q):
        raise InputError(f"query {i} is out of range: there are {len(q)} tokens (0 to {len(q) - 1})")
    dots = [dot(q[i], k[j]) for j in range(n)]
    scores = [x / math.sqrt(d) for x in dots]
    visible = [j <= i for j in range(n)]
    masked = [s if ok else -math.inf for s, ok in zip(scores, visible)]
    m = max(masked)
    e = [math.exp(s - m) if ok else 0.0 for s, ok in zip(masked, visible)]
    total = sum(e)
    probs = [x / total for x in e]
    out = [sum(probs[j] * v[j][c] for j in range(n)) for c in range(len(v[0]))]
    return dict(i=i, d=d, sqrt_d=math.sqrt(d), dots=dots, scores=scores, visible=visible, masked=masked, max=m,
                exp=e, sum=total, probs=probs, out=out)


# ---- RMSNorm of four numbers ---------------------------------------------------------------------------------
def rmsnorm_steps(x, g, eps: float) -> dict:
    """y = g · x / sqrt(mean(x²) + ε), each step kept. An all-zero x gives mean 0, so 1/sqrt(ε) is large but
    finite, and y = 0: ε is what keeps the division defined."""
    x, g = _numbers(x, "x"), _numbers(g, "g")
    if len(g) != len(x):
        raise InputError(f"x has {len(x)} numbers but the weight g has {len(g)}")
    if not eps > 0:
        raise InputError(f"ε must be > 0, got {eps!r}")
    sq = [a * a for a in x]
    mean = sum(sq) / len(x)
    inv = 1.0 / math.sqrt(mean + eps)
    normed = [a * inv for a in x]
    return dict(x=x, g=g, eps=float(eps), sq=sq, sum=sum(sq), mean=mean, rms=math.sqrt(mean + eps), inv=inv,
                normed=normed, y=[a * b for a, b in zip(normed, g)])
