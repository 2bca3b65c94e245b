"""LM head page: final norm -> logits over the vocabulary, the logit lens agreeing with the logits."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from apptest_utils import page_ok

PAGE = "lm_head"


def check_lm_head(at):
    assert any("lens" in s.value for s in at.success)          # the last layer's lens top-1 == the logits' top-1
    assert not any("✗" in e.value for e in at.error)


@pytest.mark.real
def test_lm_head_real():
    check_lm_head(page_ok(PAGE))


def test_lm_head_tiny(tiny_app_dense):
    check_lm_head(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


def test_lm_head_tiny_moe(tiny_app_moe):
    check_lm_head(page_ok(PAGE, source=tiny_app_moe))


def test_predict_first_hides_the_answer_until_a_guess(tiny_app_dense):
    """Predict first (ui/predict.py): with the switch on, the next-token chart and tables are absent and the page
    stops at the question; after a committed guess the verdict names the model's top-1 and the chart is there."""
    from apptest_utils import no_exception, open_page

    for lang, switch, commit, word in (("en", "Predict first", "Commit and reveal", "model's answer"),
                                       ("zh", "先猜再看", "确定，揭晓", "模型的答案")):
        at = open_page(PAGE, source=tiny_app_dense, lang=lang, folds=False)
        assert any(c.proto.id.endswith("lm-top") for c in at.get("plotly_chart"))     # switch off: as before
        [toggle] = [x for x in at.toggle if x.label == switch]
        toggle.set_value(True).run()
        no_exception(at)
        assert not any(c.proto.id.endswith("lm-top") for c in at.get("plotly_chart")), "answer shown before the guess"
        assert not at.dataframe
        [radio] = [r for r in at.radio if r.label in ("Your guess", "你的猜测")]
        guess = radio.options[0]
        radio.set_value(guess)
        [b for b in at.button if b.label == commit][0].click().run()
        no_exception(at)
        [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith("lm-top")]
        bar = json.loads(chart.proto.spec)["data"][0]
        x = bar["x"]
        if isinstance(x, dict):                              # Plotly's binary array encoding
            x = np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"])
        top1 = bar["y"][int(np.argmax(x))]                   # the longest bar: the model's answer
        [verdict] = [v.value for v in [*at.success, *at.warning] if guess in v.value and "✓" not in v.value]
        assert top1 in verdict and (guess == top1) == verdict.startswith(("Right", "猜对了"))
        assert guess == top1 or word in verdict


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_predict_first_gates_the_logit_lens(tiny_app_dense, lang):
    """With the switch on, the lens fold asks at which row the lens first ranks the final answer top-1: no lens map
    before the guess, the map and a verdict after; the verdict's answer is transformers' (hidden states through
    its own final norm and LM head). The rest of the page is drawn meanwhile."""
    from apptest_utils import no_exception, open_page, unfold
    from predict_utils import commit, lens_first_row, question, right_answer, verdicts

    prompt = "I like shanghai"
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, predict="1")
    commit(at, PAGE, None, lang)                                   # the next-token question comes first
    unfold(at)
    no_exception(at)
    lens = lambda: [c for c in at.get("plotly_chart") if c.proto.id.endswith("-lens")]     # noqa: E731
    radio = question(at, PAGE, "lens")
    assert radio is not None and not lens(), "the lens map is shown before the guess"
    assert len(verdicts(at)) == 1 and at.dataframe                   # the next token's verdict; the tables drawn
    options = list(radio.options)
    assert options == sorted(options, key=lambda o: -1 if o == "embed" else int(o[1:]))   # layer order, not rank
    guess = commit(at, PAGE, "lens", lang)
    no_exception(at)
    assert lens(), "the lens map is missing after the guess"
    [verdict] = [v for v in verdicts(at) if ("Look at the column" if lang == "en" else "看图中位置") in v]
    assert right_answer(verdict, guess, options) == lens_first_row(tiny_app_dense, prompt)


def test_top_n_set_in_session_state_is_the_sliders_only_value(monkeypatch, tiny_app_dense):
    """A replayed lesson sets lm_topn in session state (ui/lesson_replay.py, in the Next button's callback); the
    slider must take its value from there alone: given a default value as well, Streamlit logs "created with a
    default value but also had its value set via the Session State API". Every lm_topn slider call is recorded."""
    import streamlit as st
    from apptest_utils import no_exception, open_page

    from classroom import lessons
    from ui.pickers import TOP_N

    calls, slider = [], st.slider

    def spy(label, *args, **kw):
        if kw.get("key") == "lm_topn":
            calls.append((args, kw))
        return slider(label, *args, **kw)

    monkeypatch.setattr(st, "slider", spy)
    lesson = lessons.load(lessons.shipped()["attention-deep-dive"])
    k = [s.page for s in lesson.steps].index(PAGE)
    at = open_page("tour", source=tiny_app_dense, lang="en", folds=False)
    at.selectbox(key="lesson_choice").set_value("attention-deep-dive").run()
    [b for b in at.button if b.key == "lesson_start"][0].click().run()
    for _ in range(k):
        [b for b in at.button if b.key == "lesson_next"][0].click().run()
        no_exception(at)
    assert at.session_state["_page"] == PAGE and calls
    assert all(len(args) <= 2 and "value" not in kw for args, kw in calls), calls      # (lo, hi) and the key only
    [drawn] = [s for s in at.slider if s.key == "lm_topn"]
    want = max(TOP_N[0], min(TOP_N[1], lesson.steps[k].pickers["top"]))
    assert (drawn.min, drawn.max, drawn.value) == (TOP_N[0], TOP_N[1], want)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_predict_first_switched_on_at_attention_holds_at_lm_head(tiny_app_dense, lang):
    """One switch for the session: turned on at Attention (no link parameter), it is on at the LM head too, where the
    answer chart (the next-token bars) is absent until a guess is committed; ?predict=1 follows it into the URL."""
    from apptest_utils import no_exception, open_page
    from predict_utils import SWITCH, commit, question

    at = open_page("attention", source=tiny_app_dense, prompt="我明天要去北京参加面试，我觉得", lang=lang, folds=False)
    [toggle] = [x for x in at.toggle if x.label == SWITCH[lang]]
    assert not toggle.value
    toggle.set_value(True).run()
    no_exception(at)
    assert question(at, "attention", "key") is not None
    at.switch_page("app_pages/lm_head.py").run()
    no_exception(at)
    assert [x.value for x in at.toggle if x.label == SWITCH[lang]] == [True]
    assert question(at, PAGE) is not None, "no question at the LM head"
    bars = lambda: [c for c in at.get("plotly_chart") if c.proto.id.endswith("-lm-top")]     # noqa: E731
    assert not bars(), "the answer chart is shown before the guess"
    assert at.query_params.get("predict") in ("1", ["1"])
    commit(at, PAGE, None, lang)
    no_exception(at)
    assert bars(), "the answer chart is missing after the guess"
