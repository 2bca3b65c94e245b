"""What the stage pages show beyond the trace's own tensors (tokenize to sampling): small analyses of trace tensors
(and, where they need them, the model's weights through model.w), returned as tensors or numbers; a page never
computes on tensors itself, and viz/ draws from these."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


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
    from ..models.tokenizer import raw_to_bytes, readable
    pre = tokenizer.pre_tokenize(text)
    return (readable(raw_to_bytes(pre[0]))[0] if pre else ""), len(pre)


def bpe_steps(tokenizer, word: str) -> list[dict]:
    """The BPE merges of one pre-token, step by step: each step's parts (piece_info-like dicts: id, piece,
    raw, bytes, partial), their ids, and the pair merged to reach it: (left, right, rank), None at step 0."""
    from ..models.tokenizer import raw_to_bytes, readable
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
    from ..engine import functional as fn
    q, k = trace.layer(i, "attn.q_rope"), trace.layer(i, "attn.k_rope")
    k_full = fn.repeat_kv(k, q.shape[1] // k.shape[1])
    raw = (q[b, h].float() @ k_full[b, h].float().T) / q.shape[-1] ** 0.5                  # (S, S)
    S = trace.S
    mask = fn.attention_mask(trace.attention_mask[b:b + 1], torch.arange(S)[None], torch.arange(S)[None])[0, 0]
    allowed = torch.isfinite(mask)
    probs = trace.attention_probs(i)[b, h].float().masked_fill(~allowed, float("nan"))
    return dict(raw=raw, mask=mask, allowed=allowed, probs=probs)


def rope_frequencies(trace) -> dict:
    """Per dimension pair j: RoPE's unscaled frequency θ^(-2j/hd) and the one the pass rotated by (after the
    config's scaling: ops/engine/rope.py), as the trace recorded them; their wavelengths (tokens per full turn), the
    ratio used / unscaled, how many pairs the scaling changed, and the factor on cos and sin."""
    from ..engine import rope
    c = trace.config
    base = trace["rope.inv_freq_base"] if "rope.inv_freq_base" in trace else rope.base_inv_freq(c)
    used = trace["rope.inv_freq"] if "rope.inv_freq" in trace else rope.frequencies(c, trace.S)[0]
    base, used = base.double(), used.double()
    return dict(pairs=torch.arange(len(base)), base=base, used=used, wave_base=2 * math.pi / base,
                wave_used=2 * math.pi / used, ratio=used / base, rope_type=c.rope_type,
                changed=int((~torch.isclose(used, base, rtol=1e-6)).sum()), scale=rope.attention_factor(c))


def rope_pair(trace, i: int, b: int, h: int, j: int) -> dict:
    """q's dimension pair (j, j + hd/2) of head h, row b's real positions, before and after RoPE: the
    (n, 2) points, the angle θ_j·p RoPE turns each by (θ_j the frequency the pass used, scaled as the config
    says; inv_freq_base the unscaled one), and the angle measured between them (degrees)."""
    n = trace.lengths[b]
    q, q_rope = trace.layer(i, "attn.q"), trace.layer(i, "attn.q_rope")
    hd = q.shape[-1]
    half = hd // 2
    fq = rope_frequencies(trace)
    inv_freq = float(fq["used"][j])
    angles = torch.arange(n, dtype=torch.float64) * inv_freq
    before = torch.stack([q[b, h, :n, j], q[b, h, :n, j + half]], -1).float()
    after = torch.stack([q_rope[b, h, :n, j], q_rope[b, h, :n, j + half]], -1).float()
    measured = torch.atan2(after[:, 1], after[:, 0]) - torch.atan2(before[:, 1], before[:, 0])
    return dict(inv_freq=inv_freq, inv_freq_base=float(fq["base"][j]), angles=angles, before=before, after=after,
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
    """Facts of reference models (ops/arith/costs.py configs): experts, top-k, widths, params; None where dense."""
    from ..arith import costs
    refs = costs.reference_configs()
    rows = []
    for name in (n for n in names if n in refs):
        r = refs[name]
        moe = r.is_moe
        rows.append(dict(model=name, experts=r.num_experts if moe else None,
                         top_k=r.num_experts_per_tok if moe else None,
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
    """Every sampling stage at row b's last position (ops.engine.sampling.sample_stages, seeded), the N candidates
    with the highest raw logit (the drawn token in the last place when the draw fell outside them: the chart's red
    bar is always there), and how many tokens top-k/top-p/min-p left at -inf."""
    from ..engine import sampling as smp
    n = trace.lengths[b]
    logits = trace.logits[b, n - 1].float()                                 # (V,)
    stages = smp.sample_stages(logits, trace.token_ids[b, :n].tolist(), params, smp.make_generator(params.seed))
    cand = torch.topk(stages["logits"], N).indices
    if int(stages["chosen"]) not in cand.tolist():
        cand[-1] = int(stages["chosen"])
    return dict(logits=logits, stages=stages, cand=cand, n_inf=int((~torch.isfinite(stages["min_p"])).sum()))


def draw_frequencies(probs: torch.Tensor, draws: int, seed: int, greedy_pick: int | None = None):
    """(freq (V,), gap): the share of `draws` seeded draws from probs that landed on each token (greedy: all
    on greedy_pick), and the largest |freq - probs|."""
    from ..engine.sampling import make_generator
    if greedy_pick is not None:
        counts = torch.zeros_like(probs)
        counts[greedy_pick] = draws
    else:
        picks = torch.multinomial(probs, draws, replacement=True, generator=make_generator(seed))
        counts = torch.bincount(picks, minlength=probs.shape[-1]).float()
    freq = counts / draws
    return freq, float((freq - probs).abs().max())
