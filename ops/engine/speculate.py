"""Prompt-lookup speculative decoding: draft tokens copied from the text so far, verified in one pass.

When the last n tokens appeared earlier (in the prompt or in what was generated), the tokens that followed
them then are a cheap guess of what follows now. One forward pass over [last token, d drafted tokens] gives
the model's own greedy choice after every prefix; the draft is kept up to the first disagreement, and the
model's choice there is the next token. So one pass yields between 1 and d + 1 tokens, each exactly the token
plain greedy decoding would pick (up to the last bits of arithmetic a wider pass may round differently).
Greedy only: with sampling, acceptance needs the rejection rule of speculative sampling.
"""
from __future__ import annotations

import time

import torch

from ..errors import InputError
from .decode import Decoder, Generation, GenerationStep

DRAFTS = ("prompt-lookup",)
MAX_NGRAM, MAX_DRAFT = 3, 8        # the longest suffix looked up, the most tokens copied per pass


def lookup_draft(ids: list[int], max_ngram: int = MAX_NGRAM, max_draft: int = MAX_DRAFT) -> list[int]:
    """The tokens that followed the latest earlier occurrence of the longest suffix of ids (max_ngram tokens
    down to 1) that occurred before; [] when none did. At most max_draft tokens."""
    n_ids = len(ids)
    for n in range(min(max_ngram, n_ids - 1), 0, -1):
        tail = ids[n_ids - n:]
        for start in range(n_ids - n - 1, -1, -1):          # latest first: the most recent context is likeliest
            if ids[start:start + n] == tail:
                return ids[start + n:start + n + max_draft]
    return []


@torch.inference_mode()
def verify(dec: Decoder, draft: list[int]) -> tuple[list[GenerationStep], int]:
    """One pass over [last token] + draft after the cache: the greedy token after each prefix, kept while the
    draft agrees, then the model's own token. Rejected positions leave the cache. Returns (steps, accepted)."""
    t0 = time.perf_counter()
    past = dec.cache.length
    logits = dec.forward(torch.tensor([dec.token_ids[-1:] + draft]), last_only=False)[0]     # (1 + d, V)
    seconds = (time.perf_counter() - t0) / (len(draft) + 1)
    seen, steps, accepted = dec.prompt_ids + dec.token_ids, [], 0
    for j in range(len(draft) + 1):
        step = dec.pick(logits[j], seen, len(draft) + 1 if j == 0 else 0, "decode", seconds)
        steps.append(step)
        seen = seen + [step.token_id]
        if j == len(draft) or step.token_id != draft[j] or step.token_id in dec.eos:
            break
        accepted += 1
    keep = past + 1 + accepted                           # the last token and the accepted drafts have keys now
    dec.cache.length, dec.cache.positions = keep, dec.cache.positions[:, :keep]
    for s in steps:
        s.kv_tokens, s.kv_bytes = keep, dec.cache.nbytes
    return steps, accepted


def check_draft(draft: str, params) -> None:
    """InputError unless draft is on offer and the decoding is greedy."""
    if draft not in DRAFTS:
        raise InputError(f"draft = {draft!r}: the drafts on offer are {', '.join(DRAFTS)}")
    if not params.greedy:
        raise InputError("draft='prompt-lookup' is for greedy decoding (temperature 0): verifying a sampled token "
                         "needs speculative sampling's acceptance rule")


def draft_step(dec: Decoder, max_ngram: int = MAX_NGRAM, max_draft: int = MAX_DRAFT) -> list[GenerationStep]:
    """One forward pass of a drafted decoding: the prefill, a plain step when nothing can be copied, or a verifying
    pass over the copied tokens. The Decoder counts what was proposed and accepted; returns the new steps."""
    guess = lookup_draft(dec.prompt_ids + dec.token_ids, max_ngram, min(max_draft, dec.remaining - 1)) \
        if dec.steps else []
    if not guess:
        return [dec.step()]
    new, ok = verify(dec, guess)
    dec.proposed, dec.accepted = dec.proposed + len(guess), dec.accepted + ok
    for s in new:
        dec.record(s)
    return new


def generate_with_draft(dec: Decoder, draft: str = "prompt-lookup", on_token=None, max_ngram: int = MAX_NGRAM,
                        max_draft: int = MAX_DRAFT) -> Generation:
    """Run a Decoder to the end with prompt-lookup drafts; the Generation counts proposed and accepted drafts."""
    check_draft(draft, dec.params)
    dec.draft, dec.drafter = draft, draft_step
    while not dec.done:
        for s in draft_step(dec, max_ngram, max_draft):
            if on_token:
                on_token(s)
    return dec.result()
