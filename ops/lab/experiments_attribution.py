"""Direct logit attribution: a logit split exactly into what each part of the network wrote to the stream.

The last residual state is a sum: x = embed.out + sum over layers of (attn.out + mlp.out), and each
attn.out is itself a sum over heads, o_proj applied to that head's slice of attn.context (+ a bias, if
o_proj has one). The final norm is x * inv_rms(x) * gamma; with inv_rms taken from the trace (frozen, a
number per token) it is linear in x, so

    logit = sum over parts p of  p . (inv_rms * gamma * W_lm[token])

and the parts add up to the logit exactly (up to float rounding). The sums are taken in float64.
"""
from __future__ import annotations

from collections import OrderedDict

import torch

from ..engine.trace import Trace
from ..errors import InputError


def resolve_position(trace: Trace, row: int, position: int) -> int:
    """position in row's real tokens (-1: the last one), or InputError naming what is out of range."""
    if not 0 <= row < trace.B:
        raise InputError(f"row {row} is out of range: the trace has {trace.B} rows (0 to {trace.B - 1})")
    n = trace.lengths[row]
    p = n - 1 if position == -1 else position
    if not 0 <= p < n:
        raise InputError(f"position {position} is out of range: row {row} has {n} tokens (0 to {n - 1})")
    return p


def _check(trace: Trace, row: int, position: int, token_id: int) -> int:
    p = resolve_position(trace, row, position)
    V = trace.config.vocab_size
    if not 0 <= int(token_id) < V:
        raise InputError(f"token id {token_id} is out of range: the vocabulary has {V} rows (0 to {V - 1})")
    return p


def readout(model, trace: Trace, row: int, position: int, token_id: int) -> torch.Tensor:
    """(H,) float64: inv_rms(x) * gamma * W_lm[token], x the last resid_out at (row, position): a part's
    contribution to the logit is its dot product with this vector."""
    c = model.config
    x = trace.layer(c.num_hidden_layers - 1, "resid_out")[row, position].double()
    inv_rms = torch.rsqrt(x.pow(2).mean() + c.rms_norm_eps)
    gamma = model.w("model.norm.weight").double().cpu()
    return inv_rms * gamma * model.w("lm_head.weight")[int(token_id)].double().cpu()


def logit_attribution(model, trace: Trace, row: int, position: int, token_id: int) -> "OrderedDict[str, float]":
    """part -> contribution to trace.logits[row, position, token_id], in the order the stream adds them:
    "embed", then per layer "L{i}.attn.h{h}" for each head, "L{i}.attn.bias" (when o_proj has a bias) and
    "L{i}.mlp" ("L{i}.moe" on a MoE layer). position -1: the row's last real token."""
    p = _check(trace, row, position, token_id)
    c = model.config
    nh, hd = c.num_attention_heads, c.head_dim
    u = readout(model, trace, row, p, token_id)                                # (H,)
    out: OrderedDict[str, float] = OrderedDict()
    out["embed"] = float(trace["embed.out"][row, p].double() @ u)
    for i in range(c.num_hidden_layers):
        w = f"model.layers.{i}.self_attn.o_proj."
        Wo = model.w(w + "weight").double().cpu()                             # (H, nh*hd)
        ctx = trace.layer(i, "attn.context")[row, p].double().view(nh, hd)    # (nh, hd)
        per_head = (ctx * (u @ Wo).view(nh, hd)).sum(-1)                       # (nh,)
        for h in range(nh):
            out[f"L{i}.attn.h{h}"] = float(per_head[h])
        bias = model.w(w + "bias")
        if bias is not None:
            out[f"L{i}.attn.bias"] = float(bias.double().cpu() @ u)
        out[f"L{i}.{'moe' if c.is_moe_layer(i) else 'mlp'}"] = float(trace.layer(i, "mlp.out")[row, p].double() @ u)
    return out


def top_parts(attr: dict, k: int = 10) -> list[tuple[str, float]]:
    """The k parts with the largest |contribution|, largest first."""
    return sorted(attr.items(), key=lambda kv: -abs(kv[1]))[:k]
