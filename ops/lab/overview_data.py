"""The overview's and the classroom tour's numbers from a trace: the contract check the overview shows, and
what each tour step draws (content/tour.py is the script, viz/tour.py the picture)."""
from __future__ import annotations

import torch

from ..engine.trace import contract_shapes
from .stage_data import stream_norms, token_rms


def contract_check(trace) -> dict:
    """The trace's recorded shapes against the trace contract (ops/engine/trace.py) for its own config, B and S:
    checked (names both hold), recorded (names the trace holds), wrong [(name, recorded, contract)]."""
    want = {n: s for n, (s, _) in contract_shapes(trace.config, trace.B, trace.S).items()}
    got = trace.shapes()
    both = [n for n in got if n in want]
    return dict(checked=len(both), recorded=len(got),
                wrong=[(n, tuple(got[n]), want[n]) for n in both if tuple(got[n]) != tuple(want[n])])


def tour_data(trace, b: int, key: str) -> dict:
    """What one classroom-tour step shows for row b (only that step is computed): name and tensor, the live
    tensor under the picture, and the numbers its picture draws (first real tokens only)."""
    n, L = trace.lengths[b], trace.config.num_hidden_layers
    lay = lambda part: (f"layers.0.{part}", trace.layer(0, part))
    if key == "ids":
        return dict(name="tokens.ids", tensor=trace.token_ids, ids=trace.token_ids[b, :n].tolist())
    if key == "embedding":
        return dict(name="embed.out", tensor=trace.embeddings, z=trace.embeddings[b, :n, :64])
    if key == "rmsnorm":
        name, x = lay("attn_norm.out")
        return dict(name=name, tensor=x, rms=token_rms(x[b, :n]))
    if key in ("qkv", "rope"):
        q = trace.layer(0, "attn.q")[b, 0, :n, :32].float()
        name, x = lay("attn.q" if key == "qkv" else "attn.q_rope")
        return dict(name=name, tensor=x, z=q if key == "qkv" else x[b, 0, :n, :32].float() - q)
    if key in ("scores", "probs"):
        name, x = lay(f"attn.{key}")
        return dict(name=name, tensor=x, z=x[b, 0, :n, :n])
    if key in ("attn_out", "resid_out"):
        name, x = lay("attn.out" if key == "attn_out" else "resid_out")
        return dict(name=name, tensor=x, z=x[b, :n, :64])
    if key == "residual":
        name, x = lay("resid_mid")
        norm = lambda t: t[b, :n].float().norm(dim=-1)
        return dict(name=name, tensor=x, ratio=norm(trace.layer(0, "attn.out")) / norm(trace.layer_input(0)))
    if key == "mlp":
        name, x = lay("mlp.act" if "layers.0.mlp.act" in trace else "mlp.out")
        top = x[b, n - 1].float().abs().topk(min(15, x.shape[-1]))
        return dict(name=name, tensor=x, values=top.values, neurons=top.indices.tolist())
    if key == "repeat":
        return dict(name="residual stream", tensor=torch.stack(trace.residual_stream()), z=stream_norms(trace, b),
                    layers=["embed"] + [f"L{j}" for j in range(L)])
    if key == "final_norm":
        return dict(name="final_norm.out", tensor=trace.final_hidden(), z=trace.final_hidden()[b, :n, :64])
    if key == "logits":
        return dict(name="logits", tensor=trace.logits)
    if key == "softmax":
        return dict(name="softmax(logits[-1])", tensor=torch.softmax(trace.logits[b, n - 1].float(), -1))
    return {}


def opening(trace) -> dict:
    """What the overview's first sentence says about the reader's own prompt: the first row's text as typed, its
    token count (with the chat template when on), the batch, and the dimensions the page's symbols stand for."""
    c = trace.config
    return dict(prompt=trace.prompts[0], tokens=trace.lengths[0], chat=trace.texts[0] != trace.prompts[0],
                rows=trace.B, B=trace.B, S=trace.S, H=c.hidden_size, L=c.num_hidden_layers, V=c.vocab_size,
                model=c.name or c.model_type)
