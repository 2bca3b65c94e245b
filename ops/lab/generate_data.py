"""The Generate page's numbers from a decoding: per-step time and KV cache bytes (app_pages/generate.py)."""
from __future__ import annotations

import torch

from ..arith import costs


def decode_summary(decoder) -> dict:
    """A decoding so far (ops.engine.decode.Decoder): per step the time (ms) and the KV cache's bytes, the prefill and
    mean decode time, and the KV bytes one token adds in the cache's dtype (ops.arith.costs.kv_bytes_per_token)."""
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


def step_candidates(step, n: int = 8) -> dict:
    """One generated step's (ops.engine.decode.GenerationStep) top n candidates by raw logit, the chosen one put in
    the last place when it ranks lower: {ids, stages (each stage's values at them, tensors (n,), raw_probs the
    model's own softmax), chosen}, what viz.sampling.candidates_chart draws."""
    keep = list(range(min(n, len(step.candidates))))
    j = step.candidates.index(step.token_id)
    if j not in keep:
        keep[-1] = j
    return dict(ids=[step.candidates[x] for x in keep], chosen=step.token_id,
                stages={k: torch.tensor([v[x] for x in keep], dtype=torch.float32) for k, v in step.stages.items()})


def preview_vs_run(trace, decoder) -> dict | None:
    """The first generated token's model probability (T = 1) two ways: in the preview, from the trace's logits (the
    loaded weights), and in the decoding's first step (the weights it decodes with: the same, bf16 or int8).
    None before the first step or when the trace is not of this prompt."""
    if not decoder.steps or trace.token_ids[0, :trace.lengths[0]].tolist() != list(decoder.prompt_ids):
        return None
    step = decoder.steps[0]
    preview = float(torch.softmax(trace.logits[0, trace.lengths[0] - 1].float(), -1)[step.token_id])
    run = step.stages["raw_probs"][step.candidates.index(step.token_id)]
    return dict(token=step.token_id, preview=preview, run=run)
