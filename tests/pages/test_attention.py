"""Attention page: every layer and head, scores / mask / probs, RoPE, GQA; pickers from a shared link."""
from __future__ import annotations

import pytest
from apptest_utils import no_exception, page_ok, texts
from page_table import expect

PAGE = "attention"
EXPECT = expect(PAGE)


@pytest.mark.real
def test_attention_pickers_from_url():
    at = page_ok(PAGE, query=dict(layer="23", head="13", pair="31"), **EXPECT)
    assert at.slider(key="head").value == 13
    assert "layers.23.attn.probs" in texts(at)                                # the main map is that layer's
    assert any("attn.probs[0, 13]" in s.value for s in at.success)         # and the check that head's


HAND = {"zh": ("动手算一遍", "RoPE 像钟表的指针", "三个 token 的一行注意力"),
        "en": ("Do it by hand", "RoPE as clock hands", "One attention row from three tokens")}


def _dots(at) -> list[float]:
    """The two dot products of the RoPE block's worked lines: (m, n) and (m + s, n + s)."""
    code = next(c.value for c in at.get("code") if "R(mθ)" in c.value)
    return [float(line.rsplit("=", 1)[1]) for line in code.splitlines() if "(m=" in line]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_attention_by_hand_blocks(tiny_app_dense, lang):
    """The plain tab's worked examples render in both languages, follow their widgets, and never raise."""
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, **dict(EXPECT, charts=5), text=HAND[lang])
    a, b = _dots(at)
    assert a == b                                                   # moved together: the same dot product
    at.slider(key="hand_rope_theta").set_value(2.5)
    at.slider(key="hand_rope_m").set_value(12)
    at.slider(key="hand_rope_s").set_value(0)
    at.radio(key="hand_attn_i").set_value(0)                        # the first query sees only itself
    at.run()
    no_exception(at)
    a, b = _dots(at)
    assert a == b
    assert "−∞" in texts(at)


def test_merged_tokens_and_slider_ranges(tiny_app_dense):
    """The attention map's rows are tokens: a note says "因为她" is one, so "她" has no row; each picker shows its
    range at rest, from the model (the tiny one: 2 layers, 4 heads)."""
    at = page_ok(PAGE, source=tiny_app_dense, prompt="小明把书借给了小红，因为她", **EXPECT)
    assert any("“因为她”" in c.value and "“她”" in c.value for c in at.caption), [c.value for c in at.caption]
    assert at.slider(key="layer").label == "层 i (0…1)" and at.slider(key="head").label.endswith("(0…3)")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_scores_say_why_their_size_does_not_matter(tiny_app_dense, lang):
    """Beside the raw scores (the fold scores -> mask -> probs), one sentence: a constant added to a row changes
    no probability (softmax is shift-invariant); the differences within a row do."""
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, **EXPECT)
    want = {"zh": ("加上同一个数", "softmax 的结果完全不变", "分数之间的差"),
            "en": ("adding the same number to a whole row", "leaves softmax unchanged", "differences within a row")}
    captions = [c.value for c in at.caption]
    assert any(all(w in c for w in want[lang]) for c in captions), captions


def test_an_example_prompt_fills_the_prompt_box(tiny_app_dense):
    """Issue 42: the sidebar's curated prompts fill the prompt box; the plain text points at that sentence's row."""
    from content.prompts import get

    at = page_ok(PAGE, source=tiny_app_dense, **EXPECT)
    at.sidebar.selectbox(key="w_example").select_index(1).run()          # the second: a repeated name
    no_exception(at)
    assert at.session_state["prompt_text"] == get("induction").prompt("zh")
    assert at.sidebar.text_area(key="w_prompt_text").value == get("induction").prompt("zh")
    # the plain text's pointer (plain first) names the live prompt's last token, not the pronoun example's 她
    import tokenizers
    tok = tokenizers.Tokenizer.from_file(f"{tiny_app_dense}/tokenizer.json")
    last = tok.decode([tok.encode(get("induction").prompt("zh")).ids[-1]])
    plain = next(m.value for m in at.markdown if "最下面一行" in m.value)
    assert f"“{last}”" in plain and "她" not in plain, plain


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_predict_first_hides_where_the_head_looks(tiny_app_dense, lang):
    """With the switch on: which key does the chosen head's last query weight most? The head's map, the grid and
    the scores fold are absent before the guess (the shapes and folds below still draw), present after; the
    verdict's answer is transformers' own attention (eager) argmax."""
    from apptest_utils import no_exception, open_page
    from predict_utils import attention_top_key, commit, question, right_answer, verdicts

    prompt, layer, head = "I like shanghai and I like", 1, 2
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, predict="1", layer=str(layer),
                   head=str(head))
    no_exception(at)
    ids = lambda: {c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")}      # noqa: E731
    radio = question(at, PAGE, "key")
    assert radio is not None and not {"probs", "grid", "raw"} & ids(), "the answer is shown before the guess"
    assert at.dataframe and not verdicts(at)                                          # the shapes table is there
    options = list(radio.options)
    assert [int(o.split(":")[0]) for o in options] == sorted(int(o.split(":")[0]) for o in options)
    guess = commit(at, PAGE, "key", lang)
    no_exception(at)
    assert {"probs", "grid"} <= ids(), "the head's map is missing after the guess"
    [verdict] = verdicts(at)
    answer = right_answer(verdict, guess, options)
    assert int(answer.split(":")[0]) == attention_top_key(tiny_app_dense, prompt, layer, head)


def test_predict_first_keeps_prompt_tokens_plain(tiny_app_dense):
    """Tokens of the learner's prompt in the question, options and verdict never become Markdown, math or a link:
    every *, $, _, [ and ] there comes escaped."""
    import re

    from apptest_utils import no_exception, open_page
    from predict_utils import commit, question, verdicts

    at = open_page(PAGE, source=tiny_app_dense, prompt="a *b* $x$ [c](d) _e_", lang="en", predict="1")
    no_exception(at)
    radio = question(at, PAGE, "key")
    asked = [m.value for m in at.markdown if "which key position" in m.value]
    commit(at, PAGE, "key", "en")
    shown = asked + list(radio.options) + verdicts(at)
    assert len(shown) > 2 and any("$" in s for s in shown)
    for s in shown:
        assert not re.search(r"(?<!\\)[*$_\[\]]", s.replace("**", "", 2) if s.startswith("**") else s), s


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_plain_text_names_the_live_last_token(tiny_app_dense, lang):
    """The plain text that points at the chart speaks of the live prompt: with a prompt without 她 / she it names
    neither, and it names the prompt's own last token as the tokenizer (the tokenizers library) decodes it."""
    import tokenizers
    from apptest_utils import no_exception, open_page, open_tab

    prompt = "我明天要去北京参加面试，我觉得"
    tok = tokenizers.Tokenizer.from_file(f"{tiny_app_dense}/tokenizer.json")
    last = tok.decode([tok.encode(prompt).ids[-1]])
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang)
    open_tab(at, "explain-attention", "白话版" if lang == "zh" else "Plain language")
    no_exception(at)
    [plain] = [m.value for m in at.markdown if ("最下面一行" in m.value or "bottom row" in m.value)]
    assert f"“{last}”" in plain, plain
    assert "她" not in plain and "she" not in plain.lower().replace("share", ""), plain
