"""Serving and optimisation, computed: what a production server does with the operators the other pages show.

(a) online softmax (FlashAttention's trick) run on the trace's real scores, and the memory traffic it saves;
(b) the KV cache in a server: requests that fit, paged blocks, continuous batching, prefix caching;
(c) quantisation read from the bundled GGUF file's own blocks, group scales, KV-cache int8 / FP8;
(d) speculative decoding; (e) long context: RoPE wavelengths, YaRN, sliding windows;
(f) MHA / MQA / GQA / MLA; (g) tensor parallelism; (h) prefill vs decode timed on the loaded model.

Conventions are ops/arith/costs.py's: bf16 = 2 bytes, GPU memory in decimal GB (1e9 bytes), published GPU spec
figures from costs.GPUS. Every number is a function of a config, the GGUF file or the loaded model.
"""
from __future__ import annotations

import json
import math
import threading
import time
from functools import lru_cache

import torch

from . import costs
from ..engine import functional as fn
from ..lab.checks import Check, compare
from ..engine.config import ModelConfig
from ..errors import InputError

# ---- (a) online softmax: softmax(s) @ v one block of keys at a time -----------------------------------------


def online_softmax(scores: torch.Tensor, v: torch.Tensor, block: int) -> tuple[torch.Tensor, list[dict]]:
    """softmax(scores) @ v without ever holding a whole row of probabilities (FlashAttention's inner loop).

    Per block of keys j:  m' = max(m, max_j s_j);  alpha = exp(m - m');  p_j = exp(s_j - m')
                          l' = alpha * l + sum_j p_j;  acc' = alpha * acc + sum_j p_j v_j
    and at the end out = acc / l. scores (..., S, T) with -inf where masked, v (..., T, hd), float32 inside.
    Returns out (..., S, hd) and one state per block: start, end, block_max, m, l, alpha (..., S) and
    out = acc / l, the answer so far (..., S, hd).
    """
    if block < 1:
        raise InputError(f"block must be at least 1, got {block}")
    s, v = scores.float(), v.float()
    m = torch.full(s.shape[:-1], float("-inf"))                       # running max     (..., S)
    l = torch.zeros(s.shape[:-1])                                     # running sum     (..., S)
    acc = torch.zeros(*s.shape[:-1], v.shape[-1])                     # running P·V     (..., S, hd)
    states = []
    for start in range(0, s.shape[-1], block):
        sb = s[..., start:start + block]                              # (..., S, b)
        block_max = sb.amax(-1)
        m_new = torch.maximum(m, block_max)
        # a row with every key so far masked keeps m = -inf: subtract 0 there, so exp gives 0 and not NaN
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        alpha = torch.exp(m - shift)                                  # how much the old sum shrinks
        p = torch.exp(sb - shift[..., None])                          # (..., S, b)
        l = alpha * l + p.sum(-1)
        acc = alpha[..., None] * acc + p @ v[..., start:start + block, :]
        m = m_new
        states.append(dict(start=start, end=min(start + block, s.shape[-1]), block_max=block_max, m=m, l=l,
                           alpha=alpha, out=acc / l[..., None]))
    return acc / l[..., None], states


def eager_softmax_v(scores: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """The eager reference: the whole probability matrix, then one matmul (what the trace's attention does)."""
    return fn.softmax(scores.float()) @ v.float()


def _layer_inputs(trace, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Layer i's scores (B, nh, S, S) and its values repeated per query head (B, nh, S, hd)."""
    scores = trace.attention_scores(i)
    v = trace.layer(i, "attn.v")
    return scores, fn.repeat_kv(v, scores.shape[1] // v.shape[1])


def online_softmax_view(trace, i: int, b: int, h: int, s: int, block: int) -> dict:
    """One query row (layer i, batch row b, head h, position s) run block by block, for the page's picture and
    table: the row's scores (T,), and per block its keys, block max, running max, rescale alpha, running sum
    and how far the answer so far is from the final one (relative L2)."""
    scores, v = _layer_inputs(trace, i)
    row = scores[b, h, s:s + 1].float()                               # (1, T)
    out, states = online_softmax(row, v[b, h], block)
    final = out[0]
    rows = [dict(block=k, keys=f"{st['start']}–{st['end'] - 1}", block_max=float(st["block_max"][0]),
                 m=float(st["m"][0]), alpha=float(st["alpha"][0]), l=float(st["l"][0]),
                 dist=float((st["out"][0] - final).norm() / final.norm().clamp_min(1e-30)))
            for k, st in enumerate(states)]
    eager = eager_softmax_v(row, v[b, h])[0]
    return dict(scores=row[0], blocks=[(st["start"], st["end"]) for st in states], rows=rows, out=final,
                max_diff=float((final - eager).abs().max()))


# Measured: on the bundled model, all 24 layers, prompts of 4 and 26 tokens, blocks of 1, 3 and 16 keys, max |online -
# eager| = 3.3e-6 (float32 sums taken in another order); on random N(0, 9) causal scores, 7 and 256 keys: 2.6e-6.
# 3e-5 is ten times the worst; a wrong rescale (alpha) or a dropped block moves results by 1e-2 or more.
ONLINE_TOL = 3e-5


def online_softmax_checks(trace, i: int, block: int) -> list[Check]:
    """Online softmax over every head and row of layer i against the eager probs @ v, and against the trace's
    own attn.context (what the forward pass computed)."""
    scores, v = _layer_inputs(trace, i)
    out, _ = online_softmax(scores, v, block)                         # (B, nh, S, hd)
    B, nh, S, hd = out.shape
    ctx = out.transpose(1, 2).reshape(B, S, nh * hd)
    return [compare(f"layer {i}: online softmax (blocks of {block}) vs softmax(scores) @ v", out,
                    eager_softmax_v(scores, v), ONLINE_TOL, f"第 {i} 层：分块在线 softmax（每块 {block} 个键）vs softmax(scores) @ v"),
            compare(f"layer {i}: online softmax vs the trace's attn.context", ctx, trace.layer(i, "attn.context"),
                    ONLINE_TOL, f"第 {i} 层：分块在线 softmax vs trace 中的 attn.context")]


def parse_scores(text: str) -> list[float]:
    """'2, 1, 3, 0.5' -> [2.0, 1.0, 3.0, 0.5] (commas, spaces or Chinese commas); InputError when unreadable."""
    parts = [p for p in text.replace("，", ",").replace(",", " ").split() if p]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise InputError(f"not a list of numbers: {text!r}") from None
    if not 1 <= len(values) <= 16 or not all(math.isfinite(x) for x in values):
        raise InputError("give 1 to 16 finite numbers")
    return values


def small_example(scores: list[float], block: int) -> list[dict]:
    """The hand-sized example: a handful of scores, v = the identity (so out = the probabilities). One row per
    block: the keys, block max, running max m, alpha, running sum l, and the probabilities known so far."""
    s = torch.tensor([scores], dtype=torch.float32)                   # (1, n)
    _, states = online_softmax(s, torch.eye(len(scores)), block)
    return [dict(block=k, keys=", ".join(f"{x:g}" for x in scores[st["start"]:st["end"]]),
                 block_max=float(st["block_max"][0]), m=float(st["m"][0]), alpha=float(st["alpha"][0]),
                 l=float(st["l"][0]), probs=[float(p) for p in st["out"][0]]) for k, st in enumerate(states)]


def score_traffic(c: ModelConfig, S: int, dtype_bytes: int = 2, gpu: str = "H200 141GB") -> dict:
    """HBM bytes of one prefill's attention with and without the S x S matrix (FlashAttention's saving).

    Eager: per head and layer it writes the scores, reads them for the softmax, writes the probabilities and
    reads them for P·V: 4 · S² · bytes. Both read q, k, v and write the output at least once:
    (2·nh + 2·nkv) · S · hd · bytes per layer (FlashAttention re-reads k, v once per query block on top).
    """
    L, nh, nkv, hd = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    matrix = S * S * dtype_bytes
    eager_head = 4 * matrix
    qkvo = (2 * nh + 2 * nkv) * S * hd * dtype_bytes * L
    bw = costs.GPUS[gpu]["tb_per_s"] * 1e12
    return dict(S=S, matrix=matrix, eager_head_layer=eager_head, eager_matrix=eager_head * nh * L, qkvo=qkvo,
                eager_total=eager_head * nh * L + qkvo, flash_total=qkvo, saved=eager_head * nh * L,
                eager_ms=(eager_head * nh * L + qkvo) / bw * 1e3, flash_ms=qkvo / bw * 1e3)


# ---- (b) the KV cache in a server ---------------------------------------------------------------------------
SERVING_GPUS = ("A100 80GB", "H200 141GB")        # 80 GB and 141 GB cards from costs.GPUS
PAGE_BLOCK = 16                                   # tokens per KV block (vLLM's default block size)


def concurrent_requests(c: ModelConfig, gpu: str, tokens: int = 4096, bits=16, kv_dtype_bytes: int = 2) -> dict:
    """How many requests of `tokens` tokens of KV cache fit beside the weights on one GPU (activations and the
    framework's own workspace not counted: an upper bound)."""
    mem = costs.GPUS[gpu]["mem_gb"]
    weights = costs.weight_bytes(c, bits)
    per_request = costs.kv_cache_bytes(c, tokens, kv_dtype_bytes)
    cache_tokens = costs.max_tokens_in_cache(c, mem, bits, kv_dtype_bytes)
    return dict(gpu=gpu, mem_bytes=int(mem * 1e9), weights=weights, free=max(0, int(mem * 1e9) - weights),
                per_request=per_request, cache_tokens=cache_tokens, requests=cache_tokens // tokens, tokens=tokens)


def paged_blocks(c: ModelConfig, lengths: list[int], block: int = PAGE_BLOCK, reserve: int | None = None,
                 kv_dtype_bytes: int = 2) -> dict:
    """Paged KV cache (blocks of `block` tokens, as vLLM's PagedAttention) vs reserving `reserve` tokens per
    request up front (default: the model's max_position_embeddings). Paging wastes < one block per request."""
    per_tok = costs.kv_bytes_per_token(c, kv_dtype_bytes)
    reserve = reserve or c.max_position_embeddings
    rows = []
    for n in lengths:
        blocks = -(-n // block)
        rows.append(dict(tokens=n, blocks=blocks, paged=blocks * block * per_tok, paged_waste=blocks * block - n,
                         reserved=reserve * per_tok, reserved_waste=reserve - n))
    used = sum(lengths) * per_tok
    return dict(block=block, block_bytes=block * per_tok, block_bytes_layer=block * per_tok // c.num_hidden_layers,
                reserve=reserve, rows=rows, used=used, paged=sum(r["paged"] for r in rows),
                reserved=sum(r["reserved"] for r in rows), max_waste=(block - 1) * per_tok)


def output_lengths(n: int = 64, seed: int = 0, lo: int = 8, hi: int = 512) -> list[int]:
    """n answer lengths spread log-uniformly over lo..hi (a fixed seed: the same list every time)."""
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(n, generator=g, dtype=torch.float64)
    return [int(round(lo * (hi / lo) ** float(x))) for x in u]


def batching(lengths: list[int], slots: int) -> dict:
    """Decode steps to finish every request with `slots` sequences per step.
    static: batches of `slots` in arrival order, each runs until its longest answer ends;
    continuous: a finished sequence's slot takes the next waiting request at the very next step."""
    static = sum(max(lengths[k:k + slots]) for k in range(0, len(lengths), slots))
    waiting, running, continuous = list(lengths), [], 0
    while waiting or running:
        while waiting and len(running) < slots:
            running.append(waiting.pop(0))
        continuous += 1
        running = [r - 1 for r in running if r > 1]
    useful = sum(lengths)
    return dict(requests=len(lengths), slots=slots, tokens=useful, static_steps=static, continuous_steps=continuous,
                static_util=useful / (static * slots), continuous_util=useful / (continuous * slots))


def system_prompt_tokens(tokenizer) -> int:
    """Tokens of the model's default system turn in its chat template (the prefix every chat request shares)."""
    from ..models.tokenizer import MODEL_DEFAULT
    return (len(tokenizer.encode(tokenizer.apply_chat_template("", system=MODEL_DEFAULT)))
            - len(tokenizer.encode(tokenizer.apply_chat_template("", system=None))))


def prefix_caching(c: ModelConfig, prefix_tokens: int, requests: int, block: int = PAGE_BLOCK,
                   kv_dtype_bytes: int = 2) -> dict:
    """A prefix shared by `requests` requests, cached once: only whole blocks are shared (a block's key is its
    tokens), so floor(prefix / block) · block tokens are kept once instead of once per request."""
    shared = prefix_tokens // block * block
    return dict(prefix=prefix_tokens, shared=shared, requests=requests,
                kv_saved=(requests - 1) * costs.kv_cache_bytes(c, shared, kv_dtype_bytes),
                flops_saved=(requests - 1) * costs.total_flops(c, 1, shared) if shared else 0)


# ---- (c) quantisation -----------------------------------------------------------------------------------------
# One block of each GGML type as llama.cpp's ggml-common.h lays it out: (field, bytes). Their sums are checked
# against gguf.constants.GGML_QUANT_SIZES (the spec's block bytes) by the tests; `sub` is the sub-block size
# that one scale covers.
GGUF_BLOCK_FIELDS = {
    "F32": dict(sub=1, fields=[("float32 value", 4)]),
    "F16": dict(sub=1, fields=[("float16 value", 2)]),
    "BF16": dict(sub=1, fields=[("bfloat16 value", 2)]),
    "Q8_0": dict(sub=32, fields=[("d: fp16 scale", 2), ("qs: 32 × int8", 32)]),
    "Q4_0": dict(sub=32, fields=[("d: fp16 scale", 2), ("qs: 32 × 4 bits", 16)]),
    "Q4_1": dict(sub=32, fields=[("d: fp16 scale", 2), ("m: fp16 min", 2), ("qs: 32 × 4 bits", 16)]),
    "Q5_0": dict(sub=32, fields=[("d: fp16 scale", 2), ("qh: 32 high bits", 4), ("qs: 32 × low 4 bits", 16)]),
    "Q5_1": dict(sub=32, fields=[("d: fp16 scale", 2), ("m: fp16 min", 2), ("qh: 32 high bits", 4),
                                 ("qs: 32 × low 4 bits", 16)]),
    "Q4_K": dict(sub=32, fields=[("d: fp16 super-scale", 2), ("dmin: fp16 super-min", 2),
                                 ("scales: 8 × (6-bit scale + 6-bit min)", 12), ("qs: 256 × 4 bits", 128)]),
    "Q5_K": dict(sub=32, fields=[("d: fp16 super-scale", 2), ("dmin: fp16 super-min", 2),
                                 ("scales: 8 × (6-bit scale + 6-bit min)", 12), ("qh: 256 high bits", 32),
                                 ("qs: 256 × low 4 bits", 128)]),
    "Q6_K": dict(sub=16, fields=[("ql: 256 × low 4 bits", 128), ("qh: 256 × high 2 bits", 64),
                                 ("scales: 16 × int8", 16), ("d: fp16 super-scale", 2)]),
}


def ggml_sizes(name: str) -> tuple[int, int]:
    """(weights per block, bytes per block) from the GGUF spec constants (gguf.constants.GGML_QUANT_SIZES)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    return GGML_QUANT_SIZES[GGMLQuantizationType[name]]


def _ggml_name(ggml_type: int) -> str:
    from gguf.constants import GGMLQuantizationType
    return GGMLQuantizationType(ggml_type).name


def gguf_quant_table(f) -> list[dict]:
    """Per tensor type in an open GGUF file (ops.models.gguf.open_gguf): tensors, weights and bytes (from the file's
    tensor table), block size and bytes per block (the spec constants), bits per weight, the block's fields."""
    by_type: dict[str, list] = {}
    for info in f.tensors.values():
        by_type.setdefault(_ggml_name(info.ggml_type), []).append(info)
    rows = []
    for name, infos in sorted(by_type.items(), key=lambda kv: -sum(i.nbytes for i in kv[1])):
        block, block_bytes = ggml_sizes(name)
        layout = GGUF_BLOCK_FIELDS.get(name)
        rows.append(dict(type=name, tensors=len(infos), weights=sum(math.prod(i.shape) for i in infos),
                         bytes=sum(i.nbytes for i in infos), block=block, block_bytes=block_bytes,
                         bits_per_weight=8 * block_bytes / block, sub_block=layout["sub"] if layout else None,
                         layout=" + ".join(f"{n} ({b} B)" for n, b in layout["fields"]) if layout else "",
                         examples=[i.name for i in infos[:3]]))
    return rows


def gguf_block_example(f, qtype: str = "Q8_0") -> dict | None:
    """The first block of the first `qtype` tensor in an open GGUF file, decoded by hand from its bytes (Q8_0:
    w = d·q; Q5_0: q = low 4 bits | high bit << 4, w = d·(q − 16)) and by the gguf package; both must agree.
    None when the file has no tensor of that type."""
    import numpy as np
    from gguf import GGMLQuantizationType, dequantize
    info = next((i for i in f.tensors.values() if _ggml_name(i.ggml_type) == qtype), None)
    if info is None:
        return None
    raw = bytes(f.blob[info.offset:info.offset + ggml_sizes(qtype)[1]])
    d = float(np.frombuffer(raw[:2], dtype=np.float16)[0])
    if qtype == "Q8_0":
        q = np.frombuffer(raw[2:34], dtype=np.int8).astype(np.int64)
    elif qtype == "Q5_0":
        qh = int.from_bytes(raw[2:6], "little")                        # bit j: the 5th bit of weight j
        qs = np.frombuffer(raw[6:22], dtype=np.uint8).astype(np.int64)  # weight j: low nibble, j + 16: high
        high = np.array([(qh >> j) & 1 for j in range(32)])
        q = (np.concatenate([qs & 0x0F, qs >> 4]) | (high << 4)) - 16
    else:
        raise InputError(f"no hand decoder for {qtype} (Q8_0 and Q5_0 are decoded here)")
    by_hand = d * q
    ref = dequantize(np.frombuffer(raw, dtype=np.uint8)[None], GGMLQuantizationType[qtype]).reshape(-1)
    return dict(tensor=info.name, type=qtype, d=d, q=q.tolist(), w=by_hand.tolist(),
                max_diff=float(np.abs(by_hand - ref).max()), nbytes=len(raw))


def gguf_report(path) -> dict:
    """The quantisation table of a GGUF file and a hand-decoded block of each simple type it holds."""
    from ..models.gguf import open_gguf
    f = open_gguf(path)
    return dict(path=str(path), tensors=len(f.tensors), file_bytes=len(f.blob), rows=gguf_quant_table(f),
                examples={q: e for q in ("Q8_0", "Q5_0") if (e := gguf_block_example(f, q)) is not None})


def gguf_checks(report: dict) -> list[Check]:
    """Each hand-decoded block against the gguf package's dequantize (llama.cpp's reference code): exact."""
    return [Check(f"{e['tensor']}, first {q} block: decoded by hand vs gguf.dequantize", e["max_diff"], 0.0,
                  f"{e['tensor']} 的第一个 {q} 块：手工解码 vs gguf.dequantize") for q, e in report["examples"].items()]


REPORT_FILE = "gguf_report.json"      # beside the bundled model's cache: the report, under the file's sha256
_report_lock = threading.Lock()       # the page and the load-time job may ask at once: one assembles, one waits


@lru_cache(maxsize=1)
def bundled_gguf_report() -> dict:
    """gguf_report of the bundled model's GGUF file, read once per process and made once per machine. The file is
    491 MB and the prepared cache does not keep it (ops/models/loading.py), so the report is kept instead, beside the
    cache, under the file's sha256: the parts are assembled (and verified) for it at most once, and when the file
    was not on disk before, it is removed again afterwards."""
    from ..models import loading
    with _report_lock:
        return _bundled_report(loading)


def _bundled_report(loading) -> dict:
    kept = loading.bundled_dir() / REPORT_FILE
    try:
        saved = json.loads(kept.read_text())
        if saved.get("sha256") == loading.BUNDLED_SHA256:
            return saved["report"]
    except (OSError, ValueError, KeyError):
        pass                                          # not made yet, or unreadable: make it again
    had_gguf = loading.bundled_gguf_kept()
    report = gguf_report(loading.bundled_gguf_path())
    loading.write_atomic(kept, lambda p: p.write_text(json.dumps({"sha256": loading.BUNDLED_SHA256, "report": report})))
    if not had_gguf:
        loading.drop_bundled_gguf()
    return report


def group_quant(w: torch.Tensor, bits: int, group: int) -> torch.Tensor:
    """Symmetric weight-only quantisation with one scale per `group` consecutive weights of a row:
    s = max|w| / (2^(bits-1) - 1), q = round(w / s) clamped, returns q · s (what a kernel multiplies by)."""
    rows, cols = w.shape
    if cols % group:
        raise InputError(f"the row length {cols} is not a multiple of the group size {group}")
    g = w.float().reshape(rows, cols // group, group)
    qmax = 2 ** (bits - 1) - 1
    scale = g.abs().amax(-1, keepdim=True).clamp_min(1e-12) / qmax
    return ((g / scale).round().clamp(-qmax - 1, qmax) * scale).reshape(rows, cols)


def group_quant_rows(model, name: str = "model.layers.0.self_attn.q_proj.weight",
                     schemes=((8, None), (8, 128), (4, 128), (4, 32))) -> list[dict]:
    """One live weight matrix of the loaded model quantised by each (bits, group) scheme (group None: one scale
    per row): bits per weight with an fp16 scale per group, and the relative error ‖w − ŵ‖ / ‖w‖."""
    w = model.w(name).float().cpu()
    rows = []
    for bits, group in schemes:
        g = group or w.shape[1]
        if w.shape[1] % g:                                          # a small model's rows may be shorter
            continue
        err = (group_quant(w, bits, g) - w).norm() / w.norm()
        rows.append(dict(weight=name, shape=list(w.shape), bits=bits, group=g, per_row=group is None,
                         bits_per_weight=bits + 16 / g, rel_err=float(err)))
    return rows


def kv_quant_rows(c: ModelConfig, tokens: int = 4096, gpu: str = "H200 141GB") -> list[dict]:
    """KV cache in bf16, int8 / FP8 (1 byte) and int4 (half a byte, as 4-bit KV kernels pack it), weights in bf16:
    bytes per token and how many `tokens`-token requests fit."""
    out = []
    for name, nbytes in (("bf16", 2), ("int8 / fp8", 1), ("int4", 0.5)):
        per_tok = int(costs.kv_bytes_per_token(c, 1) * nbytes)
        free = costs.GPUS[gpu]["mem_gb"] * 1e9 - costs.weight_bytes(c, 16)
        out.append(dict(kv_dtype=name, bytes_per_token=per_tok, requests=max(0, int(free // (per_tok * tokens)))))
    return out


def float_formats() -> list[dict]:
    """bf16 and the two FP8 formats (E4M3 for weights/activations, E5M2 for gradients), from torch.finfo."""
    rows = []
    for name, dt in (("bfloat16", torch.bfloat16), ("float8_e4m3fn", torch.float8_e4m3fn),
                     ("float8_e5m2", torch.float8_e5m2)):
        fi = torch.finfo(dt)
        rows.append(dict(dtype=name, bits=fi.bits, mantissa_bits=round(-math.log2(fi.eps)), max=fi.max,
                         smallest_normal=fi.smallest_normal, rel_step=fi.eps))
    return rows


# ---- (d) speculative decoding ------------------------------------------------------------------------------
def spec_expected_tokens(a: float, k: int) -> float:
    """Tokens one verification step yields with draft length k and per-token acceptance rate a (the accepted
    prefix, plus the target's own token): E = 1 + a + ... + a^k = (1 - a^(k+1)) / (1 - a); k + 1 at a = 1."""
    if not 0 <= a <= 1:
        raise InputError(f"acceptance rate must be in [0, 1], got {a}")
    return float(k + 1) if a == 1 else (1 - a ** (k + 1)) / (1 - a)


def spec_speedup(a: float, k: int, c: float) -> float:
    """Speed-up over plain decoding when one draft token costs c target steps: E / (k·c + 1)."""
    return spec_expected_tokens(a, k) / (k * c + 1)


def draft_cost_ratio(draft: ModelConfig, target: ModelConfig, bits=16) -> float:
    """c for a draft model: decode steps are memory-bound, so c = draft weight bytes / target weight bytes."""
    return costs.weight_bytes(draft, bits) / costs.weight_bytes(target, bits)


def spec_table(c: float, alphas=(0.6, 0.7, 0.8, 0.9), ks=(1, 2, 4, 6, 8)) -> list[dict]:
    return [dict(a=a, k=k, expected=spec_expected_tokens(a, k), speedup=spec_speedup(a, k, c)) for a in alphas
            for k in ks]


# ---- (e) long context ----------------------------------------------------------------------------------------
# Qwen2.5 model cards: "add rope_scaling {"type": "yarn", "factor": 4.0, "original_max_position_embeddings":
# 32768} to config.json" to go past 32,768 tokens (context 131,072). beta_fast / beta_slow: YaRN's defaults.
QWEN25_YARN = dict(factor=4.0, original_max_position_embeddings=32768, beta_fast=32, beta_slow=1)


def rope_wavelengths(c: ModelConfig) -> torch.Tensor:
    """Tokens for pair j to turn once: 2π / θ^(-2j/hd) = 2π · θ^(2j/hd), j = 0 .. hd/2 - 1 (float64)."""
    j = torch.arange(c.head_dim // 2, dtype=torch.float64)
    return 2 * math.pi * c.rope_theta ** (2 * j / c.head_dim)


def yarn_inv_freq(c: ModelConfig, factor: float, original: int, beta_fast: float = 32, beta_slow: float = 1):
    """YaRN ("NTK-by-parts"): pairs that turn more than beta_fast times within the original context keep their
    frequency, pairs that turn less than beta_slow times are slowed by `factor`, a linear ramp in between; the
    attention logits are scaled by 0.1·ln(factor) + 1. Returns (inv_freq (hd/2,), attention_factor)."""
    hd, base = c.head_dim, c.rope_theta

    def dim_for(rotations):        # the pair index at which the wavelength fits `rotations` times into `original`
        return hd * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(dim_for(beta_fast)), 0), min(math.ceil(dim_for(beta_slow)), hd - 1)
    high = high + 0.001 if low == high else high
    pos = base ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd)
    ramp = ((torch.arange(hd // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)   # 0 keep .. 1 slow
    inv_freq = (1 / pos) * (1 - ramp) + (1 / (factor * pos)) * ramp
    return inv_freq, 0.1 * math.log(factor) + 1.0


def long_context(c: ModelConfig, yarn: dict = QWEN25_YARN) -> dict:
    """RoPE wavelengths before and after YaRN, and how many pairs turn fully within each context."""
    wl = rope_wavelengths(c)
    inv, attn = yarn_inv_freq(c, yarn["factor"], yarn["original_max_position_embeddings"], yarn["beta_fast"],
                              yarn["beta_slow"])
    orig = yarn["original_max_position_embeddings"]
    extended = int(orig * yarn["factor"])
    yarn_wl = (2 * math.pi / inv.double())
    return dict(wavelengths=wl, yarn_wavelengths=yarn_wl, original=orig, extended=extended, factor=yarn["factor"],
                attention_factor=attn, pairs=len(wl), kept=int((yarn_wl.isclose(wl, rtol=1e-4)).sum()),
                stretched=int((yarn_wl.isclose(wl * yarn["factor"], rtol=1e-4)).sum()),
                full_turn_orig=int((wl <= orig).sum()), full_turn_ext=int((wl <= extended).sum()),
                shortest=float(wl[0]), longest=float(wl[-1]))


def sliding_window(c: ModelConfig, contexts=(4096, 32768, 131072), window: int = 4096, kv_dtype_bytes: int = 2):
    """KV cache of one sequence with full attention vs a sliding window of `window` keys (each layer keeps only
    the last `window` tokens' keys and values)."""
    return [dict(context=n, window=window, full=costs.kv_cache_bytes(c, n, kv_dtype_bytes),
                 windowed=costs.kv_cache_bytes(c, min(n, window), kv_dtype_bytes)) for n in contexts]


# ---- (f) attention variants ---------------------------------------------------------------------------------
# DeepSeek-V3's config.json: kv_lora_rank 512 (the compressed latent c_KV), qk_rope_head_dim 64 (the one shared
# RoPE key): MLA caches 512 + 64 numbers per token and layer, whatever the number of heads.
MLA_DEEPSEEK_V3 = dict(kv_lora_rank=512, qk_rope_head_dim=64)


def attention_variants(c: ModelConfig, dtype_bytes: int = 2, mla: dict = MLA_DEEPSEEK_V3) -> list[dict]:
    """KV-cache bytes per token at this config's shape (L layers, nh heads, hd) for each attention design."""
    L, nh, nkv, hd = c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.head_dim
    latent = mla["kv_lora_rank"] + mla["qk_rope_head_dim"]
    rows = [("MHA", nh, 2 * L * nh * hd), ("GQA", nkv, 2 * L * nkv * hd), ("MQA", 1, 2 * L * hd),
            ("MLA", None, L * latent)]
    mha = 2 * L * nh * hd * dtype_bytes
    return [dict(variant=v, kv_heads=n, numbers=x, bytes_per_token=x * dtype_bytes, vs_mha=x * dtype_bytes / mha)
            for v, n, x in rows]


# ---- (g) tensor parallelism ----------------------------------------------------------------------------------
def tensor_parallel(c: ModelConfig, degrees=(1, 2, 4, 8, 16, 40), bits: int = 16, kv_dtype_bytes: int = 2,
                    gpu: str = "H200 141GB") -> list[dict]:
    """Megatron-style TP of degree t: every projection split by heads / columns over t GPUs, norms copied.
    The nkv KV heads are split too: past t = nkv each GPU still needs one whole KV head (copies), so KV bytes
    per GPU stop shrinking. A degree works when t divides nh and t divides nkv or nkv divides t."""
    nh, nkv, L, hd = c.num_attention_heads, c.num_key_value_heads, c.num_hidden_layers, c.head_dim
    by = bits / 8
    norms = sum(r["params"] for r in costs.param_table(c) if r["operator"].endswith("norm"))
    kv_proj = sum(r["params"] for r in costs.param_table(c) if r["operator"] in ("attention k_proj", "attention v_proj"))
    rest = costs.total_params(c) - norms - kv_proj
    mem = costs.GPUS[gpu]["mem_gb"] * 1e9
    rows = []
    for t in degrees:
        ok = nh % t == 0 and (nkv % t == 0 or t % nkv == 0)
        kv_heads = max(1, nkv // t)
        w = int((norms + rest / t + kv_proj * kv_heads / nkv) * by)
        kv_tok = 2 * L * kv_heads * hd * kv_dtype_bytes
        rows.append(dict(tp=t, valid=ok, q_heads=nh / t, kv_heads=kv_heads, kv_copies=max(1, t // nkv),
                         weights_per_gpu=w, kv_per_token_per_gpu=kv_tok,
                         tokens_per_gpu=max(0, int((mem - w) // kv_tok)) if ok else 0))
    return rows


# ---- (h) prefill vs decode, timed ------------------------------------------------------------------------------
def _best(fn_, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn_()
        best = min(best, time.perf_counter() - t0)
    return best


@torch.inference_mode()
def machine_peaks(dtype=torch.float32, n: int = 1024, mb: int = 256, reps: int = 3) -> dict:
    """This machine's own roof, measured: matmul FLOP/s (n x n x n) and matrix-vector bytes/s (a `mb` MB
    matrix read once per call), best of `reps`."""
    a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    flops = 2 * n ** 3 / _best(lambda: a @ b, reps)
    cols = 4096
    m = torch.randn(mb * 2**20 // (cols * a.element_size()), cols, dtype=dtype)
    x = torch.randn(cols, dtype=dtype)
    bw = m.numel() * m.element_size() / _best(lambda: torch.mv(m, x), reps)
    return dict(flops_per_s=flops, bytes_per_s=bw, ridge=flops / bw, dtype=str(dtype).replace("torch.", ""))


def _ids(model, S: int) -> torch.Tensor:
    """(1, S) ordinary token ids (a fixed sentence repeated): the timing does not depend on what they say."""
    base = model.tokenizer.encode("The quick brown fox jumps over the lazy dog. ") if model.tokenizer else [1, 2, 3]
    return torch.tensor([(base * (S // len(base) + 1))[:S]])


@torch.inference_mode()
def measure_phases(model, prefill=(8, 128), context: int = 128, steps: int = 8, reps: int = 2, progress=None) -> dict:
    """Time per token of prefill at each S in `prefill` (one forward of S tokens, best of reps) and of decode
    (one token against a KV cache of `context` tokens, best of `steps`), on the loaded model with SDPA, next
    to the roofline prediction max(FLOPs / peak, bytes / bandwidth) with this machine's measured peaks.
    progress(done, total), if given, is called after each part."""
    from ..engine.decode import KVCache
    c = model.config
    total = len(prefill) + 2
    progress = progress or (lambda done, total: None)
    peaks = machine_peaks(model.dtype)
    progress(1, total)
    bits = 8 * torch.empty((), dtype=model.dtype).element_size()

    def predict(S, phase, ctx=None):
        fl = costs.total_flops(c, 1, S, phase, ctx)
        by = costs.step_bytes(c, 1, S, phase, ctx, bits=bits, act_bytes=bits // 8)["total"]
        return fl, by, max(fl / peaks["flops_per_s"], by / peaks["bytes_per_s"]), \
            "compute" if fl / peaks["flops_per_s"] >= by / peaks["bytes_per_s"] else "memory"

    rows = []
    for S in prefill:
        ids = _ids(model, S)
        run = lambda: model.forward(ids, torch.arange(S)[None], torch.ones(1, S, dtype=torch.bool),  # noqa: E731
                                    last_only=True, attention="sdpa")
        sec = _best(run, reps)
        fl, by, pred, bound = predict(S, "prefill")
        rows.append(dict(phase="prefill", S=S, tokens=S, seconds=sec, ms_per_token=sec / S * 1e3,
                         predicted_ms_per_token=pred / S * 1e3, flops=fl, bytes=by, bound=bound))
        progress(len(rows) + 1, total)
    cache = KVCache(c, 1, context + steps, model.device, model.dtype)
    model.forward(_ids(model, context), torch.arange(context)[None], torch.ones(1, context, dtype=torch.bool),
                  cache=cache, last_only=True, attention="sdpa")
    times = []
    for k in range(steps):
        p = cache.length
        t0 = time.perf_counter()
        model.forward(_ids(model, 1), torch.tensor([[p]]), torch.ones(1, p + 1, dtype=torch.bool), cache=cache,
                      last_only=True, attention="sdpa")
        times.append(time.perf_counter() - t0)
    fl, by, pred, bound = predict(1, "decode", context)
    rows.append(dict(phase="decode", S=context, tokens=1, seconds=min(times), ms_per_token=min(times) * 1e3,
                     predicted_ms_per_token=pred * 1e3, flops=fl, bytes=by, bound=bound))
    progress(total, total)
    return dict(rows=rows, peaks=peaks, dtype=peaks["dtype"])


def h200_phases(c: ModelConfig, lengths=(8, 1024), context: int = 4096, gpu: str = "H200 141GB") -> list[dict]:
    """costs.roofline for prefill at each S and one decode step at `context`, B = 1: where each sits."""
    rows = [dict(phase="prefill", S=S, **costs.roofline(c, 1, S, "prefill", gpu=gpu)) for S in lengths]
    rows.append(dict(phase="decode", S=context, **costs.roofline(c, 1, 1, "decode", gpu=gpu, context=context)))
    for r in rows:
        r["ms_per_token"] = r["time_s"] * 1e3 / (r["S"] if r["phase"] == "prefill" else 1)
    return rows
