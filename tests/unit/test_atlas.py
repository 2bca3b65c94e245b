"""The head atlas on hand-built attention patterns whose heads are what they are by construction.

The atlas consumes only attention probabilities, so these patterns are built at that level (the model-level
construction, hand-set Qwen2 weights run through the real forward pass, is tests/unit/test_atlas_hand_built.py):
a (L=2, nh=4) stack of patterns, one previous-token head, one induction head, one sink head and one
uniform head, on a sequence of n tokens repeated. A model-level run checks shapes and ranges.
"""
from __future__ import annotations

import torch

from ops.lab import atlas
from tests.parity.test_parity_tiny import tiny_pair

N = 8


def pattern(kind: str, n: int = N) -> torch.Tensor:
    """(2n, 2n) causal attention of one head on a sequence of n tokens repeated twice."""
    S = 2 * n
    P = torch.zeros(S, S, dtype=torch.float64)
    for t in range(S):
        if kind == "previous":
            P[t, max(t - 1, 0)] = 1
        elif kind == "induction":
            P[t, t - n + 1 if t >= n else 0] = 1      # the token after the earlier copy; the first copy: a sink
        elif kind == "sink":
            P[t, 0] = 1
        elif kind == "self":
            P[t, t] = 1
        elif kind == "broad":
            P[t, :t + 1] = 1 / (t + 1)
    return P


def test_hand_built_heads_get_their_labels():
    kinds = [["previous", "sink", "broad", "self"], ["induction", "previous", "sink", "broad"]]
    P = torch.stack([torch.stack([pattern(k) for k in row]) for row in kinds])      # (2, 4, 2n, 2n)
    scores = atlas.scores_from_probs(P, N)
    for k, s in scores.items():
        assert s.shape == (2, 4) and 0 <= s.min() and s.max() <= 1, k
    labels, best = atlas.label_heads(scores)
    assert labels == kinds
    assert float(scores["induction"][1, 0]) == 1.0 and float(scores["previous"][0, 0]) == 1.0
    assert float(scores["induction"][0, 0]) < 0.2            # a previous-token head is no induction head
    assert atlas.label_counts(labels) == {"previous": 2, "induction": 1, "sink": 2, "self": 1, "broad": 2}
    assert best.shape == (2, 4) and (best > 0.5).all()


def test_mixed_head_is_labelled_by_its_strongest_score():
    P = (0.7 * pattern("induction") + 0.3 * pattern("sink"))[None, None]
    labels, best = atlas.label_heads(atlas.scores_from_probs(P, N))
    assert labels == [["induction"]] and abs(float(best[0, 0]) - 0.7) < 1e-6


def test_model_scores_shapes_and_ranges():
    model, _ = tiny_pair("qwen2")
    c = model.config
    scores = atlas.head_scores(model, n=6)
    assert set(scores) == set(atlas.KINDS)
    for s in scores.values():
        assert s.shape == (c.num_hidden_layers, c.num_attention_heads) and 0 <= s.min() and s.max() <= 1
    test = atlas.induction_trace(model, n=6)
    ids = test.token_ids[0].tolist()
    assert len(ids) == 12 and ids[:6] == ids[6:]
    prompt = model.trace_ids([[1, 2, 3, 4]])
    assert atlas.head_scores(model, prompt_trace=prompt, n=6)["induction"].equal(scores["induction"])
