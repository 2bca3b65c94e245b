"""Interview page, round two: every demo behind its button on the tiny app model, in both languages: each draws its
table with no error, and every row that is checked against its reference shows ✓ (tree = plain greedy, each LoRA
row = its merged model, the recomputed request = the uninterrupted one)."""
from __future__ import annotations

import pytest
from apptest_utils import no_exception, open_page, open_tab, page_ok, texts

import ops
from content.words import say
from ops.lab import interview_lora_batch as lb
from ui.interview2 import LORA_PROMPTS, LORA_ROWS, LORA_TOKENS
from ui.session import DEFAULTS

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


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_split_kv_checks_stay_with_their_picture_and_lora_names_its_prompts(tiny_app_dense, lang):
    """The split-KV checks (the top picture's) are drawn before round two's header, so no round-two tab shows them;
    the Many-LoRAs tab says its prompts are its own and shows each row's text whole (its tokens decoded again)."""
    at = open_page(PAGE, tiny_app_dense, lang=lang)
    no_exception(at)
    checks_above_round_two(at, lang)
    open_tab(at, TABS, say("interview2.tab_lora", lang))
    checks_above_round_two(at, lang)
    note = say("interview_demos.lora_prompts", lang, n=LORA_TOKENS)
    assert any(m.value.startswith(note) for m in at.markdown)
    at.button(key="iv2-lora").click().run(timeout=600)
    no_exception(at)
    # the reference: the same batch run again straight from ops (greedy, so deterministic), decoded in full
    model = ops.load_model(tiny_app_dense, device=DEFAULTS["device"], dtype=DEFAULTS["dtype"])
    again = lb.lora_batch(model, list(LORA_PROMPTS), list(LORA_ROWS), new_tokens=LORA_TOKENS)
    page = texts(at)
    for x in again["rows"]:
        assert " ".join(x["text"].split()) in page, x["text"]             # the whole text, not its first characters


def checks_above_round_two(at, lang: str):
    """Every split-KV check box is drawn before round two's header: none sits under a round-two tab."""
    order = [str(getattr(x, "value", "")) for x in at.main]          # every element, in the order drawn
    head = order.index(say("interview2.round_two", lang))
    split = [k for k, v in enumerate(order) if "attn.context" in v]
    assert split and max(split) < head, (split, head)
