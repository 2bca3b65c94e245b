"""Scheduling a server, computed from a config: one step's time on the roofline, continuous batching with chunked
prefill (TTFT, ITL, goodput), prefill-decode disaggregation (moving the KV cache), prefix sharing in a radix tree
against block hashing, and grammar-constrained decoding (a mask from an automaton, every step).

The step model is costs.py's roofline made small enough to check by hand: 2 FLOPs per layer weight per token, the
LM head only on rows that need logits, 4·L·nh·hd FLOPs per (query, key) pair for scores and PV; bytes are the
weights once per step plus every KV token read. Published GPU figures from costs.GPUS.
"""
from __future__ import annotations

import math

from ..engine.config import ModelConfig
from ..errors import InputError
from . import costs

# One direction of a link, GB/s (1e9 B/s): H200 NVLink 900 GB/s in both directions together (data sheet);
# InfiniBand NDR 400 Gb/s per port.
LINKS = {"NVLink": 450.0, "InfiniBand 400G": 50.0}


def layer_params(c: ModelConfig) -> int:
    """Weights every token multiplies through: all but the embedding (a lookup) and the LM head (logit rows only)."""
    head = 0 if c.tie_word_embeddings else c.vocab_size * c.hidden_size
    return costs.total_params(c) - c.vocab_size * c.hidden_size - head


def step_time(c: ModelConfig, tokens: int, pairs: int, kv_read: int, logit_rows: int, gpu: str = "H200 141GB",
              bits=16) -> dict:
    """One forward step of `tokens` tokens: FLOPs = 2·layer_params·tokens + 2·H·V·logit_rows + 4·L·nh·hd·pairs
    ((query, key) pairs summed over the batch); bytes = weights + kv_read tokens of KV; time = max of the two."""
    g = costs.GPUS[gpu]
    fl = (2 * layer_params(c) * tokens + 2 * c.hidden_size * c.vocab_size * logit_rows
          + 4 * c.num_hidden_layers * c.num_attention_heads * c.head_dim * pairs)
    by = costs.weight_bytes(c, bits) + costs.kv_bytes_per_token(c) * kv_read
    t_c, t_m = fl / (g["tflops_bf16"] * 1e12), by / (g["tb_per_s"] * 1e12)
    return dict(flops=fl, bytes=by, s=max(t_c, t_m), bound="compute" if t_c >= t_m else "memory")


def decode_step(c: ModelConfig, batch: int, context: int, gpu: str = "H200 141GB") -> dict:
    """`batch` sequences each add one token at `context` cached tokens (it attends to context + 1 keys)."""
    return step_time(c, batch, batch * (context + 1), batch * context, batch, gpu)


# ---- continuous batching with chunked prefill ------------------------------------------------------------------
def chunked_prefill(c: ModelConfig, prompt: int, chunk: int | None, decodes: int, context: int,
                    gpu: str = "H200 141GB") -> dict:
    """A prompt of `prompt` tokens arrives while `decodes` sequences decode at `context` cached tokens.
    chunk None: the prompt is one step on its own and the decodes wait for it (prefill first), so their gap between
    two tokens is that step plus their own. chunk C: every step carries the decodes and the next C prompt tokens
    (stall-free batching); each chunk reads the earlier chunks' KV from the cache. TTFT: the steps until the
    prompt's first token, summed (no queueing); ITL: the decodes' longest gap between two tokens."""
    if chunk is not None and chunk < 1:
        raise InputError(f"chunk must be at least 1, got {chunk}")
    dec = decode_step(c, decodes, context, gpu)["s"] if decodes else 0.0
    if chunk is None:
        alone = step_time(c, prompt, prompt * (prompt + 1) // 2, 0, 1, gpu)["s"]
        return dict(chunk=None, steps=1, ttft_s=alone, itl_s=alone + dec, decode_tokens=decodes,
                    decode_tokens_per_s=decodes / (alone + dec) if decodes else 0.0)
    steps = []
    for a in range(0, prompt, chunk):
        n = min(chunk, prompt - a)
        last = a + n == prompt
        pairs = decodes * (context + 1) + n * a + n * (n + 1) // 2
        steps.append(step_time(c, decodes + n, pairs, decodes * context + a, decodes + last, gpu))
    times = [s["s"] for s in steps]
    return dict(chunk=chunk, steps=len(times), ttft_s=sum(times), itl_s=max(times), decode_tokens=decodes * len(times),
                decode_tokens_per_s=decodes * len(times) / sum(times),
                memory_bound_steps=sum(s["bound"] == "memory" for s in steps), step_rows=steps)


def chunk_delay(c: ModelConfig, prompt: int, chunk: int, decodes: int, context: int, gpu: str = "H200 141GB") -> dict:
    """Why the chunked prompt's first token comes later than the prompt prefilled alone (a compute-bound step):
    each step takes max(FLOPs / peak, bytes / bandwidth), so the delay is the reads' excess over the compute in the
    steps that are memory-bound (re-reading the weights and the KV: nothing while every step is compute-bound) plus
    the compute of the decodes riding along in every step (the rest)."""
    g = costs.GPUS[gpu]
    alone = chunked_prefill(c, prompt, None, 0, context, gpu)["ttft_s"]
    run = chunked_prefill(c, prompt, chunk, decodes, context, gpu)
    reread = sum(max(0.0, r["bytes"] / (g["tb_per_s"] * 1e12) - r["flops"] / (g["tflops_bf16"] * 1e12))
                 for r in run["step_rows"])
    return dict(delay_s=run["ttft_s"] - alone, reread_s=reread, decodes_s=run["ttft_s"] - alone - reread)


def chunk_crossover(c: ModelConfig, prompt: int, decodes: int, context: int, gpu: str = "H200 141GB",
                    max_log2: int = 16) -> int | None:
    """The smallest power-of-two chunk at which every step carrying the decodes is compute-bound (their KV is read
    every step, so it lies above a prompt-only prefill's crossover); None: none up to 2**max_log2."""
    return next((C for C in (2 ** k for k in range(max_log2 + 1))
                 if chunked_prefill(c, prompt, C, decodes, context, gpu)["memory_bound_steps"] == 0), None)


def decode_goodput(c: ModelConfig, batches, context: int, itl_slo_s: float, gpu: str = "H200 141GB") -> dict:
    """Throughput against the latency target on one GPU: per batch size the memory it needs (bf16 weights + every
    sequence's `context` tokens of KV, against the GPU's decimal GB), the step time (each sequence's ITL) and the
    tokens per second. Only a batch that fits may be offered: goodput is the best throughput of the batches that fit
    and meet the target (0 when none does). The largest batch that fits is added to `batches`."""
    cap = costs.GPUS[gpu]["mem_gb"] * 1e9
    largest = costs.max_tokens_in_cache(c, costs.GPUS[gpu]["mem_gb"]) // context
    rows = []
    for b in sorted({*batches, largest} - {0}):
        s, kv = decode_step(c, b, context, gpu)["s"], costs.kv_cache_bytes(c, b * context)
        need = costs.weight_bytes(c, 16) + kv
        rows.append(dict(batch=b, itl_s=s, tokens_per_s=b / s, kv_bytes=kv, need_bytes=need, fits=need <= cap,
                         meets_itl=s <= itl_slo_s, meets=need <= cap and s <= itl_slo_s))
    good = [r for r in rows if r["meets"]]
    return dict(rows=rows, slo_s=itl_slo_s, gpu_bytes=cap, largest_fit=largest,
                goodput=max((r["tokens_per_s"] for r in good), default=0.0),
                best_batch=max(good, key=lambda r: r["tokens_per_s"])["batch"] if good else None)


# ---- prefill-decode disaggregation -------------------------------------------------------------------------------
def disaggregation(c: ModelConfig, prompts, links: dict = LINKS, gpu: str = "H200 141GB") -> list[dict]:
    """Prefill on one GPU, decode on another: the prompt's whole KV cache crosses a link once. Per prompt length its
    bytes, the prefill step alone and the transfer over each link (seconds)."""
    rows = []
    for p in prompts:
        kv = costs.kv_cache_bytes(c, p)
        pre = step_time(c, p, p * (p + 1) // 2, 0, 1, gpu)["s"]
        moves = {k: kv / (v * 1e9) for k, v in links.items()}
        rows.append(dict(prompt=p, kv_bytes=kv, prefill_s=pre, transfer_s=moves))
    return rows


# ---- prefix sharing: a radix tree of tokens vs hashed blocks ------------------------------------------------------
def radix_tokens(sequences) -> int:
    """Tokens a radix tree over these sequences keeps: every distinct prefix ends in one stored token (merging
    chains into one edge changes the number of nodes, not of tokens)."""
    root, kept = {}, 0
    for seq in sequences:
        node = root
        for tok in seq:
            if tok not in node:
                node[tok] = {}
                kept += 1
            node = node[tok]
    return kept


def block_hash_tokens(sequences, block: int = 16) -> int:
    """Tokens a block-hashed cache keeps (a block is found by its tokens and everything before it): each distinct
    full-block prefix once, and every request's last partial block for itself."""
    full, tails = set(), 0
    for seq in sequences:
        n = len(seq) // block * block
        full.update(tuple(seq[:e]) for e in range(block, n + 1, block))
        tails += len(seq) - n
    return len(full) * block + tails


def few_shot_requests(system: int, groups: int, template: int, question: int, per_group: int) -> list[list[int]]:
    """Token ids of a few-shot workload: one system prompt for all, one template per group, a question per request
    (distinct ids stand for distinct tokens)."""
    out, nxt = [], system + groups * template
    for g in range(groups):
        head = list(range(system)) + list(range(system + g * template, system + (g + 1) * template))
        for _ in range(per_group):
            out.append(head + list(range(nxt, nxt + question)))
            nxt += question
    return out


def prefix_sharing(c: ModelConfig, sequences, block: int = 16) -> list[dict]:
    """Tokens and KV bytes kept with no sharing, with hashed blocks and with a radix tree; the prefill tokens each
    one skips."""
    total = sum(len(s) for s in sequences)
    rows = []
    for name, kept in (("none", total), ("blocks", block_hash_tokens(sequences, block)),
                       ("radix", radix_tokens(sequences))):
        rows.append(dict(scheme=name, tokens=kept, kv_bytes=costs.kv_cache_bytes(c, kept), skipped=total - kept))
    return rows


# ---- structured (grammar) decoding ---------------------------------------------------------------------------------
# JSON's integer, -?(0|[1-9][0-9]*), as a DFA over bytes: state -> {byte: next}; "zero" and "int" accept.
_DIG = {ord(d) for d in "0123456789"}
INTEGER_DFA = dict(start="start", accept={"zero", "int"}, edges={
    "start": {ord("-"): "neg", ord("0"): "zero", **{d: "int" for d in _DIG - {ord("0")}}},
    "neg": {ord("0"): "zero", **{d: "int" for d in _DIG - {ord("0")}}},
    "int": {d: "int" for d in _DIG}, "zero": {}})


def vocab_bytes(tokenizer) -> list[bytes]:
    """Every token id's bytes, in id order (an added or special token as its text's UTF-8)."""
    from ..models.tokenizer import raw_to_bytes
    return [raw_to_bytes(tokenizer.id_to_raw(i) or "") for i in range(tokenizer.vocab_size)]


def token_mask(dfa: dict, state: str, vocab: list[bytes]) -> dict:
    """Which tokens may come next: a token is allowed when every one of its bytes has an edge from `state` on.
    Counts the byte transitions a plain scan of the vocabulary walks (it stops at a token's first dead byte)."""
    allowed, walked = [], 0
    for i, tok in enumerate(vocab):
        s = state
        for b in tok:
            walked += 1
            s = dfa["edges"][s].get(b)
            if s is None:
                break
        if s is not None and tok:
            allowed.append(i)
    return dict(state=state, allowed=allowed, walked=walked, vocab=len(vocab),
                mask_bytes=math.ceil(len(vocab) / 8), ends=state in dfa["accept"])


def grammar_masks(vocab: list[bytes], dfa: dict = INTEGER_DFA, examples: int = 6) -> list[dict]:
    """token_mask at every state of `dfa`, with the first `examples` allowed tokens as text instead of the full list."""
    out = []
    for state in dfa["edges"]:
        r = token_mask(dfa, state, vocab)
        out.append(dict(r, allowed=len(r["allowed"]),
                        examples=[vocab[i].decode("utf-8", "replace") for i in r["allowed"][:examples]]))
    return out
