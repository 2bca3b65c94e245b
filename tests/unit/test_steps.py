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


def _check_in_order(reports, plan_steps, every=("run", "trace", "atlas_run", "atlas_maps")):
    """reports [(done, total, step, fields)]: the plan's steps in its order, each beginning at the units before it
    and ending at its last unit, done never falling, ending at total; a forward pass's steps (`every`) report each
    unit (layer) in turn, the others (a weight copy, reported in shares of its work) at least their start and end."""
    total = sum(u for _, u, _ in plan_steps)
    assert {r[1] for r in reports} == {total}
    dones = [r[0] for r in reports]
    assert dones == sorted(dones) and dones[-1] == total
    base, k = 0, 0
    for name, units, fields in plan_steps:
        mine = []
        while k < len(reports) and reports[k][2] == name and reports[k][3] == fields and \
                (not mine or reports[k][0] > mine[-1]) and reports[k][0] <= base + units:
            mine.append(reports[k][0])
            k += 1
        assert mine[0] == base and mine[-1] == base + units, (name, fields, mine)
        if name in every:
            assert mine == list(range(base, base + units + 1)), (name, mine)
        base += units
    assert k == len(reports), reports[k:]


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
    """float32, bfloat16, int8: each set's weights (the copies made here, reported as they are made), then one unit
    per layer of its pass (counted by the forward pass's own records); the report is the same without a callback."""
    model = tiny_dense()
    monkeypatch.setattr(model, "encode_prompts", lambda p, chat=False: ([p], [p], [[1, 2, 3, 4, 5, 6]]))
    seen = []
    rep = precision.precision_report(model, "x", progress=lambda *a: seen.append(a))
    L = model.config.num_hidden_layers
    steps = [(k, L, {"dtype": d}) for d in ("float32", "bfloat16", "int8") for k in ("weights", "run")]
    _check_in_order(seen, steps)
    copies = [r[0] for r in seen if r[2] == "weights" and r[3]["dtype"] == "int8"]
    assert copies == list(range(2 * 2 * L, 2 * 2 * L + L + 1)), copies     # the int8 copy: every layer quantized
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
