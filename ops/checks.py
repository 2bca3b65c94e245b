"""Each stage's operator against PyTorch's own (or an exact identity), on the trace's own inputs.

A page shows these; it never reruns an operator itself. Every function returns a list of Check.
Tolerances: float32 reductions of different order differ by a few ulps (1e-6 relative); the bounds
below are those the v1 pages used, each far above the spread measured on Intel and AMD CPUs and far
below any real error (a wrong mask or weight moves results by 1e-1 or more).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from . import functional as fn


@dataclass(frozen=True)
class Check:
    label: str            # what is compared, in English ("fn.embedding vs F.embedding")
    max_diff: float       # max |ours - reference| over the compared elements (NaN where both are -inf: 0)
    tol: float
    label_zh: str = ""    # the same in Chinese, when the label is more than code

    @property
    def ok(self) -> bool:
        return self.max_diff <= self.tol

    def text(self, lang: str) -> str:
        label = self.label_zh if lang == "zh" and self.label_zh else self.label
        return f"{label}: max |diff| = {self.max_diff:.3g} " + ("✓" if self.ok else "✗") + f" (tol {self.tol:g})"


def compare(label: str, ours: torch.Tensor, reference: torch.Tensor, tol: float, label_zh: str = "") -> Check:
    diff = (ours.float() - reference.float()).abs()
    d = float(diff.masked_fill(diff.isnan(), 0).max()) if diff.numel() else 0.0    # NaN: both -inf (masked)
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
    return [compare(f"row {b}: tokens.ids in the trace vs encode() again", ours, again, 0.0,
                    f"第 {b} 行：trace 中的 tokens.ids vs 重新 encode()")]


def embedding(model, trace) -> list[Check]:
    ref = F.embedding(trace.token_ids, _w(model, "model.embed_tokens.weight"))
    return [compare("fn.embedding vs F.embedding", trace.embeddings, ref, 0.0)]


NORMS = {  # which -> (input of layer i, output name, weight name)
    "attn_norm": (lambda tr, i: tr.layer_input(i), "layers.{i}.attn_norm.out", "model.layers.{i}.input_layernorm.weight"),
    "mlp_norm": (lambda tr, i: tr.layer(i, "resid_mid"), "layers.{i}.mlp_norm.out",
                 "model.layers.{i}.post_attention_layernorm.weight"),
    "final": (lambda tr, i: tr.layer(tr.config.num_hidden_layers - 1, "resid_out"), "final_norm.out", "model.norm.weight"),
}


def norm_io(model, trace, which: str, i: int):
    """(x, y, gamma, x name, y name) of one RMSNorm: which in NORMS, i the layer (ignored for "final")."""
    get_x, y_name, w_name = NORMS[which]
    y_name, w_name = y_name.format(i=i), w_name.format(i=i)
    x_name = ("embed.out" if i == 0 else f"layers.{i - 1}.resid_out") if which == "attn_norm" else (
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
    return [compare(f"fn.lm_head vs torch.matmul(h, Wᵀ) (position {s})", logits, torch.matmul(h, w.T), 1e-4),
            compare(f"fn.lm_head vs F.linear(h, W) (position {s})", logits, F.linear(h, w), 1e-4)]


def sampling(stages: dict, logits: torch.Tensor) -> list[Check]:
    """stages: ops.sampling.sample_stages of `logits` (the trace's last-position row)."""
    return [compare("sample_stages probs vs torch.softmax(top_p stage)", stages["probs"],
                    torch.softmax(stages["top_p"], -1), 1e-6),
            compare("raw logits vs trace.logits[b, -1]", stages["logits"], logits, 0.0,
                    "原始 logits vs trace.logits[b, -1]")]
