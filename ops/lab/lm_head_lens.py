"""The most likely next token at every position, and the logit lens: the same question asked of every
residual-stream state (embedding, then each layer's output) through the final norm and the LM head.

Results are kept on the trace itself (Trace.memo) under (analysis name, row): computed once per trace and
row, dropped with the trace.
"""
from __future__ import annotations

import torch

from ..engine import functional as fn

LENS_WINDOW = 32   # positions: each costs (L + 1) LM-head products of width V, seconds each on a CPU
LENS_ROWS = 160    # rows per LM-head product in the lens: a (160, V) float32 buffer is 97 MB


def lens_start(trace, b: int) -> int:
    """First position the logit lens covers: the last LENS_WINDOW real tokens of row b."""
    return max(0, trace.lengths[b] - LENS_WINDOW)


def top_of_rows_(buf: torch.Tensor):
    """(ids, p_max) of each row of logits in buf (rows, V), in place (buf is overwritten): the top token and
    its softmax probability p_max = 1 / sum_j exp(l_j - l_max), with no (rows, V) temporaries."""
    best = buf.max(-1)
    p = 1.0 / buf.sub_(best.values[:, None]).exp_().sum(-1)
    return best.indices, p


def top_in_blocks(x: torch.Tensor, block: int, V: int, logits_into):
    """(ids, p_max) for every row of x, `block` rows at a time through one reused (block, V) buffer:
    logits_into(rows, out) writes those rows' logits into out and returns it."""
    buf = torch.empty(min(block, len(x)), V)
    ids, probs = [], []
    for rows in x.split(block):
        top = top_of_rows_(logits_into(rows, buf[:len(rows)]))
        ids.append(top[0])
        probs.append(top[1])
    return torch.cat(ids), torch.cat(probs)


def cached(trace, name: str, b: int, compute):
    """compute() once per (trace, analysis, row), kept with the trace (Trace.memo) under (name, b)."""
    return trace.memo((name, b), compute)


def top_next(trace, b: int):
    """The most likely next token and its probability at every real position of row b: (ids [n], probs [n]).
    Computed once per (trace, row) in blocks of 64 positions."""
    def compute():
        logits = trace.logits[b, :trace.lengths[b]]                               # (n, V)
        return top_in_blocks(logits, 64, logits.shape[1], lambda rows, out: out.copy_(rows))

    return cached(trace, "top_next", b, compute)


def logit_lens(model, trace, b: int):
    """Top token and its probability at every residual-stream state (embed + each layer) for the last
    LENS_WINDOW positions of row b (from lens_start).

    Returns (ids [L+1, w], probs [L+1, w]), once per (trace, row). All states' positions go through the LM
    head LENS_ROWS rows at a time into one reused buffer: one product per state would read the whole head
    once per state, and a fresh (w, V) product per state stays resident."""
    def compute():
        n, start = trace.lengths[b], lens_start(trace, b)
        w_norm = model.w("model.norm.weight").float().cpu()
        w_head = model.w("lm_head.weight").float().cpu()
        states = trace.residual_stream()
        with torch.inference_mode():
            h = torch.cat([fn.rms_norm(x[b, start:n].float(), w_norm, model.config.rms_norm_eps) for x in states])
            ids, probs = top_in_blocks(h, LENS_ROWS, w_head.shape[0],                   # lm_head: h W^T
                                       lambda rows, out: torch.matmul(rows, w_head.T, out=out))
        return ids.view(len(states), n - start), probs.view(len(states), n - start)

    return cached(trace, "logit_lens", b, compute)
