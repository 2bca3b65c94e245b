"""Each stage's operator against PyTorch's own (or an exact identity), on the trace's own inputs.

A page shows these; it never reruns an operator itself. Every function returns a list of Check.
Tolerances: float32 reductions of different order differ by a few ulps (1e-6 relative); the bounds
below are those the v1 pages used, each far above the spread measured on Intel and AMD CPUs and far
below any real error (a wrong mask or weight moves results by 1e-1 or more).
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..engine import functional as fn


@dataclass(frozen=True)
class Check:
    label: str            # what is compared, in English ("fn.embedding vs F.embedding")
    max_diff: float       # max |ours - reference| over the compared elements (nan where either side is NaN)
    tol: float
    label_zh: str = ""    # the same in Chinese, when the label is more than code

    @property
    def ok(self) -> bool:
        return self.max_diff <= self.tol       # False for nan: a NaN anywhere is a failure

    def text(self, lang: str) -> str:
        mark = "✓" if self.ok else "✗"
        if lang == "zh":
            return f"{self.label_zh or self.label}：最大 |差| = {self.max_diff:.3g} {mark}（容差 {self.tol:g}）"
        return f"{self.label}: max |diff| = {self.max_diff:.3g} {mark} (tol {self.tol:g})"


def compare(label: str, ours: torch.Tensor, reference: torch.Tensor, tol: float, label_zh: str = "") -> Check:
    """max |ours - reference|; where both sides hold the same infinity (a masked score) the two agree, and any other
    NaN (a NaN on either side, or opposite infinities) makes the difference NaN, so the check fails."""
    a, b = ours.float(), reference.float()
    diff = (a - b).abs()
    same_inf = torch.isinf(a) & (a == b)
    diff = diff.masked_fill(same_inf, 0.0)
    if not diff.numel():
        return Check(label, 0.0, tol, label_zh)
    d = float("nan") if bool(diff.isnan().any()) else float(diff.max())
    return Check(label, d, tol, label_zh)


def _tol(t: torch.Tensor, f32: float, low: float) -> float:
    return f32 if t.dtype == torch.float32 else low


def _w(model, name: str) -> torch.Tensor:
    return model.w(name).float().cpu()


# ---- one function per stage --------------------------------------------------------------------------
def tokenize(tokenizer, trace, b: int) -> list[Check]:
    n = trace.lengths[b]
    again = torch.tensor(tokenizer.encode(trace.texts[b]))
    ours = trace.token_ids[b, :n]
    if len(again) != n:
        return [Check(f"row {b}: tokens.ids vs encode() again (lengths {n} vs {len(again)})", float("inf"), 0.0,
                      f"第 {b} 行：tokens.ids vs 重新 encode()（长度 {n} 与 {len(again)}）")]
    back = tokenizer.decode(ours.tolist())
    nfc = unicodedata.normalize("NFC", trace.texts[b])
    return [compare(f"row {b}: tokens.ids in the trace vs encode() again", ours, again, 0.0,
                    f"第 {b} 行：trace 中的 tokens.ids vs 重新 encode()"),
            Check(f"row {b}: decode(encode(text)) == NFC(text), characters differing", _text_diff(back, nfc), 0.0,
                  f"第 {b} 行：decode(encode(text)) == NFC(text)，不同的字符数")]


def _text_diff(a: str, b: str) -> float:
    """Characters that differ between two strings (a length difference counts too)."""
    return float(sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b)))


def embedding(model, trace) -> list[Check]:
    ref = F.embedding(trace.token_ids, _w(model, "model.embed_tokens.weight"))
    return [compare("fn.embedding vs F.embedding", trace.embeddings, ref, 0.0)]


NORMS = {  # which -> (input of layer i, output name, weight name)
    "attn_norm": (lambda tr, i: tr.layer_input(i), "layers.{i}.attn_norm.out",
                  "model.layers.{i}.input_layernorm.weight"),
    "mlp_norm": (lambda tr, i: tr.layer(i, "resid_mid"), "layers.{i}.mlp_norm.out",
                 "model.layers.{i}.post_attention_layernorm.weight"),
    "final": (lambda tr, i: tr.layer(tr.config.num_hidden_layers - 1, "resid_out"), "final_norm.out",
              "model.norm.weight"),
}


def norm_io(model, trace, which: str, i: int):
    """(x, y, gamma, x name, y name) of one RMSNorm: which in NORMS, i the layer (ignored for "final")."""
    get_x, y_name, w_name = NORMS[which]
    y_name, w_name = y_name.format(i=i), w_name.format(i=i)
    x_name = trace.layer_input_name(i) if which == "attn_norm" else (
        f"layers.{i}.resid_mid" if which == "mlp_norm" else f"layers.{trace.config.num_hidden_layers - 1}.resid_out")
    return get_x(trace, i), trace[y_name], _w(model, w_name), x_name, y_name


def rmsnorm(model, trace, which: str, i: int) -> list[Check]:
    x, y, gamma, _, y_name = norm_io(model, trace, which, i)
    ref = F.rms_norm(x.float(), (x.shape[-1],), weight=gamma, eps=model.config.rms_norm_eps)
    return [compare(f"fn.rms_norm vs F.rms_norm ({y_name})", y, ref, _tol(y, 1e-5, 2e-2))]


def attention(model, trace, i: int, b: int, h: int) -> list[Check]:
    c = model.config
    n = trace.lengths[b]
    q, k, v = (trace.layer(i, p)[b:b + 1, :, :n].float() for p in ("attn.q_rope", "attn.k_rope", "attn.v"))
    k, v = fn.repeat_kv(k, c.n_rep), fn.repeat_kv(v, c.n_rep)
    sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=True)                   # (1, nh, n, hd)
    sdpa = sdpa.transpose(1, 2).reshape(1, n, -1)
    ctx = trace.layer(i, "attn.context")
    out = [compare(f"context (row {b}'s {n} real tokens) vs F.scaled_dot_product_attention",
                   ctx[b:b + 1, :n], sdpa, _tol(ctx, 1e-4, 3e-2),
                   f"context（第 {b} 行的 {n} 个真实 token）vs F.scaled_dot_product_attention")]
    if f"layers.{i}.attn.scores" in trace:
        probs = trace.attention_probs(i)
        out.append(compare(f"attn.probs[{b}, {h}] vs torch.softmax(attn.scores[{b}, {h}])", probs[b, h],
                           torch.softmax(trace.attention_scores(i)[b, h].float(), dim=-1), _tol(probs, 1e-6, 1e-2)))
    return out


def residual(trace, i: int) -> list[Check]:
    mid, out = trace.layer(i, "resid_mid"), trace.layer(i, "resid_out")
    return [compare(f"layers.{i}.resid_mid == layer_input({i}) + attn.out", mid,
                    trace.layer_input(i) + trace.layer(i, "attn.out"), 0.0),
            compare(f"layers.{i}.resid_out == resid_mid + mlp.out", out, mid + trace.layer(i, "mlp.out"), 0.0)]


def mlp(model, trace, i: int, b: int, s: int) -> list[Check]:
    """Token s only: three matrix-vector products against the whole [S, I] would cost seconds at S = 512."""
    p = f"model.layers.{i}.mlp."
    x = trace.layer(i, "mlp_norm.out")[b, s].float()
    wg, wu, wd = (_w(model, p + f"{m}_proj.weight") for m in ("gate", "up", "down"))
    ref_act = F.silu(x @ wg.T) * (x @ wu.T)
    return [compare(f"fn.swiglu act vs F.silu(x W_gateᵀ) · (x W_upᵀ) (token {s})", trace.layer(i, "mlp.act")[b, s],
                    ref_act, 1e-4, f"fn.swiglu 的 act vs F.silu(x W_gateᵀ) · (x W_upᵀ)（token {s}）"),
            compare(f"fn.swiglu output mlp.out vs F.linear(act, W_down) (token {s})", trace.layer(i, "mlp.out")[b, s],
                    F.linear(ref_act, wd), 1e-4, f"fn.swiglu 的输出 mlp.out vs F.linear(act, W_down)（token {s}）")]


def lm_head(model, trace, b: int, s: int) -> list[Check]:
    w = _w(model, "lm_head.weight")
    h = trace.final_hidden()[b, s].float()                                    # position s: one V-wide product
    logits = trace.logits[b, s]
    return [compare(f"fn.lm_head vs torch.matmul(h, Wᵀ) (position {s})", logits, torch.matmul(h, w.T), 1e-4,
                    f"fn.lm_head vs torch.matmul(h, Wᵀ)（位置 {s}）"),
            compare(f"fn.lm_head vs F.linear(h, W) (position {s})", logits, F.linear(h, w), 1e-4,
                    f"fn.lm_head vs F.linear(h, W)（位置 {s}）")]


def sampling(stages: dict, logits: torch.Tensor, greedy: bool = False) -> list[Check]:
    """stages: ops.engine.sampling.sample_stages of `logits` (the trace's last-position row). Greedy (the stages
    passed the penalized logits on and the pick is torch.argmax's): probs is one-hot on that argmax."""
    if greedy:
        ref = F.one_hot(torch.argmax(stages["penalized"]), stages["probs"].shape[-1]).float()
        first = compare("sample_stages probs (T = 0) vs F.one_hot(torch.argmax(penalized))", stages["probs"], ref, 0.0,
                        "sample_stages 概率（T = 0）vs F.one_hot(torch.argmax(惩罚后))")
    else:
        first = compare("sample_stages probs vs torch.softmax(min_p stage)", stages["probs"],
                        torch.softmax(stages["min_p"], -1), 1e-6)
    return [first,
            compare("raw logits vs trace.logits[b, -1]", stages["logits"], logits, 0.0,
                    "原始 logits vs trace.logits[b, -1]")]


def logit_lens(model, trace, b: int) -> list[Check]:
    """The lens's last row (final layer -> final norm -> LM head) against the trace's own logits."""
    from .lm_head_lens import lens_start, logit_lens as lens
    ids, probs = lens(model, trace, b)
    ref = torch.softmax(trace.logits[b, lens_start(trace, b):trace.lengths[b]].float(), -1).max(-1)
    return [compare("last layer's lens == trace logits (top probability)", probs[-1], ref.values, 1e-4,
                    "最后一层的 logit lens == trace 的 logits（第一名概率）"),
            compare("last layer's lens top tokens == the logits' top tokens (ids)", ids[-1], ref.indices, 0.0,
                    "最后一层 logit lens 的第一名 token == logits 的第一名（编号）")]


# ---- experiments (issue 11) ----------------------------------------------------------------------------
def attribution_sum(attr: dict, logit: float) -> list[Check]:
    """Direct logit attribution: its parts add up to the logit (exact with the final norm's scale frozen)."""
    total = sum(float(v) for v in attr.values())                      # in float64: compare() would round to float32
    return [Check(f"sum of the {len(attr)} attribution parts vs the logit", abs(total - float(logit)),
                  1e-4 * max(1.0, abs(float(logit))), f"{len(attr)} 个归因部分之和 vs logit")]


def untouched_before(base, edited, layer: int) -> list[Check]:
    """An edit at layer `layer` leaves every earlier state of the residual stream bitwise unchanged."""
    before = list(zip(base.residual_stream(), edited.residual_stream()))[:layer + 1]
    diff = max((float((x.float() - y.float()).abs().max()) for x, y in before), default=0.0)
    return [Check(f"residual stream before layer {layer}: edited vs original", diff, 0.0,
                  f"第 {layer} 层之前的残差流：编辑后 vs 原来")]


def causal_prefix(ta, tb) -> list[Check]:
    """Two one-row runs that first differ at token p hold bitwise the same residual stream at every
    position before p, in every layer: the causal mask lets no position see a later one."""
    na, nb = ta.lengths[0], tb.lengths[0]
    n = min(na, nb)
    diff_at = (ta.token_ids[0, :n] != tb.token_ids[0, :n]).nonzero().flatten().tolist()
    p = diff_at[0] if diff_at else n
    worst = max((float((x[0, :p].float() - y[0, :p].float()).abs().max()) if p else 0.0)
                for x, y in zip(ta.residual_stream(), tb.residual_stream()))
    return [Check(f"positions 0..{p - 1} (before the first different token) in every layer: A vs B", worst, 1e-5,
                  f"第一个不同 token 之前的位置 0..{p - 1}，所有层：A vs B")] if p else []


def precision_embed(report: dict) -> list[Check]:
    """bfloat16 rounds each weight to 8 significant bits (relative error <= 2^-8), and the embedding is a plain
    lookup of rows: so its relative error against float32 can be at most 2^-8."""
    errs = report.get("resid_rel_err", {})
    if "bfloat16" not in errs:
        return []
    return [Check("bfloat16 embedding: ‖x_bf16 − x_32‖ / ‖x_32‖ (bound 2^-8 = rounding)", float(errs["bfloat16"][0]),
                  2 ** -8,
                  "bfloat16 嵌入：‖x_bf16 − x_32‖ / ‖x_32‖（上界 2^-8，即舍入误差）")]


def atlas_head(atlas: dict, i: int, h: int) -> list[Check]:
    """One head's atlas scores against a plain loop over its attention map on the test sequence (n random
    tokens twice): previous = mean of P[t, t-1], induction = mean over the second copy of P[t, t-n+1]."""
    P = atlas["test_probs"][i, h].double()
    N = P.shape[-1]
    n = N // 2
    prev = sum(float(P[t, t - 1]) for t in range(1, N)) / (N - 1)
    ind = sum(float(P[t, t - n + 1]) for t in range(n, N - 1)) / (n - 1)
    s = atlas["scores"]
    zh = {"previous": "前一个 token", "induction": "归纳头"}
    return [Check(f"L{i} H{h} {k} score: ops.lab.atlas vs a loop over its map", abs(float(s[k][i, h]) - v), 1e-5,
                  f"L{i} H{h} 的“{zh[k]}”得分：ops.lab.atlas vs 对注意力图逐项求和") for k, v in (("previous", prev),
                                                                                     ("induction",
                                                                                                          ind))]
