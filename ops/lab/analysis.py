"""Analyses for the overview and tour, and for the lab's pages (experiments, compare, head atlas, precision): each
takes trace tensors (and, where it needs them, the model) and returns tensors or numbers; figures are drawn from
these in viz/. The stage pages' own helpers are ops/lab/stage_data.py."""
from __future__ import annotations

import torch
import torch.nn.functional as F

from . import edits
from .stage_data import stream_norms, token_rms


# ---- overview and classroom tour ----------------------------------------------------------------------
def contract_check(trace) -> dict:
    """The trace's recorded shapes against the trace contract (ops/engine/trace.py) for its own config, B and S:
    checked (names both hold), recorded (names the trace holds), wrong [(name, recorded, contract)]."""
    from ..engine.trace import contract_shapes
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


def decode_summary(decoder) -> dict:
    """A decoding so far (ops.engine.decode.Decoder): per step the time (ms) and the KV cache's bytes, the prefill and
    mean decode time, and the KV bytes one token adds in the cache's dtype (ops.arith.costs.kv_bytes_per_token)."""
    from ..arith import costs
    ms = torch.tensor([1000 * s.seconds for s in decoder.steps])
    kv = torch.tensor([float(s.kv_bytes) for s in decoder.steps])
    per_token = costs.kv_bytes_per_token(decoder.model.config, getattr(torch, decoder.compute_dtype).itemsize)
    return dict(ms=ms, kv_bytes=kv, kv_per_token=per_token, prefill_ms=float(ms[0]) if len(ms) else None,
                decode_ms=float(ms[1:].mean()) if len(ms) > 1 else None)


def generation_report(decoder) -> dict:
    """What a decoding's options did, from its Generation (ops.engine.decode): forward passes made and those plain
    one-token decoding would make more (passes saved), the prefill's passes and its largest pass's tokens, and for a
    draft the tokens proposed, accepted and the acceptance rate (None before any proposal)."""
    g = decoder.result()
    return dict(tokens=len(g.token_ids), prompt_tokens=len(g.prompt_ids), forward_passes=g.forward_passes,
                passes_saved=g.passes_saved, prefill_passes=g.prefill_passes, prefill_largest=g.prefill_largest,
                draft=g.draft, proposed=g.proposed, accepted=g.accepted,
                acceptance=g.accepted / g.proposed if g.proposed else None)


# ---- experiments, compare, head atlas, precision (the pages of issue 11) --------------------------------
def row_ids(trace, b: int) -> list[int]:
    """Row b's real token ids, to rerun exactly those tokens (with edits) as a one-row trace."""
    return trace.token_ids[b, :trace.lengths[b]].tolist()


def head_maps(trace, b: int) -> torch.Tensor:
    """(L, nh, n, n): every head's attention probabilities on row b's real tokens."""
    n = trace.lengths[b]
    return torch.stack([trace.attention_probs(i)[b, :, :n, :n].float() for i in range(trace.config.num_hidden_layers)])


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


def pair_top(ta, tb, k: int = 6) -> dict:
    """Two one-row traces' next-token distributions at their last real positions, over the union of each
    one's top k: ids, and the probability of each under A and under B."""
    pa = torch.softmax(ta.logits[0, ta.lengths[0] - 1].float(), -1)
    pb = torch.softmax(tb.logits[0, tb.lengths[0] - 1].float(), -1)
    ids = list(dict.fromkeys(pa.topk(k).indices.tolist() + pb.topk(k).indices.tolist()))
    ids.sort(key=lambda i: -float(max(pa[i], pb[i])))
    return dict(ids=ids, pa=pa[ids], pb=pb[ids], top_a=int(pa.argmax()), top_b=int(pb.argmax()))


def compare_streams(ta, tb) -> dict:
    """Two one-row traces' residual streams, state by state: cosine and ‖a − b‖ / ‖a‖ at each one's last real
    position, and, when the token counts are equal, the cosine at every position ((L + 1, n), else None)."""
    na, nb = ta.lengths[0], tb.lengths[0]
    cos, rel, maps = [], [], []
    for xa, xb in zip(ta.residual_stream(), tb.residual_stream()):
        a, b = xa[0, na - 1].float(), xb[0, nb - 1].float()
        cos.append(F.cosine_similarity(a, b, dim=0))
        rel.append((a - b).norm() / a.norm().clamp_min(1e-12))
        if na == nb:
            maps.append(F.cosine_similarity(xa[0, :na].float(), xb[0, :nb].float(), dim=-1))
    return dict(cos=torch.stack(cos), rel=torch.stack(rel), cos_map=torch.stack(maps) if maps else None)


def differing_positions(ta, tb) -> list[int]:
    """Positions where two equal-length one-row traces hold different tokens."""
    n = min(ta.lengths[0], tb.lengths[0])
    return (ta.token_ids[0, :n] != tb.token_ids[0, :n]).nonzero().flatten().tolist()


def serving_rows(configs: dict, gpu: str = "H200 141GB", context: int = 32768) -> list[dict]:
    """What each weight format means when serving: per model and format the weight bytes, the decode-step
    bound (every weight read once per token at the GPU's bandwidth), and how many tokens of bf16 KV cache
    fit in the memory the weights leave free."""
    from ..arith import costs
    g = costs.GPUS[gpu]
    rows = []
    for label, c in configs.items():
        kv = costs.kv_cache_bytes(c, 1, 2)
        for name, bits in (("float32", 32), ("bfloat16", 16), ("int8", 8)):
            w = costs.weight_bytes(c, bits)
            free = g["mem_gb"] * 1e9 - w
            rows.append(dict(model=label, dtype=name, weights=w, decode_ms=w / (g["tb_per_s"] * 1e12) * 1e3,
                             kv_tokens=max(0, int(free // kv)), fits=free > 0,
                             contexts=max(0, int(free // (kv * context)))))
    return rows


def token_prob(trace, b: int, s: int, token_id: int) -> dict:
    """One token's logit and softmax probability after position s of row b."""
    logits = trace.logits[b, s].float()
    return dict(logit=float(logits[token_id]), prob=float(torch.softmax(logits, -1)[token_id]))


def scale_edit(name: str, factor: float) -> dict:
    """An edit (name -> fn) that multiplies the tensor recorded at `name` by factor (0 = zero it); the
    engine checks the name."""
    return {name: lambda x: x * factor}


def top_heads(scores: dict) -> dict:
    """score name -> (value, layer, head) of the highest-scoring head for each (L, nh) score map."""
    out = {}
    for k, z in scores.items():
        flat = int(z.argmax())
        out[k] = (float(z.flatten()[flat]), flat // z.shape[1], flat % z.shape[1])
    return out


def top_head_parts(attr: dict, k: int = 12) -> list[tuple[str, float]]:
    """The k attention heads ("L{i}.attn.h{h}" parts) with the largest |direct contribution|, largest first."""
    heads = [(p, float(v)) for p, v in attr.items() if ".attn.h" in p]
    return sorted(heads, key=lambda kv: -abs(kv[1]))[:k]


def edited_layer(name: str, L: int) -> int | None:
    """The layer whose input an edit of trace name `name` cannot reach back to: k for "layers.{k}.*", L for the
    final norm and the logits (the whole stream is before them), None for the embedding or an unknown name."""
    parts = name.split(".")
    if len(parts) > 2 and parts[0] == "layers" and parts[1].isdigit():
        return int(parts[1])
    return L if name in ("final_norm.out", "logits") else None


def ablation_reach(model, trace, b: int, layer: int, position: int) -> dict:
    """How far one edit reaches: row b rerun twice as a one-row trace, once as is and once with layer `layer`'s
    MLP output zeroed at `position` only. "first_layer": the first layer whose resid_out moved (None if none);
    "changed": the positions whose logits moved (causal attention: exactly position..n-1); "n": the row's tokens.
    Both runs have the same shape, so an untouched position comes out bit for bit the same."""
    ids = row_ids(trace, b)
    capture = ("embed.out", "layers.*.resid_out", "logits")
    base = model.trace_ids([ids], capture=capture)
    edited = model.trace_ids([ids], capture=capture, edits=edits.zero_mlp(model.config, layer, [position]))
    moved = residual_change(base, edited, 0, position)["max"]
    first = first_changed(moved)
    diff = (edited.logits[0].float() - base.logits[0].float()).abs().amax(-1)
    return dict(first_layer=None if first is None else first - 1,
                changed=[s for s in range(len(ids)) if diff[s] > 1e-6],
                n=len(ids), layer=layer, position=position)
