"""Serving, computed from a config: what a production server does with the operators the other pages show.

The KV cache in a server (requests that fit, paged blocks, continuous batching, prefix caching); speculative
decoding; long context (RoPE wavelengths, YaRN, sliding windows); MHA / MQA / GQA / MLA; tensor parallelism.
The online softmax is ops/lab/online_softmax.py, number formats and the GGUF file's blocks ops/arith/formats.py,
prefill vs decode timed on the loaded model ops/lab/serving_phases.py.

Conventions are ops/arith/costs.py's: bf16 = 2 bytes, GPU memory in decimal GB (1e9 bytes), published GPU spec
figures from costs.GPUS. Every number is a function of a config.
"""
from __future__ import annotations

import math

import torch

from ..engine import rope
from ..engine.config import ModelConfig
from ..errors import InputError
from . import costs

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
    tokens), so floor(prefix / block) · block tokens are kept once instead of once per request. The FLOPs saved are
    the layers' prefill of those tokens, without the LM head: only a request's last position needs logits, and that
    position is never inside a shared prefix (prefix_prefill_flops)."""
    shared = prefix_tokens // block * block
    return dict(prefix=prefix_tokens, shared=shared, requests=requests,
                kv_saved=(requests - 1) * costs.kv_cache_bytes(c, shared, kv_dtype_bytes),
                flops_saved=(requests - 1) * prefix_prefill_flops(c, shared))


def prefix_prefill_flops(c: ModelConfig, tokens: int) -> int:
    """Prefill FLOPs of `tokens` positions that need no logits (a cached prefix): every operator of costs.flops
    but the LM head, whose 2·tokens·H·V would be spent on rows nobody samples from."""
    if not tokens:
        return 0
    return sum(r["flops"] for r in costs.flops(c, 1, tokens) if r["operator"] != "lm_head")


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
    attention logits are scaled by 0.1·ln(factor) + 1. Returns (inv_freq (hd/2,), attention_factor): the forward
    pass's own function (ops/engine/rope.py) on this config with that rope_scaling."""
    yarn = dict(rope_type="yarn", factor=factor, original_max_position_embeddings=original, beta_fast=beta_fast,
                beta_slow=beta_slow)
    return rope.frequencies(c.replace(rope_scaling=tuple(sorted(yarn.items()))))


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
    kv_proj = sum(r["params"] for r in costs.param_table(c) if r["operator"] in ("attention k_proj",
                                                                                 "attention v_proj"))
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


# ---- (d') learned drafts (EAGLE, MTP) and (f') sparse and linear attention ----------------------------------------
def accepted_length(rates) -> float:
    """Draft tokens one verification accepts on average when draft token j is accepted with probability rates[j]
    given that all before it were: sum over j of rates[0]·...·rates[j]. A constant a over k tokens gives
    a·(1 - a^k) / (1 - a), i.e. spec_expected_tokens(a, k) - 1. Independent acceptances at a fixed rate make it a
    bound: real acceptance falls with depth (each draft token builds on earlier guesses)."""
    total, run = 0.0, 1.0
    for a in rates:
        if not 0 <= a <= 1:
            raise InputError(f"acceptance rate must be in [0, 1], got {a}")
        run *= a
        total += run
    return total


def draft_head_cost(c: ModelConfig, bits=16) -> float:
    """c of a draft head on the target's own features (EAGLE, an MTP module): one decoder layer at the target's
    width plus the target's LM head, read once per draft token, over the target's weight bytes."""
    rows = {r["operator"]: r for r in costs.param_table(c)}
    ends = sum(rows[k]["params"] for k in ("embedding", "lm_head", "final_norm"))
    layer = (costs.total_params(c) - ends) // c.num_hidden_layers
    head = c.vocab_size * c.hidden_size
    return (layer + head) / costs.total_params(c)


def draft_head_table(c: ModelConfig, alphas=(0.6, 0.8, 0.9), ks=(1, 3, 5)) -> list[dict]:
    """Per acceptance rate a and draft length k: accepted draft tokens, tokens per verification and the speed-up
    bound E / (k·c + 1) with c = draft_head_cost(c)."""
    cost = draft_head_cost(c)
    return [dict(a=a, k=k, accepted=accepted_length([a] * k), expected=spec_expected_tokens(a, k),
                 speedup=spec_speedup(a, k, cost)) for a in alphas for k in ks]


# Example settings of a natively sparse attention (compressed blocks every `stride` tokens, `blocks` selected blocks
# of `block` tokens, a local window) and of a top-k token selection; the linear layer keeps an hd × hd state per
# head in float32; a hybrid keeps full attention in one layer of every `hybrid_every`.
SPARSE = dict(stride=16, blocks=16, block=64, window=512, topk=2048, state_bytes=4, hybrid_every=4)


def attention_memory(c: ModelConfig, contexts=(4096, 32768, 131072), s: dict = SPARSE, kv_dtype_bytes: int = 2):
    """Per context length, one sequence: bytes kept and KV tokens read per decode step by full attention (this
    config's GQA), block-sparse selection (keeps every token plus one compressed token per stride, reads the
    compressed tokens, the selected blocks and the window), top-k selection (keeps every token, reads k), a linear
    (delta-rule) layer stack (a fixed nh·hd·hd state per layer, whatever the context) and a hybrid (one full layer
    in hybrid_every, linear layers in the rest)."""
    L, nh, hd = c.num_hidden_layers, c.num_attention_heads, c.head_dim
    state = L * nh * hd * hd * s["state_bytes"]
    rows = []
    for n in contexts:
        full = costs.kv_cache_bytes(c, n, kv_dtype_bytes)
        k = s["hybrid_every"]
        rows.append(dict(context=n, full=full, full_read=n,
                         sparse_kept=costs.kv_cache_bytes(c, n + n // s["stride"], kv_dtype_bytes),
                         sparse_read=min(n, n // s["stride"] + s["blocks"] * s["block"] + s["window"]),
                         topk_kept=full, topk_read=min(n, s["topk"]), linear=state,
                         hybrid=full // k + state * (k - 1) // k))
    return dict(rows=rows, state=state, crossover=state / costs.kv_bytes_per_token(c, kv_dtype_bytes))
