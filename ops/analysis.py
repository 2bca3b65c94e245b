"""Small analyses of a trace that the stage pages show (a page never computes on tensors itself).

Each function takes trace tensors (and, where it needs them, the model's weights through model.w) and
returns tensors or numbers; figures are drawn from these in viz/.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from . import edits


def cosine_similarity(rows: torch.Tensor) -> torch.Tensor:
    """(n, H) -> (n, n): the cosine of the angle between every pair of rows."""
    unit = F.normalize(rows.float(), dim=-1)
    return unit @ unit.T


def gathered_rows(trace, b: int) -> list[dict]:
    """Row b's gather: for each real position, its id and the first numbers of the row W_E[id] it took."""
    n = trace.lengths[b]
    ids = trace.token_ids[b, :n].tolist()
    first = trace.embeddings[b, :n, :4].tolist()
    return [dict(position=s, id=ids[s], first=first[s]) for s in range(n)]


# ---- tokenize ----------------------------------------------------------------------------------------
def first_pretoken(tokenizer, text: str) -> tuple[str, int]:
    """(the first pre-token of text as readable text, how many pre-tokens text splits into)."""
    from .tokenizer import raw_to_bytes, readable
    pre = tokenizer.pre_tokenize(text)
    return (readable(raw_to_bytes(pre[0]))[0] if pre else ""), len(pre)


def bpe_steps(tokenizer, word: str) -> list[dict]:
    """The BPE merges of one pre-token, step by step: each step's parts (piece_info-like dicts: id, piece,
    raw, bytes, partial), their ids, and the pair merged to reach it: (left, right, rank), None at step 0."""
    from .tokenizer import raw_to_bytes, readable
    steps = tokenizer.bpe_merges(word)
    text = lambda raw: readable(raw_to_bytes(raw))[0]
    out = []
    for k, parts in enumerate(steps):
        ids = [tokenizer.backend.token_to_id(p) for p in parts]
        infos = [dict(id=i if i is not None else "–", piece=text(p), raw=p, bytes=raw_to_bytes(p),
                      partial=readable(raw_to_bytes(p))[1]) for p, i in zip(parts, ids)]
        merged = None
        if k:
            prev = steps[k - 1]
            new = [p for p in parts if p not in prev]
            pair = next(((a, b) for a, b in zip(prev, prev[1:]) if a + b in new), None)
            if pair:
                merged = (text(pair[0]), text(pair[1]), tokenizer.merge_rank(*pair))
        out.append(dict(parts=infos, ids=ids, merged=merged))
    return out


# ---- rmsnorm -----------------------------------------------------------------------------------------
def rmsnorm_steps(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> dict:
    """One token's RMSNorm step by step. x, gamma (H,) -> x, x², mean(x²), rsqrt, x·rsqrt, y, RMS."""
    v = x.float()
    sq = v * v
    mean = sq.mean()
    inv = torch.rsqrt(mean + eps)
    normed = v * inv
    return dict(x=v, sq=sq, mean=float(mean), inv=float(inv), normed=normed, y=gamma.float() * normed,
                rms=float(mean.sqrt()))


def token_rms(rows: torch.Tensor) -> torch.Tensor:
    """(n, H) -> (n,): the root mean square of every row."""
    return rows.float().pow(2).mean(-1).sqrt()


def layer_norm_contrast(x: torch.Tensor, gamma: torch.Tensor, eps: float) -> dict:
    """LayerNorm (β = 0) of the same token with the same γ, beside RMSNorm: mean μ, std σ, both outputs."""
    v = x.float()
    ln = F.layer_norm(v, v.shape[-1:], weight=gamma.float(), bias=None, eps=eps)
    rms = rmsnorm_steps(v, gamma, eps)["y"]
    return dict(mean=float(v.mean()), std=float(v.var(unbiased=False).sqrt()), layer_norm=ln, rms_norm=rms,
                max_diff=float((ln - rms).abs().max()))


# ---- attention ---------------------------------------------------------------------------------------
def attention_head(trace, i: int, b: int, h: int) -> dict:
    """One head's S x S maps for row b: raw scores q·kᵀ/√hd before the mask, the additive mask, where it
    allows (1) or blocks (0), and the probabilities with masked cells NaN (drawn blank)."""
    from . import functional as fn
    q, k = trace.layer(i, "attn.q_rope"), trace.layer(i, "attn.k_rope")
    k_full = fn.repeat_kv(k, q.shape[1] // k.shape[1])
    raw = (q[b, h].float() @ k_full[b, h].float().T) / q.shape[-1] ** 0.5                  # (S, S)
    S = trace.S
    mask = fn.attention_mask(trace.attention_mask[b:b + 1], torch.arange(S)[None], torch.arange(S)[None])[0, 0]
    allowed = torch.isfinite(mask)
    probs = trace.attention_probs(i)[b, h].float().masked_fill(~allowed, float("nan"))
    return dict(raw=raw, mask=mask, allowed=allowed, probs=probs)


def rope_pair(trace, i: int, b: int, h: int, j: int, theta: float) -> dict:
    """q's dimension pair (j, j + hd/2) of head h, row b's real positions, before and after RoPE: the
    (n, 2) points, the angle θ_j·p RoPE turns each by, and the angle measured between them (degrees)."""
    n = trace.lengths[b]
    q, q_rope = trace.layer(i, "attn.q"), trace.layer(i, "attn.q_rope")
    hd = q.shape[-1]
    half = hd // 2
    inv_freq = theta ** (-2 * j / hd)
    angles = torch.arange(n, dtype=torch.float64) * inv_freq
    before = torch.stack([q[b, h, :n, j], q[b, h, :n, j + half]], -1).float()
    after = torch.stack([q_rope[b, h, :n, j], q_rope[b, h, :n, j + half]], -1).float()
    measured = torch.atan2(after[:, 1], after[:, 0]) - torch.atan2(before[:, 1], before[:, 0])
    return dict(inv_freq=inv_freq, angles=angles, before=before, after=after,
                angle_deg=torch.rad2deg(angles) % 360, measured_deg=torch.rad2deg(measured.double()) % 360,
                len_before=before.norm(dim=-1), len_after=after.norm(dim=-1))


# ---- residual ----------------------------------------------------------------------------------------
def stream_norms(trace, b: int) -> torch.Tensor:
    """(L + 1, n): ‖x‖₂ of every real token of row b in the residual stream (embedding, then each layer)."""
    n = trace.lengths[b]
    return torch.stack([x[b, :n].float().norm(dim=-1) for x in trace.residual_stream()])


def norm_summary(norms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(L + 1, n) -> the median and the 90th percentile over tokens, per layer."""
    return norms.median(dim=1).values, norms.quantile(0.9, dim=1)


def update_ratios(trace, b: int) -> tuple[list[int], torch.Tensor]:
    """How big each sub-layer's addition is against the stream it is added to, for row b's real tokens:
    (layers recorded, (2, L, n): [‖attn.out‖ / ‖layer input‖, ‖mlp.out‖ / ‖resid_mid‖])."""
    n = trace.lengths[b]
    ok = [k for k in range(trace.config.num_hidden_layers)
          if all(f"layers.{k}.{p}" in trace for p in ("attn.out", "mlp.out", "resid_mid", "resid_out"))]
    norm = lambda x: x[b, :n].float().norm(dim=-1)
    if not ok:
        return ok, torch.empty(2, 0, n)
    attn = torch.stack([norm(trace.layer(k, "attn.out")) / norm(trace.layer_input(k)) for k in ok])
    mlp = torch.stack([norm(trace.layer(k, "mlp.out")) / norm(trace.layer(k, "resid_mid")) for k in ok])
    return ok, torch.stack([attn, mlp])


def layer_adds(trace, i: int, b: int, s: int, dims: int = 64) -> torch.Tensor:
    """(5, dims): token s's first dims numbers of x, attn.out, resid_mid, mlp.out, resid_out at layer i."""
    parts = [trace.layer_input(i)] + [trace.layer(i, p) for p in ("attn.out", "resid_mid", "mlp.out", "resid_out")]
    return torch.stack([x[b, s, :dims] for x in parts]).float()


def residual_worst(trace, layers: list[int]) -> float:
    """max |resid_out − resid_mid − mlp.out| over the given layers (0 for a plain sum)."""
    return max((float((trace.layer(k, "resid_out") - trace.layer(k, "resid_mid") - trace.layer(k, "mlp.out"))
                      .abs().max()) for k in layers), default=0.0)


# ---- MLP / MoE, LM head, sampling (pages 6-8) ---------------------------------------------------------
def mlp_token(trace, i: int, b: int, s: int, thr: float, k: int = 20) -> dict:
    """Token s of row b in layer i's SwiGLU: its vectors (x [H], gate/up/act [I], out [H]), the share of
    near-zero activations (|act| < thr) of every real token (n,), and its k most active neurons."""
    n = trace.lengths[b]
    x, gate, up, act, out = (trace.layer(i, p)[b, s].float() for p in ("mlp_norm.out", "mlp.gate", "mlp.up",
                                                                       "mlp.act", "mlp.out"))
    top = act.abs().topk(min(k, act.numel()))
    return dict(x=x, gate=gate, up=up, act=act, out=out,
                sparsity=(trace.layer(i, "mlp.act")[b, :n].float().abs() < thr).float().mean(-1),
                gate_off=float((gate < 0).float().mean()), max_act=float(act.abs().max()),
                top_idx=top.indices, top_act=act[top.indices])


def moe_reference_rows(names=("Qwen1.5-MoE-A2.7B", "Qwen2-57B-A14B", "Qwen3-30B-A3B", "Qwen2.5-32B-Instruct")):
    """Facts of reference models (ops/costs.py configs): experts, top-k, widths, params; None where dense."""
    from . import costs
    refs = costs.reference_configs()
    rows = []
    for name in (n for n in names if n in refs):
        r = refs[name]
        moe = r.is_moe
        rows.append(dict(model=name, experts=r.num_experts if moe else None, top_k=r.num_experts_per_tok if moe else None,
                         width=r.moe_intermediate_size if moe else r.intermediate_size,
                         shared=(r.shared_expert_intermediate_size or 0) if moe else None,
                         norm_topk_prob=r.norm_topk_prob if moe else None,
                         total=costs.human(costs.total_params(r)), active=costs.human(costs.active_params(r))))
    return rows


def expert_load(topk_idx: torch.Tensor, E: int) -> torch.Tensor:
    """(n, k) chosen experts -> (E,) how many tokens each expert received."""
    return torch.bincount(topk_idx.reshape(-1), minlength=E).float()


def next_token_top(trace, b: int, s: int, k: int) -> dict:
    """The k most likely next tokens after position s of row b: ids, probabilities and raw logits."""
    logits = trace.logits[b, s].float()
    probs = torch.softmax(logits, -1)
    top = probs.topk(k)
    return dict(ids=top.indices, probs=top.values, logits=logits[top.indices])


def sampling_view(trace, b: int, params, N: int) -> dict:
    """Every sampling stage at row b's last position (ops.sampling.sample_stages, seeded), the N candidates
    with the highest raw logit, and how many tokens top-k/top-p/min-p left at -inf."""
    from . import sampling as smp
    n = trace.lengths[b]
    logits = trace.logits[b, n - 1].float()                                 # (V,)
    stages = smp.sample_stages(logits, trace.token_ids[b, :n].tolist(), params, smp.make_generator(params.seed))
    return dict(logits=logits, stages=stages, cand=torch.topk(stages["logits"], N).indices,
                n_inf=int((~torch.isfinite(stages["min_p"])).sum()))


def draw_frequencies(probs: torch.Tensor, draws: int, seed: int, greedy_pick: int | None = None):
    """(freq (V,), gap): the share of `draws` seeded draws from probs that landed on each token (greedy: all
    on greedy_pick), and the largest |freq - probs|."""
    from .sampling import make_generator
    if greedy_pick is not None:
        counts = torch.zeros_like(probs)
        counts[greedy_pick] = draws
    else:
        picks = torch.multinomial(probs, draws, replacement=True, generator=make_generator(seed))
        counts = torch.bincount(picks, minlength=probs.shape[-1]).float()
    freq = counts / draws
    return freq, float((freq - probs).abs().max())


# ---- overview and classroom tour ----------------------------------------------------------------------
def contract_check(trace) -> dict:
    """The trace's recorded shapes against the trace contract (ops/trace.py) for its own config, B and S:
    checked (names both hold), recorded (names the trace holds), wrong [(name, recorded, contract)]."""
    from .trace import contract_shapes
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
    """A decoding so far (ops.decode.Decoder): per step the time (ms) and the KV cache's bytes, the prefill and
    mean decode time, and the KV bytes one token adds in the cache's dtype (ops.costs.kv_bytes_per_token)."""
    from . import costs
    ms = torch.tensor([1000 * s.seconds for s in decoder.steps])
    kv = torch.tensor([float(s.kv_bytes) for s in decoder.steps])
    per_token = costs.kv_bytes_per_token(decoder.model.config, getattr(torch, decoder.compute_dtype).itemsize)
    return dict(ms=ms, kv_bytes=kv, kv_per_token=per_token, prefill_ms=float(ms[0]) if len(ms) else None,
                decode_ms=float(ms[1:].mean()) if len(ms) > 1 else None)


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
    from . import costs
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
    return dict(first_layer=None if first is None else first - 1, changed=[s for s in range(len(ids)) if diff[s] > 1e-6],
                n=len(ids), layer=layer, position=position)
