"""What the predict-first questions ask, computed from the running model: the right answer and a handful of
options for each (ui/predict.py gates a page section behind them; content/predict.py words them).

Every function returns plain data: `answer` (one of `options`), `options` in a fixed order that does not depend
on which one is right (numbers ascending, ablations in the page's order), and what the reveal points at.
"""
from __future__ import annotations

import random

import torch

from . import experiments_edits
from .interview import greedy_rows
from .lm_head_lens import lens_start, logit_lens, top_next

ABLATIONS = ("head", "attn", "mlp", "norope")      # Experiments' ablations of one layer, in the page's order


def spread(n: int, answer: int, k: int = 5, seed: int = 0) -> list[int]:
    """k of range(n) spread over it, one of them `answer`; ascending. Each of an even grid's points moves by a
    seeded jitter (up to a third of the step) and the one nearest `answer` becomes it, so the right option is
    neither the middle of a cluster around it nor the one point off a regular grid."""
    if n <= k:
        return list(range(n))
    rng, step = random.Random(seed), (n - 1) / (k - 1)
    grid = sorted({min(n - 1, max(0, round(x * step + rng.uniform(-step / 3, step / 3)))) for x in range(k)})
    nearest = min(grid, key=lambda g: (abs(g - answer), g))
    out = sorted(set(grid) - {nearest} | {answer})
    return sorted(out + [x for x in range(n) if x not in out][:k - len(out)])      # jitter may merge two


def lens_first_top1(model, trace, b: int) -> dict:
    """The first residual state (row 0 = the embedding, row r = layer r - 1's output) whose logit-lens top-1 at
    row b's last real position is the model's own top-1 there. The last layer's lens is the logits themselves, so
    there always is one. Returns answer (row), options (rows), position, final_id, rows (each state's top-1)."""
    n = trace.lengths[b]
    lens_ids = logit_lens(model, trace, b)[0]                         # (L + 1, w) from lens_start
    final_id = int(top_next(trace, b)[0][n - 1])
    col = lens_ids[:, n - 1 - lens_start(trace, b)].tolist()
    row = next(r for r, x in enumerate(col) if x == final_id) if final_id in col else len(col) - 1
    return dict(answer=row, options=spread(len(col), row, seed=final_id), position=n - 1, final_id=final_id, rows=col)


def top_key(probs_row: torch.Tensor, n: int, k: int = 5) -> dict:
    """Where one query row of an attention map (NaN = masked) puts the most weight among keys 0..n-1: answer
    (key position), options (the k keys with the most weight, ascending by position, so the ranking does not
    show), weight (the answer's probability)."""
    w = torch.nan_to_num(probs_row[:n].float(), nan=-1.0)
    ranked = w.argsort(descending=True, stable=True)[:min(k, n)].tolist()
    return dict(answer=ranked[0], options=sorted(ranked), weight=float(w[ranked[0]]))


def strongest_ablation(model, base, ids: list[int], s: int, target: int, layer: int, head: int | None,
                       mode: str = "zero") -> dict:
    """Which of ABLATIONS at `layer` (head `head` replaced by `mode`; no head ablation when head is None) moves
    the probability of `target` after position s the most (|Δp|). Runs the row once per ablation (logits only).
    Returns answer (kind), options (the kinds, in ABLATIONS' order), before (p), after {kind: p}."""
    before = float(torch.softmax(base.logits[0, s].float(), -1)[target])
    kinds = [k for k in ABLATIONS if k != "head" or head is not None]
    after = {}
    for kind in kinds:
        spec = experiments_edits.build(kind, model.config, layer, dict(h=head, mode=mode), reference=base)
        run = model.trace_ids([ids], edits=spec, capture=("logits",))
        after[kind] = float(torch.softmax(run.logits[0, s].float(), -1)[target])
    answer = max(kinds, key=lambda k: abs(after[k] - before))
    return dict(answer=answer, options=kinds, before=before, after=after)


PARTS = 4          # the answer's ranges of generated tokens: "never" or one of PARTS equal stretches


def greedy_parting(model, ids: list[int], new_tokens: int = 16) -> dict | None:
    """Greedy decoding of one row on the model's own float32 weights (eager) and on the bfloat16 copy (SDPA):
    where the two token streams first differ. None when the model is not float32 (no second format to compare).
    Returns answer ("never" or a range index 0..PARTS-1), options, ranges [(first, last) token numbers, from 1],
    part (0-based index of the first differing token, or None), f32 / bf16 (token ids)."""
    if model.dtype != torch.float32:
        return None
    f32 = greedy_rows(model, [ids], new_tokens, "eager")[0]
    bf16 = greedy_rows(model, [ids], new_tokens, "bf16")[0]
    part = next((k for k, (x, y) in enumerate(zip(f32, bf16)) if x != y), None)
    edges = [round(j * new_tokens / PARTS) for j in range(PARTS + 1)]
    ranges = [(edges[j] + 1, edges[j + 1]) for j in range(PARTS)]
    answer = "never" if part is None else next(j for j, (a, z) in enumerate(ranges) if a <= part + 1 <= z)
    return dict(answer=answer, options=["never", *range(PARTS)], ranges=ranges, part=part, f32=f32, bf16=bf16,
                new_tokens=new_tokens)
