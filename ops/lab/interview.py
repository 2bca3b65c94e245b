"""The inference-interview demos, run on the loaded model: each returns plain figures a page can show.

chunked prefill       the prompt C tokens per pass through the KV cache vs one pass (logits, tokens, step time)
split-KV decode       one query's attention over the cache in K splits merged by log-sum-exp (FlashDecoding)
batch invariance      one prompt alone vs padded into a batch: where the numbers first differ, where texts part
KV-bound decode       a decode step's bytes, weights + B * context * KV bytes per token, from a config
outliers              per-channel max |activation| and what one int8 scale per tensor does to the rest
Prompt-lookup drafts live in ops/engine/speculate.py, min-p in ops/engine/sampling.py.
"""
from __future__ import annotations

import math
import time

import torch

from ..arith.costs import kv_bytes_per_token, weight_bytes
from ..engine import functional as fn
from ..engine.config import ModelConfig
from ..engine.decode import PATHS, Decoder, KVCache
from ..engine.sampling import SamplingParams
from ..engine.trace import UNBATCHED
from ..errors import InputError
from .checks import Check


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over positions finite in both (masked scores are -inf in both: no difference there);
    inf where one side is finite and the other is not."""
    a, b = a.double(), b.double()
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if not torch.equal(fa, fb):
        return math.inf
    return float((a - b)[fa].abs().max()) if bool(fa.any()) else 0.0


# ---- 1. chunked prefill ------------------------------------------------------------------------------
@torch.inference_mode()
def prefill_chunked(model, prompt_ids: list[int], chunk: int | None, path: str = "eager") -> dict:
    """The prompt through a fresh cache `chunk` tokens per pass (None: one pass): the last position's logits
    (V,), tokens per pass and each pass's seconds."""
    dec = Decoder(model, "", prompt_ids, 1, SamplingParams(), path, prefill_chunk=chunk)
    ids, C = torch.tensor([prompt_ids]), dec.prefill_chunk
    sizes, seconds = [], []
    for a in range(0, len(prompt_ids), C):
        t0 = time.perf_counter()
        logits = dec.forward(ids[:, a:a + C])[0, -1]
        seconds.append(time.perf_counter() - t0)
        sizes.append(ids[:, a:a + C].shape[1])
    return dict(logits=logits.float(), sizes=sizes, seconds=seconds)


def prefill_trade(model, prompt: str, chunks=(None, 64, 16, 4), chat: bool = False, new_tokens: int = 8,
                  path: str = "eager") -> list[dict]:
    """Per chunk size: passes, max tokens per pass, the longest and total pass time, the first-token logits'
    max |diff| from the one-pass prefill, and whether greedy's next new_tokens tokens are the same."""
    _, _, rows = model.encode_prompts(prompt, chat)
    ids = rows[0]
    one = prefill_chunked(model, ids, None, path)
    fast = path != "eager" and path
    plain = model.generate(prompt, chat=chat, max_new_tokens=new_tokens, stop_at_eos=False, fast=fast).token_ids
    out = []
    for C in chunks:
        r = one if C is None else prefill_chunked(model, ids, C, path)
        toks = plain if C is None else model.generate(prompt, chat=chat, max_new_tokens=new_tokens, stop_at_eos=False,
                                                      fast=fast, prefill_chunk=C).token_ids
        out.append(dict(chunk=C or len(ids), passes=len(r["sizes"]), max_tokens_per_pass=max(r["sizes"]),
                        max_pass_s=max(r["seconds"]), total_s=sum(r["seconds"]),
                        logits_max_diff=_max_diff(r["logits"], one["logits"]), same_tokens=toks == plain,
                        prompt_tokens=len(ids)))
    return out


# ---- 2. split-KV decode (FlashDecoding) ----------------------------------------------------------------
def split_kv_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, splits: int) -> dict:
    """One query per row against T cached keys, the keys cut into `splits` blocks, each block's partial
    softmax kept as (m, l, o): its max score, sum of exp(s - m), and exp(s - m)-weighted sum of values; merged
    with lse_i = m_i + ln l_i: out = sum_i exp(lse_i - LSE) * o_i / l_i, LSE = ln sum_i exp(lse_i).
    q (B, nh, 1, hd), k and v (B, nkv, T, hd) -> context (B, 1, nh*hd) in float32, and the per-split lse."""
    B, nh, _, hd = q.shape
    T = k.shape[2]
    if not 1 <= splits <= T:
        raise InputError(f"splits = {splits}: it must be from 1 to the {T} cached keys")
    n_rep = nh // k.shape[1]
    k, v = fn.repeat_kv(k.float(), n_rep), fn.repeat_kv(v.float(), n_rep)          # (B, nh, T, hd)
    q = q.float() * hd ** -0.5
    bounds = [round(i * T / splits) for i in range(splits + 1)]
    lse, outs = [], []
    for a, b in zip(bounds, bounds[1:]):
        s = q @ k[:, :, a:b].transpose(-1, -2)                        # (B, nh, 1, t)
        m = s.amax(-1, keepdim=True)                                  # (B, nh, 1, 1)
        e = torch.exp(s - m)
        l_ = e.sum(-1, keepdim=True)
        outs.append((e @ v[:, :, a:b]) / l_)                          # (B, nh, 1, hd): this split's own softmax
        lse.append(m + torch.log(l_))
    lse_all = torch.stack(lse)                                        # (K, B, nh, 1, 1)
    w = torch.softmax(lse_all, dim=0)                                 # exp(lse_i - LSE)
    ctx = (w * torch.stack(outs)).sum(0)                              # (B, nh, 1, hd)
    return dict(context=ctx.transpose(1, 2).reshape(B, 1, nh * hd), lse=lse_all[..., 0, 0], bounds=bounds)


def eager_last_query(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The reference: ops/functional.py's eager attention for one query that sees every key (a zero mask)."""
    n_rep = q.shape[1] // k.shape[1]
    mask = torch.zeros(q.shape[0], 1, 1, k.shape[2], dtype=q.dtype)
    probs = fn.softmax(fn.attention_scores(q, fn.repeat_kv(k, n_rep), mask))
    return fn.attention_context(probs, fn.repeat_kv(v, n_rep))         # (B, 1, nh*hd)


def split_kv_from_trace(trace, layer: int, b: int = 0, splits=(1, 2, 4, 8)) -> list[dict]:
    """The last real token of row b in a traced layer: split-KV vs the trace's own eager context."""
    n = trace.lengths[b]
    q = trace.layer(layer, "attn.q_rope")[b:b + 1, :, n - 1:n].float()        # (1, nh, 1, hd)
    k = trace.layer(layer, "attn.k_rope")[b:b + 1, :, :n].float()            # (1, nkv, n, hd)
    v = trace.layer(layer, "attn.v")[b:b + 1, :, :n].float()
    traced = trace.layer(layer, "attn.context")[b:b + 1, n - 1:n].float()    # (1, 1, nh*hd)
    eager = eager_last_query(q, k, v)
    return [dict(splits=K, keys=n, max_diff_vs_trace=_max_diff(split_kv_attention(q, k, v, K)["context"], traced),
                 max_diff_vs_eager=_max_diff(split_kv_attention(q, k, v, K)["context"], eager),
                 eager_vs_trace=_max_diff(eager, traced), scale=float(traced.abs().max()))
            for K in splits if K <= n]


def split_kv_checks(rows: list[dict], layer: int) -> list[Check]:
    """split_kv_from_trace's rows as checks. Tolerance 1e-5 of the context's size: float32 sums merged in another
    order (measured a few 1e-7 relative on the bundled model and on random tensors)."""
    return [Check(f"split-KV (K = {r['splits']}) vs layers.{layer}.attn.context", r["max_diff_vs_trace"],
                  1e-5 * max(1.0, r["scale"]), f"分块 KV（K = {r['splits']}）vs layers.{layer}.attn.context")
            for r in rows]


# ---- 3. batch invariance -------------------------------------------------------------------------------
def compare_rows(alone, batch, b: int = 0) -> list[dict]:
    """Name by name, row 0 of a one-row trace against row b of a batch trace (cut to the row's own
    positions): max |diff|, in pipeline order."""
    out = []
    for name in alone.names():
        if name not in batch or name in UNBATCHED:        # RoPE's frequencies are one per pass, not per row
            continue
        a = alone[name][0]
        t = batch[name][b]
        t = t[tuple(slice(0, d) for d in a.shape)]                         # the row's own positions and keys
        out.append(dict(name=name, max_diff=_max_diff(a, t), scale=float(a.float().abs().max())))
    return out


@torch.inference_mode()
def greedy_rows(model, rows: list[list[int]], new_tokens: int, path: str = "eager") -> list[list[int]]:
    """Greedy decoding of right-padded rows together, a step for all rows at once, as a server batches them."""
    weights, attention = PATHS[path]
    B, S = len(rows), max(len(r) for r in rows)
    ids = torch.full((B, S), model.pad_id(), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = torch.tensor(r)
    lengths = torch.tensor([len(r) for r in rows])
    valid = torch.arange(S)[None] < lengths[:, None]                   # (B, S)
    cache = KVCache(model.config, B, S + new_tokens, model.cache_devices, model.weight_set(weights).dtype)
    run = dict(cache=cache, weights=weights, attention=attention)
    logits = model.forward(ids, torch.arange(S)[None].expand(B, S), valid, **run)          # (B, S, V)
    nxt = logits[torch.arange(B), lengths - 1].float().argmax(-1)                           # (B,)
    out = [[int(t)] for t in nxt]
    for step in range(new_tokens - 1):
        valid = torch.cat([valid, torch.ones(B, 1, dtype=torch.bool)], 1)
        logits = model.forward(nxt[:, None], (lengths + step)[:, None], valid, **run)
        nxt = logits[:, -1].float().argmax(-1)
        for i in range(B):
            out[i].append(int(nxt[i]))
    return out


def batch_invariance(model, prompt: str, other: str, chat: bool = False, new_tokens: int = 64,
                     path: str = "eager") -> dict:
    """`prompt` alone vs in a batch with the longer `other` (it is right-padded): per-operator max |diff| of
    its row, the first operator that differs, the last-position logits' max |diff|, and the first generated
    token where the two greedy texts part (None: not within new_tokens)."""
    _, _, rows = model.encode_prompts([prompt, other], chat)
    if len(rows[1]) <= len(rows[0]):
        raise InputError("the other prompt must be longer than the one under test, so that it is padded")
    alone = model.trace_ids(rows[:1], recompute=False)
    batch = model.trace_ids(rows, recompute=False)
    ops = compare_rows(alone, batch)
    first = next((r for r in ops if r["max_diff"] > 0), None)
    n = len(rows[0])
    last = _max_diff(alone.logits[0, n - 1], batch.logits[0, n - 1])
    solo = greedy_rows(model, rows[:1], new_tokens, path)[0]
    together = greedy_rows(model, rows, new_tokens, path)[0]
    part = next((i for i, (x, y) in enumerate(zip(solo, together)) if x != y), None)
    tok = model.tokenizer
    text = (lambda t: tok.decode(t, skip_special_tokens=True)) if tok else str
    return dict(operators=ops, first=first, logits_max_diff=last, parts_at=part, solo=solo, batched=together,
                solo_text=text(solo), batched_text=text(together), prompt_tokens=n, padded_to=len(rows[1]))


# ---- 4. prompt-lookup drafts (ops/engine/speculate.py), plain greedy beside them -------------------------------
def lookup_runs(model, prompts: dict, new_tokens: int = 32) -> dict:
    """label -> (plain greedy Generation, prompt-lookup Generation) of each prompt (no chat template)."""
    return {label: tuple(model.generate(p, chat=False, max_new_tokens=new_tokens, stop_at_eos=False, draft=d)
                         for d in (None, "prompt-lookup")) for label, p in prompts.items()}


# ---- 5. KV-bound decode ------------------------------------------------------------------------------
def kv_bound(c: ModelConfig, batches=(1, 8, 32, 128), contexts=(1024, 4096, 16384, 32768), bits=16,
             kv_dtype_bytes: int = 2) -> dict:
    """One decode step reads every weight once (shared by the batch) and every sequence's own KV cache:
    bytes = weights + B * context * KV bytes per token. KV reads pass weight reads at B * context =
    weights / KV bytes per token cached tokens, whatever the split between B and context."""
    W, per = weight_bytes(c, bits), kv_bytes_per_token(c, kv_dtype_bytes)
    rows = [dict(B=B, context=S, weight_bytes=W, kv_bytes=B * S * per, step_bytes=W + B * S * per,
                 kv_share=B * S * per / (W + B * S * per)) for B in batches for S in contexts]
    return dict(weight_bytes=W, kv_bytes_per_token=per, crossover_tokens=W / per,
                crossover_context={B: W / (B * per) for B in batches}, rows=rows)


# ---- 7. outliers and int8 activations -------------------------------------------------------------------
def outliers(trace, layer: int, name: str = "resid_out", b: int = 0, top: int = 4, salient: float = 0.01) -> dict:
    """Row b's activations at layers.{layer}.{name} (N tokens, C channels): the channels with the largest max
    |x| and what one int8 scale for the whole tensor (step = max|x| / 127) does to the typical value: the step
    over the median |x|, the share of entries that round to 0, and the mean relative error; against one scale
    per channel (what SmoothQuant approximates by moving the scale into the weights). AWQ's salient channels:
    the top `salient` share of channels by mean |x|, and their share of the total |x|."""
    x = trace.layer(layer, name)[b, :trace.lengths[b]].float()           # (N, C)
    a = x.abs()
    per_channel = a.amax(0)                                               # (C,)
    order = torch.argsort(per_channel, descending=True)
    median = float(a.median())

    def int8(step: torch.Tensor) -> dict:
        q = torch.clamp(torch.round(x / step), -127, 127) * step
        nz = a > 0
        return dict(zero_share=float(((q == 0) & nz).float().sum() / nz.sum().clamp(min=1)),
                    mean_rel_error=float(((q - x).abs()[nz] / a[nz]).mean()))

    step = a.max() / 127
    rest = per_channel[order[top:]].max() / 127                           # the same scale without the top channels
    mean_c = a.mean(0)
    n_sal = max(1, round(salient * x.shape[1]))
    return dict(layer=layer, name=name, tokens=x.shape[0], channels=x.shape[1],
                top_channels=order[:top].tolist(), top_max=per_channel[order[:top]].tolist(),
                median_abs=median, max_abs=float(a.max()), ratio_max_median=float(a.max()) / max(median, 1e-30),
                step=float(step), step_over_median=float(step) / max(median, 1e-30),
                per_tensor=int8(step), without_top_step=float(rest),
                per_channel=int8((per_channel / 127).clamp(min=1e-30)),
                salient_channels=n_sal, salient_share=float(mean_c.sort(descending=True).values[:n_sal].sum()
                                                            / mean_c.sum()))


def outlier_figures(trace, b: int = 0, names=("resid_out", "attn_norm.out", "mlp.act")) -> tuple[int, list[dict]]:
    """(the loudest layer of row b's residual stream, outliers() of each of `names` there that the trace holds)."""
    loud = loudest_layer(trace, "resid_out", b)
    return loud, [outliers(trace, loud, n, b) for n in names if f"layers.{loud}.{n}" in trace]


def loudest_layer(trace, name: str = "resid_out", b: int = 0) -> int:
    """The layer whose `name` tensor holds the largest |x| in row b (where the massive activations are)."""
    n = trace.lengths[b]
    return max(range(trace.config.num_hidden_layers),
               key=lambda i: float(trace.layer(i, name)[b, :n].abs().max()))
