"""The Experiments page's numbers (app_pages/experiments.py) and the practice question built on them: a row's ids
to rerun, how far an edit moved the residual stream, a token's probability, the attribution waterfall and head
map, the layer an edit starts at, and how far one zeroed MLP output reaches (ablation_reach)."""
from __future__ import annotations

import torch

from . import experiments_edits


def row_ids(trace, b: int) -> list[int]:
    """Row b's real token ids, to rerun exactly those tokens (with edits) as a one-row trace."""
    return trace.token_ids[b, :trace.lengths[b]].tolist()


def residual_change(base, edited, b: int, s: int) -> dict:
    """How far an edited run's residual stream moved from the unedited one, per state (embed, then each
    layer): ‖x' − x‖ / ‖x‖ at position s ("at") and the largest over row b's real positions ("max")."""
    n = base.lengths[b]
    at, worst = [], []
    for x, y in zip(base.residual_stream(), edited.residual_stream()):
        d = (y[b, :n].float() - x[b, :n].float()).norm(dim=-1) / x[b, :n].float().norm(dim=-1).clamp_min(1e-12)
        at.append(d[s])
        worst.append(d.max())
    return dict(at=torch.stack(at), max=torch.stack(worst))


def first_changed(change: torch.Tensor) -> int | None:
    """Index of the first residual state an edit changed (0 = embed, i + 1 = after layer i), None if none."""
    moved = (change > 0).nonzero()
    return int(moved[0]) if len(moved) else None


def token_prob(trace, b: int, s: int, token_id: int) -> dict:
    """One token's logit and softmax probability after position s of row b."""
    logits = trace.logits[b, s].float()
    return dict(logit=float(logits[token_id]), prob=float(torch.softmax(logits, -1)[token_id]))


def scale_edit(name: str, factor: float) -> dict:
    """An edit (name -> fn) that multiplies the tensor recorded at `name` by factor (0 = zero it); the
    engine checks the name."""
    return {name: lambda x: x * factor}


def edited_layer(name: str, L: int) -> int | None:
    """The layer whose input an edit of trace name `name` cannot reach back to: k for "layers.{k}.*", L for the
    final norm and the logits (the whole stream is before them), None for the embedding or an unknown name."""
    parts = name.split(".")
    if len(parts) > 2 and parts[0] == "layers" and parts[1].isdigit():
        return int(parts[1])
    return L if name in ("final_norm.out", "logits") else None


def attribution_layers(attr: dict, L: int) -> tuple[list[str], list[float]]:
    """Direct logit attribution parts ("embed", "L{i}.attn.h{h}", "L{i}.attn.bias", "L{i}.mlp"/moe) summed
    into the waterfall's steps: embed, then each layer's attention and MLP, in the order the stream adds them."""
    steps = {"embed": 0.0}
    for i in range(L):
        steps[f"L{i} attn"] = 0.0
        steps[f"L{i} mlp"] = 0.0
    for part, v in attr.items():
        if part == "embed":
            key = "embed"
        else:
            layer, kind = part.split(".")[:2]
            key = f"{layer} {'attn' if kind == 'attn' else 'mlp'}"
        steps[key] = steps.get(key, 0.0) + float(v)
    return list(steps), list(steps.values())


def attribution_heads(attr: dict, L: int, nh: int) -> torch.Tensor:
    """(L, nh): each head's direct contribution to the logit (parts "L{i}.attn.h{h}")."""
    out = torch.zeros(L, nh)
    for part, v in attr.items():
        if ".attn.h" in part:
            layer, _, head = part.split(".")
            out[int(layer[1:]), int(head[1:])] = float(v)
    return out


def top_head_parts(attr: dict, k: int = 12) -> list[tuple[str, float]]:
    """The k attention heads ("L{i}.attn.h{h}" parts) with the largest |direct contribution|, largest first."""
    heads = [(p, float(v)) for p, v in attr.items() if ".attn.h" in p]
    return sorted(heads, key=lambda kv: -abs(kv[1]))[:k]


def ablation_reach(model, trace, b: int, layer: int, position: int) -> dict:
    """How far one edit reaches: row b rerun twice as a one-row trace, once as is and once with layer `layer`'s
    MLP output zeroed at `position` only. "first_layer": the first layer whose resid_out moved (None if none);
    "changed": the positions whose logits moved (causal attention: exactly position..n-1); "n": the row's tokens.
    Both runs have the same shape, so an untouched position comes out bit for bit the same."""
    ids = row_ids(trace, b)
    capture = ("embed.out", "layers.*.resid_out", "logits")
    base = model.trace_ids([ids], capture=capture)
    edited = model.trace_ids([ids], capture=capture, edits=experiments_edits.zero_mlp(model.config, layer, [position]))
    moved = residual_change(base, edited, 0, position)["max"]
    first = first_changed(moved)
    diff = (edited.logits[0].float() - base.logits[0].float()).abs().amax(-1)
    return dict(first_layer=None if first is None else first - 1,
                changed=[s for s in range(len(ids)) if diff[s] > 1e-6],
                n=len(ids), layer=layer, position=position)
