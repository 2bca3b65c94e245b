"""ops/lab/predict_data.py: the predict-first options hold the answer, in an order that does not give it away."""
from __future__ import annotations

import math

import torch

from ops.lab import predict_data


def test_spread_always_holds_the_answer_in_ascending_order():
    for n in range(1, 30):
        for answer in range(n):
            for seed in range(4):
                options = predict_data.spread(n, answer, seed=seed)
                assert answer in options and options == sorted(set(options)) and len(options) == min(n, 5)


def test_spread_does_not_put_the_answer_in_a_fixed_place():
    """Over many answers the right option is sometimes first, sometimes last, sometimes in between."""
    places = {predict_data.spread(25, a, seed=a).index(a) for a in range(25)}
    assert places == {0, 1, 2, 3, 4}


def test_top_key_hand_worked_row():
    """A query row [0.1, 0.6, 0.3, masked]: key 1 gets the most; options by position, not by weight."""
    row = torch.tensor([0.1, 0.6, 0.3, math.nan])
    q = predict_data.top_key(row, 3, k=5)
    assert q["answer"] == 1 and q["options"] == [0, 1, 2] and abs(q["weight"] - 0.6) < 1e-7
    q = predict_data.top_key(torch.tensor([0.05, 0.02, 0.4, 0.12, 0.11, 0.3]), 6, k=3)      # the three heaviest: 2, 5, 3
    assert q["answer"] == 2 and q["options"] == [2, 3, 5]
