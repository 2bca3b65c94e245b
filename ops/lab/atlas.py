"""Head atlas: every attention head scored on what its attention pattern does, and labelled by the strongest.

Scores, each in [0, 1], from a head's attention probabilities P (S x S, rows = queries), averaged over
query positions t >= 1 (position 0 can only attend to itself):
  previous   P[t, t-1]                          attends to the token just before
  induction  P[t, t-n+1] for t in the 2nd copy  on n random tokens repeated twice: attends to the token that
                                                followed the current token's earlier occurrence (the standard test)
  sink       P[t, 0]                            parks its attention on the first token
  self       P[t, t]                            attends to itself (the diagonal)
  broad      entropy(P[t, :t+1]) / log(t+1)     spreads its attention evenly
The test sequence is random ordinary tokens (seeded), so previous/sink/self/broad are measured there too, or
on a prompt trace when one is given. The scores consume only attn.probs, so scores_from_probs() can be fed
hand-built patterns (tests/unit/test_atlas.py).
"""
from __future__ import annotations

import torch

from ..engine.trace import Trace
from ..errors import InputError
from .steps import Plan, Step

KINDS = ("previous", "induction", "sink", "self", "broad")
TOKEN_RANGE = (1000, 20000)         # ordinary BPE pieces of a Qwen vocabulary (no specials, no bytes)


def induction_ids(vocab_size: int, seed: int = 0, n: int = 32) -> list[int]:
    """n seeded random token ids, then the same n again (2n in all)."""
    if not isinstance(n, int) or n < 2:
        raise InputError(f"n = {n!r}: the induction test needs at least 2 random tokens")
    lo, hi = TOKEN_RANGE if vocab_size > TOKEN_RANGE[1] else (0, vocab_size)
    g = torch.Generator().manual_seed(seed)
    first = torch.randint(lo, hi, (n,), generator=g).tolist()
    return first + first


def induction_trace(model, seed: int = 0, n: int = 32, on_layer=None) -> Trace:
    """The test sequence's trace (attention probabilities of every layer, the ids and the logits); on_layer(i)
    after layer i."""
    return model.trace_ids([induction_ids(model.config.vocab_size, seed, n)],
                           capture=["tokens.ids", "layers.*.attn.probs", "logits"], on_layer=on_layer)


def _probs(trace: Trace, row: int = 0) -> torch.Tensor:
    """(L, nh, n, n) float64 attention probabilities of row `row`'s real tokens."""
    n = trace.lengths[row]
    return torch.stack([trace.attention_probs(i)[row, :, :n, :n].double()
                        for i in range(trace.config.num_hidden_layers)])


def pattern_scores(P: torch.Tensor) -> dict[str, torch.Tensor]:
    """previous, sink, self, broad from P (..., n, n): each (...,), in [0, 1]."""
    n = P.shape[-1]
    if n < 2:
        raise InputError("scoring attention patterns needs at least 2 tokens")
    t = torch.arange(1, n)
    rows = P[..., 1:, :]                                                   # (..., n-1, n) queries t >= 1
    ent = -(rows.clamp_min(1e-30).log() * rows).sum(-1)                   # (..., n-1)
    broad = ent / torch.log(t.double() + 1)
    return {"previous": P[..., t, t - 1].mean(-1), "sink": rows[..., 0].mean(-1),
            "self": P[..., t, t].mean(-1), "broad": broad.clamp(0, 1).mean(-1)}


def induction_score(P: torch.Tensor, n: int) -> torch.Tensor:
    """P (..., 2n, 2n) on a sequence repeated twice: mean over t in the second copy of P[t, t - n + 1]."""
    t = torch.arange(n, 2 * n - 1)         # the last query's target t - n + 1 = n would be itself: skip it
    return P[..., t, t - n + 1].mean(-1)


def scores_from_probs(P: torch.Tensor, n: int, prompt_P: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """The five scores from P (L, nh, 2n, 2n) on the repeated sequence (and prompt_P (L, nh, m, m) if given,
    for previous/sink/self/broad): name -> (L, nh) float32 in [0, 1]."""
    out = pattern_scores(P if prompt_P is None else prompt_P)
    out["induction"] = induction_score(P, n)
    return {k: out[k].clamp(0, 1).float() for k in KINDS}


def head_scores(model, prompt_trace: Trace | None = None, seed: int = 0, n: int = 32) -> dict[str, torch.Tensor]:
    """name -> (L, nh) scores in [0, 1] for every head of the model (see the module docstring)."""
    test = induction_trace(model, seed, n)
    return scores_from_probs(_probs(test), n, None if prompt_trace is None else _probs(prompt_trace))


def label_heads(scores: dict[str, torch.Tensor]) -> tuple[list[list[str]], torch.Tensor]:
    """Each head's label = its strongest score: (labels L x nh, best (L, nh) that score)."""
    stack = torch.stack([scores[k] for k in KINDS])                        # (5, L, nh)
    best, idx = stack.max(0)
    return [[KINDS[int(j)] for j in row] for row in idx], best


def label_counts(labels: list[list[str]]) -> dict[str, int]:
    """label -> number of heads, every kind listed (0 when none)."""
    flat = [x for row in labels for x in row]
    return {k: flat.count(k) for k in KINDS}


def head_maps(trace, b: int, on_layer=None) -> torch.Tensor:
    """(L, nh, n, n): every head's attention probabilities on row b's real tokens; on_layer(i) after layer i (the
    probabilities are recipes, recomputed as they are read)."""
    n, maps = trace.lengths[b], []
    for i in range(trace.config.num_hidden_layers):
        maps.append(trace.attention_probs(i)[b, :, :n, :n].float())
        if on_layer is not None:
            on_layer(i)
    return torch.stack(maps)


def atlas_view(model, seed: int = 0, n: int = 32, progress=None) -> dict:
    """The head atlas page's data for one model (it does not depend on the prompt): scores, labels, best score and
    counts, the test sequence's ids and every head's attention on it (L, nh, 2n, 2n). progress: ops.lab.steps, the
    steps "atlas_run" and "atlas_maps" one unit per layer, then "atlas_scores"."""
    L = model.config.num_hidden_layers
    plan = Plan([Step("atlas_run", L, {"n": 2 * n}), Step("atlas_maps", L), Step("atlas_scores")], progress)
    test = induction_trace(model, seed, n, plan.layers(0))
    maps = head_maps(test, 0, plan.layers(1))                                  # (L, nh, 2n, 2n)

    def score():
        scores = scores_from_probs(maps.double(), n)
        labels, best = label_heads(scores)
        return dict(scores=scores, labels=labels, best=best, counts=label_counts(labels),
                    test_ids=test.token_ids[0, :test.lengths[0]].tolist(), test_probs=maps)
    return plan.run(2, score)


def top_heads(scores: dict) -> dict:
    """score name -> (value, layer, head) of the highest-scoring head for each (L, nh) score map."""
    out = {}
    for k, z in scores.items():
        flat = int(z.argmax())
        out[k] = (float(z.flatten()[flat]), flat // z.shape[1], flat % z.shape[1])
    return out
