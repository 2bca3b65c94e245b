"""The operators of a Qwen2-family decoder, as pure functions of (tensors, weights).

This is the code the app shows to learners, one function per pipeline stage.
Dimension legend (also used in every shape comment below):
    B   batch (prompts run together)          S   query positions in this call
    T   key positions (cached + new)          H   hidden size (residual stream width)
    nh  query heads        nkv  key/value heads        hd  head dim (H = nh * hd for Qwen2)
    I   MLP width          V    vocabulary rows         E   experts       k  experts per token
    hp  RoPE's dimension pairs (hd / 2)
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def embedding(ids: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """Gather: row ids[b, s] of the [V, H] table. No arithmetic, just indexing.  (B, S) -> (B, S, H)"""
    return table[ids]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """y = x / sqrt(mean(x^2) + eps) * gamma, per token over its last dimension, computed in float32."""
    x32 = x.float()
    inv_rms = torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return weight * (x32 * inv_rms).to(x.dtype)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """y = x W^T + b, with W stored as [out, in] (PyTorch / Hugging Face layout).

    One row in 16 bits on the CPU (decoding one token with the fast copy) goes through torch.mv: torch's
    matrix-vector kernel streams 16-bit weights faster than the matrix-matrix one F.linear picks for them
    (bench/gemv.py). Every other case is F.linear itself."""
    if x.numel() == x.shape[-1] and x.device.type == "cpu" and x.dtype in (torch.bfloat16, torch.float16):
        y = torch.mv(weight, x.reshape(-1))                              # (out,)
        y = y if bias is None else y + bias
        return y.reshape(*x.shape[:-1], weight.shape[0])
    return F.linear(x, weight, bias)


def rope_cos_sin(positions: torch.Tensor, inv_freq: torch.Tensor, scale: float = 1.0):
    """Rotary angles: position p turns dimension pair j by p * inv_freq[j].  (B, S) -> 2 x (B, S, hd)
    inv_freq (hd/2,) is theta^(-2j/hd), or its scaled form (ops/engine/rope.py: linear, dynamic, yarn, llama3);
    scale multiplies cos and sin (YaRN's attention factor, 1 otherwise), as transformers does. -> (cos, sin)"""
    freqs = positions.float()[..., None] * inv_freq.to(positions.device)   # (B, S, hd/2)
    emb = torch.cat((freqs, freqs), dim=-1)               # (B, S, hd): pair j is (j, j + hd/2)
    return emb.cos() * scale, emb.sin() * scale


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(x1, x2) -> (-x2, x1) on the two halves of the last dimension."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (x_j, x_{j+hd/2}) pair by its angle: x*cos + rotate_half(x)*sin.  (B, n, S, hd)"""
    cos, sin = cos[:, None].to(x.dtype), sin[:, None].to(x.dtype)   # (B, 1, S, hd) broadcasts over heads
    return x * cos + rotate_half(x) * sin


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """GQA: each KV head serves n_rep query heads.  (B, nkv, T, hd) -> (B, nkv * n_rep, T, hd)"""
    if n_rep == 1:
        return x
    B, nkv, T, hd = x.shape
    return x[:, :, None].expand(B, nkv, n_rep, T, hd).reshape(B, nkv * n_rep, T, hd)


def attention_mask(key_valid: torch.Tensor, q_positions: torch.Tensor, k_positions: torch.Tensor,
                   dtype=torch.float32) -> torch.Tensor:
    """Additive mask: 0 where query i may see key j (j <= i and key j is a real token), -inf elsewhere.

    key_valid (B, T) bool, q_positions (B, S), k_positions (B, T) -> (B, 1, S, T)
    """
    causal = k_positions[:, None, :] <= q_positions[:, :, None]        # (B, S, T)
    allowed = causal & key_valid[:, None, :]
    mask = torch.zeros(allowed.shape, dtype=dtype, device=allowed.device)
    return mask.masked_fill(~allowed, float("-inf"))[:, None]          # (B, 1, S, T)


def attention_scores(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """scores = q k^T / sqrt(hd) + mask.  q (B, nh, S, hd), k (B, nh, T, hd) -> (B, nh, S, T)"""
    scale = q.shape[-1] ** -0.5
    scores = torch.matmul(q * scale, k.transpose(-1, -2))     # scaling q (S x hd) costs less than scaling S x T
    return scores.add_(mask.to(q.dtype))                       # in place: one pass over the (S, T) scores


def softmax(scores: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax in float32 (exp of large logits overflows half precision), back to input dtype."""
    return torch.softmax(scores.float(), dim=-1).to(scores.dtype)


def attention_context(probs: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Each query's weighted sum of values, heads concatenated.  (B, nh, S, T) @ (B, nh, T, hd) -> (B, S, nh*hd)"""
    ctx = torch.matmul(probs, v)                                       # (B, nh, S, hd)
    B, nh, S, hd = ctx.shape
    return ctx.transpose(1, 2).reshape(B, S, nh * hd)                  # (B, S, nh*hd)


def swiglu(x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor):
    """SwiGLU MLP: down(silu(gate(x)) * up(x)); silu(z) = z * sigmoid(z).

    (.., H) -> gate, up, act (.., I) and out (.., H); the parts are returned so they can be shown.
    """
    gate = linear(x, w_gate)
    up = linear(x, w_up)
    act = swiglu_act(gate, up)
    return gate, up, act, linear(act, w_down)


def swiglu_act(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """The gated activation: silu(gate) * up, elementwise.  (.., I), (.., I) -> (.., I)"""
    return F.silu(gate) * up


def moe(x: torch.Tensor, router: torch.Tensor, experts: list, k: int, norm_topk_prob: bool,
        shared: tuple | None = None, shared_gate: torch.Tensor | None = None):
    """Mixture of experts: each token runs only its k best experts, weighted by the router.

    p = softmax(x R^T) over E experts; (w, idx) = topk(p, k); w /= sum(w) if norm_topk_prob;
    out = sum_k w_k * expert_k(x)  [+ sigmoid(x g^T) * shared_expert(x)  (Qwen2-MoE)]
    x (N, H); experts: E tuples (w_gate, w_up, w_down) -> out (N, H), probs (N, E), idx (N, k), w (N, k)
    """
    probs = torch.softmax(F.linear(x, router).float(), dim=-1)        # (N, E)
    weight, idx = torch.topk(probs, k, dim=-1)                          # (N, k)
    if norm_topk_prob:
        weight = weight / weight.sum(-1, keepdim=True)
    weight = weight.to(x.dtype)
    out = torch.zeros_like(x)
    for e in idx.unique().tolist():                                     # only experts some token chose
        rows, slot = torch.where(idx == e)
        w_gate, w_up, w_down = experts[e]
        y = swiglu(x[rows], w_gate, w_up, w_down)[3]
        out = out.index_add(0, rows, y * weight[rows, slot, None])
    if shared is not None:
        gate = torch.sigmoid(F.linear(x, shared_gate)) if shared_gate is not None else 1.0
        out = out + gate * swiglu(x, *shared)[3]
    return out, probs, idx, weight


def lm_head(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """One score per vocabulary row: logits = x W^T.  (B, S, H) @ (V, H)^T -> (B, S, V)"""
    return linear(x, weight)
