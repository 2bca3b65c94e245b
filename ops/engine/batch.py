"""Continuous batching: the next decode step of several decodings, run as one forward pass.

Each Decoder (ops/engine/decode.py) keeps its own KV cache, length, sampling settings and torch.Generator. A batched
step stacks one row per decoding: the embedding, norms, every projection and the LM head run on the (B, 1, H) rows
together, so a step reads each weight once for all of them (on a CPU, reading the weights is what a decode step
costs: int8 ~0.5 GB for Qwen2.5-0.5B, whatever B). Attention runs row by row, each query over its own cache with the
path's own attention function, exactly as that decoding's step alone. Then each decoding picks its token from its
own logits with its own settings and generator, and records it (Decoder.pick, Decoder.record).

So a row's numbers are its numbers alone except where a product over the stacked rows rounds differently: the
native int8 kernel gives the same bits for a row whatever the rows beside it (ops/fast/native/int8_linear.c), so
int8 decoding is bit for bit its decoding alone; float32 F.linear may pick another kernel for B rows (differences
at float32 rounding, tests/unit/test_batch.py states the bound).

New prompts that arrive together are traced together (trace_together): their rows right-padded into one pass, as a
batch of prompts always was (Model.trace), and each request's trace cut from it (recording.build_traces).

Decodings join and leave between steps: a step is any set of decodings of one model and path (same_group). A
decoding whose step fails alone, or a pass that fails, reaches only its own decoding: each row's sampling is
caught on its own, and a failed pass (caches not advanced) is run again row by row, each row's error its own.
"""
from __future__ import annotations

import time
import warnings

import torch

from . import functional as fn, rope
from .decode import Decoder, GenerationStep
from .model import ATTENTION, Pass
from .recording import build_traces, recorder

PATHS = ("eager", "int8")    # the model's own weights (float32), and int8 rows: the paths a batched step runs


def can_join(d) -> bool:
    """Whether this decoding's next step can run in a batch: a plain Decoder past its prefill, on a batched path,
    with no draft (a verifying pass runs several tokens), on a model on one device."""
    return (isinstance(d, Decoder) and bool(d.steps) and not d.done and d.drafter is None and d.path in PATHS
            and d.model.device_map is None)


def group(d) -> tuple:
    """Decodings that may share a step: one model, one path."""
    return id(d.model), d.path


class Rows:
    """The KV caches of a batched step's rows, each its own length: update() writes row b's new key and value into
    row b's cache and hands back the rows' keys so far and their values, two lists (Model.attention passes them on
    to the attention function, row_attention here)."""

    def __init__(self, caches: list):
        self.caches = caches

    def update(self, i: int, k: torch.Tensor, v: torch.Tensor) -> tuple[list, list]:
        # split: the B row views in one torch call, not one slice per row (each call hands the GIL back, and on a
        # busy server waits to get it again: a step's time grows with its calls, bench/RESULTS_load.md)
        kv = [c.update(i, kb, vb) for c, kb, vb in zip(self.caches, k.split(1), v.split(1))]  # (1, nkv, T_b, hd)
        return [k for k, _ in kv], [v for _, v in kv]


def row_attention(attend, masks: list):
    """The path's attention function run row by row: query row b (1, nh, 1, hd) against row b's own keys."""
    def run(q, keys, values, _mask, rec, n):
        return torch.cat([attend(qb, k, v, m, rec, n) for qb, k, v, m in zip(q.split(1), keys, values, masks)])
    return run


def forward_rows(decoders: list[Decoder]) -> torch.Tensor:
    """One pass of each decoding's last token after its own cache: logits (B, V). The caches advance only once the
    whole pass has run, so a pass that fails leaves every decoding as it was."""
    d0 = decoders[0]
    model, c = d0.model, d0.model.config
    ids = torch.tensor([[d.token_ids[-1]] for d in decoders], device=model.device)                  # (B, 1)
    positions = torch.tensor([[d.cache.length] for d in decoders], device=model.device)             # (B, 1)
    k_positions = [torch.cat([d.cache.positions, positions[b:b + 1]], dim=1) for b, d in enumerate(decoders)]
    masks = [None if d0.attention == "sdpa" else                                                    # as Model.forward
             fn.attention_mask(torch.ones_like(kp, dtype=torch.bool), positions[b:b + 1], kp, dtype=torch.float32)
             for b, kp in enumerate(k_positions)]
    # each row's rotary angles as its step alone computes them (Model.forward): its own frequencies, which under
    # dynamic scaling depend on the row's own length
    rows = [fn.rope_cos_sin(p, *rope.call_frequencies(c, p)) for p in positions.split(1)]
    cos, sin = torch.cat([r[0] for r in rows]), torch.cat([r[1] for r in rows])                     # (B, 1, hd)
    run = Pass(model.weight_set(d0.weights), row_attention(ATTENTION[d0.attention], masks), cos, sin, None,
               Rows([d.cache for d in decoders]), recorder())
    x = fn.embedding(ids, run.W["model.embed_tokens.weight"])                                       # (B, 1, H)
    for i in range(c.num_hidden_layers):
        x = model.layer(i, x, run)
    x = fn.rms_norm(x, run.W["model.norm.weight"], c.rms_norm_eps)
    logits = run.W.linear(x, "lm_head")[:, -1]                                                      # (B, V)
    for d, kp in zip(decoders, k_positions):
        d.cache.positions = kp
        d.cache.advance(1)
        d.forward_passes += 1
    return logits


@torch.inference_mode()
def step_together(decoders: list[Decoder]) -> list:
    """The next step of every decoding (each can_join, all of one group) in one forward pass. Returns, per decoding,
    its GenerationStep (recorded, as Decoder.step records it) or the exception its step raised."""
    t0 = time.perf_counter()
    try:
        logits = forward_rows(decoders)
    except Exception as e:                              # whose fault? each row alone says
        # said in the server's log: a pass that always fails still gives right tokens, only slowly (it went unseen once)
        warnings.warn(f"a batched decode step of {len(decoders)} rows failed ({type(e).__name__}: {e}); "
                      "its rows ran one by one", RuntimeWarning, stacklevel=2)
        return [alone(d) for d in decoders]
    passed = time.perf_counter() - t0
    out = []
    for b, d in enumerate(decoders):
        t1 = time.perf_counter()
        try:
            step = d.pick(logits[b], d.prompt_ids + d.token_ids, 1, "decode")
            step.seconds = passed + time.perf_counter() - t1          # the shared pass, and this row's sampling
            d.record(step)
            out.append(step)
        except Exception as e:                          # handed to that decoding's session alone
            out.append(e)
    return out


def alone(d: Decoder) -> GenerationStep | Exception:
    """d's step by itself; its exception, if any, returned for its own session."""
    try:
        return d.step()
    except Exception as e:
        return e


def trace_together(model, requests: list[tuple], on_layer=None) -> list:
    """Several requests' traces, each (prompts, texts, rows) as Model.prepare_trace gives them, in one padded forward
    pass (recording.build_traces): per request, its Trace (every tensor kept, recomputed ones as recipes, as
    Model.trace_ids keeps them) or the exception its trace raised. A pass that fails is run again request by request,
    so a failure reaches only its own request. Requests whose RoPE frequencies depend on their length (dynamic
    scaling past the context) are traced one by one. on_layer(i): after layer i of the (first) pass."""
    lengths = [max(map(len, rows)) for _, _, rows in requests]
    same = len({tuple(rope.frequencies(model.config, n)[0].tolist()) for n in {max(lengths), *lengths}}) == 1
    if len(requests) > 1 and same:
        try:
            return build_traces(model, requests, on_layer=on_layer)
        except Exception:                                 # whose fault? each request alone says
            on_layer = None
    out = []
    for prompts, texts, rows in requests:
        try:
            out.append(model.trace_ids(rows, prompts=prompts, texts=texts, on_layer=on_layer))
        except Exception as e:
            out.append(e)
    return out
