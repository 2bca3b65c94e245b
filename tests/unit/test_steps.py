"""Progress reported by the work itself (ops.lab.steps): every step of a plan reported in order, the count of done
units rising by one per layer to the total, and each step's words present in both languages."""
from __future__ import annotations

import json

import pytest
import torch
from test_int8 import tiny_dense

from content import words
from ops.lab import atlas, precision
from ops.lab.steps import NAMES, Plan, Step


def _check_in_order(reports, plan_steps):
    """reports [(done, total, step, fields)]: each step begins (done at the units before it), then reports each unit,
    in the plan's order; done never falls and ends at total."""
    total = sum(u for _, u, _ in plan_steps)
    expected, base = [], 0
    for name, units, fields in plan_steps:
        expected += [(base + k, total, name, fields) for k in range(units + 1)]
        base += units
    assert reports == expected


def test_plan_reports_what_it_is_told_in_order():
    seen = []
    plan = Plan([Step("weights", 1, {"dtype": "x"}), Step("run", 3, {"dtype": "x"})], lambda *a: seen.append(a))
    plan.run(0, lambda: None)
    on_layer = plan.layers(1)
    for i in range(3):
        on_layer(i)
    _check_in_order(seen, [("weights", 1, {"dtype": "x"}), ("run", 3, {"dtype": "x"})])
    with pytest.raises(ValueError, match="nope"):
        Plan([Step("nope")])


def test_precision_report_reports_every_layer_of_every_set(monkeypatch):
    """float32, bfloat16, int8: each set's weights, then one unit per layer of its pass (the layers counted by the
    forward pass's own records); the report is the same as without a callback."""
    model = tiny_dense()
    monkeypatch.setattr(model, "encode_prompts", lambda p, chat=False: ([p], [p], [[1, 2, 3, 4, 5, 6]]))
    seen = []
    rep = precision.precision_report(model, "x", progress=lambda *a: seen.append(a))
    L = model.config.num_hidden_layers
    steps = [(k, u, {"dtype": d}) for d in ("float32", "bfloat16", "int8") for k, u in (("weights", 1), ("run", L))]
    _check_in_order(seen, steps)
    plain = precision.precision_report(model, "x")
    assert all(torch.equal(rep["resid_rel_err"][d], plain["resid_rel_err"][d]) for d in plain["resid_rel_err"])


def test_atlas_reports_the_run_the_maps_and_the_scores():
    model = tiny_dense()
    seen = []
    view = atlas.atlas_view(model, seed=0, n=5, progress=lambda *a: seen.append(a))
    L = model.config.num_hidden_layers
    _check_in_order(seen, [("atlas_run", L, {"n": 10}), ("atlas_maps", L, {}), ("atlas_scores", 1, {})])
    test = atlas.induction_trace(model, seed=0, n=5)        # the scores the page had before the steps were reported
    assert torch.equal(view["scores"]["induction"], atlas.scores_from_probs(atlas.head_maps(test, 0).double(),
                                                                           5)["induction"])


def test_a_trace_reports_each_layer_once_in_order():
    model = tiny_dense()
    layers = []
    model.trace_ids([[1, 2, 3]], on_layer=layers.append)
    assert layers == list(range(model.config.num_hidden_layers))


@pytest.mark.parametrize("lang", words.LANGS)
def test_every_step_has_words(lang):
    cat = json.loads((words.WORDS_DIR / f"waits.{lang}.json").read_text("utf-8"))
    assert set(NAMES) <= set(cat), set(NAMES) - set(cat)
