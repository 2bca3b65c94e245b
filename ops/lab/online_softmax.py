"""Online softmax (FlashAttention's trick) run on the trace's real scores: softmax(s) @ v one block of keys at a
time against the eager result, and the memory traffic it saves (the Serving page's first section)."""
from __future__ import annotations

import math

import torch

from ..arith import costs
from ..engine import functional as fn
from ..engine.config import ModelConfig
from ..errors import InputError
from .checks import Check, compare


def online_softmax(scores: torch.Tensor, v: torch.Tensor, block: int) -> tuple[torch.Tensor, list[dict]]:
    """softmax(scores) @ v without ever holding a whole row of probabilities (FlashAttention's inner loop).

    Per block of keys j:  m' = max(m, max_j s_j);  alpha = exp(m - m');  p_j = exp(s_j - m')
                          l' = alpha * l + sum_j p_j;  acc' = alpha * acc + sum_j p_j v_j
    and at the end out = acc / l. scores (..., S, T) with -inf where masked, v (..., T, hd), float32 inside.
    Returns out (..., S, hd) and one state per block: start, end, block_max, m, l, alpha (..., S) and
    out = acc / l, the answer so far (..., S, hd).
    """
    if block < 1:
        raise InputError(f"block must be at least 1, got {block}")
    s, v = scores.float(), v.float()
    m = torch.full(s.shape[:-1], float("-inf"))                       # running max     (..., S)
    l = torch.zeros(s.shape[:-1])                                     # running sum     (..., S)
    acc = torch.zeros(*s.shape[:-1], v.shape[-1])                     # running P·V     (..., S, hd)
    states = []
    for start in range(0, s.shape[-1], block):
        sb = s[..., start:start + block]                              # (..., S, b)
        block_max = sb.amax(-1)
        m_new = torch.maximum(m, block_max)
        # a row with every key so far masked keeps m = -inf: subtract 0 there, so exp gives 0 and not NaN
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        alpha = torch.exp(m - shift)                                  # how much the old sum shrinks
        p = torch.exp(sb - shift[..., None])                          # (..., S, b)
        l = alpha * l + p.sum(-1)
        acc = alpha[..., None] * acc + p @ v[..., start:start + block, :]
        m = m_new
        states.append(dict(start=start, end=min(start + block, s.shape[-1]), block_max=block_max, m=m, l=l,
                           alpha=alpha, out=acc / l[..., None]))
    return acc / l[..., None], states


def eager_softmax_v(scores: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The eager reference: the whole probability matrix, then one matmul (what the trace's attention does)."""
    return fn.softmax(scores.float()) @ v.float()


def _layer_inputs(trace, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Layer i's scores (B, nh, S, S) and its values repeated per query head (B, nh, S, hd)."""
    scores = trace.attention_scores(i)
    v = trace.layer(i, "attn.v")
    return scores, fn.repeat_kv(v, scores.shape[1] // v.shape[1])


def online_softmax_view(trace, i: int, b: int, h: int, s: int, block: int) -> dict:
    """One query row (layer i, batch row b, head h, position s) run block by block, for the page's picture and
    table: the row's scores (T,), and per block its keys, block max, running max, rescale alpha, running sum
    and how far the answer so far is from the final one (relative L2)."""
    scores, v = _layer_inputs(trace, i)
    row = scores[b, h, s:s + 1].float()                               # (1, T)
    out, states = online_softmax(row, v[b, h], block)
    final = out[0]
    rows = [dict(block=k, keys=f"{st['start']}–{st['end'] - 1}", block_max=float(st["block_max"][0]),
                 m=float(st["m"][0]), alpha=float(st["alpha"][0]), l=float(st["l"][0]),
                 dist=float((st["out"][0] - final).norm() / final.norm().clamp_min(1e-30)))
            for k, st in enumerate(states)]
    eager = eager_softmax_v(row, v[b, h])[0]
    return dict(scores=row[0], blocks=[(st["start"], st["end"]) for st in states], rows=rows, out=final,
                max_diff=float((final - eager).abs().max()))


# Measured: on the bundled model, all 24 layers, prompts of 4 and 26 tokens, blocks of 1, 3 and 16 keys, max |online -
# eager| = 3.3e-6 (float32 sums taken in another order); on random N(0, 9) causal scores, 7 and 256 keys: 2.6e-6.
# 3e-5 is ten times the worst; a wrong rescale (alpha) or a dropped block moves results by 1e-2 or more.
ONLINE_TOL = 3e-5


def online_softmax_checks(trace, i: int, block: int) -> list[Check]:
    """Online softmax over every head and row of layer i against the eager probs @ v, and against the trace's
    own attn.context (what the forward pass computed)."""
    scores, v = _layer_inputs(trace, i)
    out, _ = online_softmax(scores, v, block)                         # (B, nh, S, hd)
    B, nh, S, hd = out.shape
    ctx = out.transpose(1, 2).reshape(B, S, nh * hd)
    return [compare(f"layer {i}: online softmax (blocks of {block}) vs softmax(scores) @ v", out,
                    eager_softmax_v(scores,
                                    v), ONLINE_TOL,
                                    f"第 {i} 层：分块在线 softmax（每块 {block} 个键）vs softmax(scores) @ v"),
            compare(f"layer {i}: online softmax vs the trace's attn.context", ctx, trace.layer(i, "attn.context"),
                    ONLINE_TOL, f"第 {i} 层：分块在线 softmax vs trace 中的 attn.context")]


def parse_scores(text: str) -> list[float]:
    """'2, 1, 3, 0.5' -> [2.0, 1.0, 3.0, 0.5] (commas, spaces or Chinese commas); InputError when unreadable."""
    parts = [p for p in text.replace("，", ",").replace(",", " ").split() if p]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise InputError(f"not a list of numbers: {text!r}") from None
    if not 1 <= len(values) <= 16 or not all(math.isfinite(x) for x in values):
        raise InputError("give 1 to 16 finite numbers")
    return values


def small_example(scores: list[float], block: int) -> list[dict]:
    """The hand-sized example: a handful of scores, v = the identity (so out = the probabilities). One row per
    block: the keys, block max, running max m, alpha, running sum l, and the probabilities known so far."""
    s = torch.tensor([scores], dtype=torch.float32)                   # (1, n)
    _, states = online_softmax(s, torch.eye(len(scores)), block)
    return [dict(block=k, keys=", ".join(f"{x:g}" for x in scores[st["start"]:st["end"]]),
                 block_max=float(st["block_max"][0]), m=float(st["m"][0]), alpha=float(st["alpha"][0]),
                 l=float(st["l"][0]), probs=[float(p) for p in st["out"][0]]) for k, st in enumerate(states)]


def score_traffic(c: ModelConfig, S: int, dtype_bytes: int = 2, gpu: str = "H200 141GB") -> dict:
    """HBM bytes of one prefill's attention with and without the S x S matrix (FlashAttention's saving).

    Eager: per head and layer it writes the scores, reads them for the softmax, writes the probabilities and
    reads them for P·V: 4 · S² · bytes. Both read q, k, v and write the output at least once:
    (2·nh + 2·nkv) · S · hd · bytes per layer (FlashAttention re-reads k, v once per query block on top).
    """
    L, nh, nkv, hd = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    matrix = S * S * dtype_bytes
    eager_head = 4 * matrix
    qkvo = (2 * nh + 2 * nkv) * S * hd * dtype_bytes * L
    bw = costs.GPUS[gpu]["tb_per_s"] * 1e12
    return dict(S=S, matrix=matrix, eager_head_layer=eager_head, eager_matrix=eager_head * nh * L, qkvo=qkvo,
                eager_total=eager_head * nh * L + qkvo, flash_total=qkvo, saved=eager_head * nh * L,
                eager_ms=(eager_head * nh * L + qkvo) / bw * 1e3, flash_ms=qkvo / bw * 1e3)
