"""Interview page, round two: every demo behind its button on the tiny app model, in both languages: each draws its
table with no error, and every row that is checked against its reference shows ✓ (tree = plain greedy, each LoRA
row = its merged model, the recomputed request = the uninterrupted one)."""
from __future__ import annotations

import pytest
from apptest_utils import no_exception, open_tab, page_ok, texts

from content.words import say

PAGE = "interview"
TABS = "tabs-interview-interview2"
DEMOS = (("tab_tree", "tree", "col_passes"), ("tab_lora", "lora", "col_diff"), ("tab_quant4", "quant4", "col_agree"),
         ("tab_fp8", "fp8", "col_block"), ("tab_step", "step", "col_graph"), ("tab_preempt", "preempt", "row_swap"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_round_two_runs_every_button(tiny_app_dense, lang):
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, tables=2, checks=1)
    assert say("interview2.round_two", lang) in texts(at)
    for tab, button, word in DEMOS:
        open_tab(at, TABS, say(f"interview2.{tab}", lang))
        at.button(key=f"iv2-{button}").click().run(timeout=600)
        no_exception(at)
        assert not at.error and say(f"interview2.{word}", lang) in texts(at), tab
        assert "✗" not in texts(at), tab
    open_tab(at, TABS, say("interview2.tab_computed", lang))           # the sums from the configs, no button
    no_exception(at)
    assert "Little" in texts(at) and any("→ **3**" in m.value for m in at.markdown)
    at.number_input(key="iv2-qps").set_value(20.0).run(timeout=120)
    assert not at.exception and any("→ **5**" in m.value for m in at.markdown)      # twice the traffic: 3 -> 5 GPUs
