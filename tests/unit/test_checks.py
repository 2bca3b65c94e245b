"""ops.lab.checks.compare: a NaN must fail a check; only the same infinity on both sides counts as equal."""
import math

import torch

from ops.lab import checks


def test_planted_nan_fails():
    ref = torch.tensor([1.0, 2.0, 3.0])
    ours = ref.clone()
    ours[1] = float("nan")                       # an operator that returned NaN at one position
    c = checks.compare("planted", ours, ref, tol=1e-3)
    assert math.isnan(c.max_diff) and not c.ok
    assert "✗" in c.text("en") and "✗" in c.text("zh")


def test_nan_in_reference_fails_too():
    ours = torch.tensor([0.0, 1.0])
    c = checks.compare("nan ref", ours, torch.tensor([0.0, float("nan")]), tol=1.0)
    assert not c.ok


def test_same_infinity_counts_as_equal():
    """A causal mask holds -inf above the diagonal on both sides: equal there, the rest is compared."""
    ninf = float("-inf")
    ref = torch.tensor([[0.5, ninf], [0.25, 0.75]])
    c = checks.compare("mask", ref + 1e-4, ref, tol=1e-3)
    assert c.ok and abs(c.max_diff - 1e-4) < 1e-6


def test_opposite_or_one_sided_infinity_fails():
    inf = float("inf")
    assert not checks.compare("opposite", torch.tensor([inf]), torch.tensor([-inf]), tol=1.0).ok
    assert not checks.compare("one side", torch.tensor([inf]), torch.tensor([0.0]), tol=1.0).ok


def test_a_real_difference_is_reported():
    c = checks.compare("off", torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]), tol=0.1)
    assert c.max_diff == 0.5 and not c.ok
