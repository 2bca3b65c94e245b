"""Precision page: float32 / bfloat16 / int8 layer by layer, agreement, KL, bytes, and what it means for serving."""
from __future__ import annotations

import pytest
from apptest_utils import BATCH, page_ok
from page_table import expect

PAGE = "precision"
EXPECT = expect(PAGE)
EXPECT_EN = expect(PAGE, "en")


@pytest.mark.real
def test_precision_real():
    page_ok(PAGE, **EXPECT, text=("对部署意味着什么",))


@pytest.mark.real
def test_precision_real_batch_english():
    at = page_ok(PAGE, prompt=BATCH, lang="en", query=dict(row="1"), **EXPECT_EN, text=("What it means for serving",))
    assert "bfloat16" in at.dataframe[0].value.to_string()


def test_precision_report_shared_by_sessions(tiny_app_dense, monkeypatch):
    """A second session on the same model and prompt reuses the first one's report (ui.experiments_state.kept(share=True),
    process-wide); another prompt computes its own."""
    from ops.lab import precision
    from ui import experiments_state

    calls, real = [], precision.precision_report

    def counted(model, prompt, chat=False, progress=None):
        calls.append(prompt)
        return real(model, prompt, chat, progress)

    monkeypatch.setattr(precision, "precision_report", counted)
    experiments_state._shared.clear()
    for prompt in ("shared by two", "shared by two", "another prompt"):
        page_ok(PAGE, source=tiny_app_dense, prompt=prompt, **EXPECT)          # each a new AppTest: a new session
    # the model's load-time first-visit job may compute the default prompt's report meanwhile, in its own thread
    assert [p for p in calls if p in ("shared by two", "another prompt")] == ["shared by two", "another prompt"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_predict_first_asks_whether_greedy_texts_part(tiny_app_dense, lang):
    """With the switch on: do the greedy texts part under bfloat16, and where? The two texts are absent before the
    guess and present after; the float32 text is transformers' greedy text, and the verdict's range holds the first
    token where it and a cache-free bfloat16 greedy run differ."""
    import re

    from apptest_utils import no_exception, open_page
    from predict_utils import commit, greedy_reference, question, right_answer, verdicts

    prompt = "I like shanghai"
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, predict="1")
    no_exception(at)
    texts = lambda: {c.value for c in at.caption}                                          # noqa: E731
    radio = question(at, PAGE, "greedy")
    assert radio is not None and "bfloat16" not in texts() and not verdicts(at)
    assert len(at.dataframe) == 2                                     # the rest of the page is drawn
    options = list(radio.options)
    guess = commit(at, PAGE, "greedy", lang)
    no_exception(at)
    assert "bfloat16" in texts() and "float32" in texts()
    f32, bf16, text = greedy_reference(tiny_app_dense, prompt, 16)
    shown = [c.value.replace("⟦", "").replace("⟧", "") for c in at.code]
    assert text in shown, (text, shown)
    [verdict] = verdicts(at)
    answer = right_answer(verdict, guess, options)
    part = next((k for k, (x, y) in enumerate(zip(f32, bf16)) if x != y), None)
    if part is None:
        assert "16" in answer and ("never" in answer or "不分开" in answer)
    else:
        a, z = map(int, re.findall(r"(\d+)–(\d+)", answer)[0])
        assert a <= part + 1 <= z, (part, answer)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_first_visit_shows_each_step_as_the_work_reports_it(tiny_app_dense, monkeypatch, lang):
    """A first visit's bar is driven by the report itself: every weight set's copy and pass, in order, up to the
    total, each step named in the page's language (assets/words/waits)."""
    from ui import experiments_state

    seen, real = [], experiments_state.progress_bar

    def recorded():
        box, report = real()

        def both(done, total, step, fields):
            seen.append((done, total, step, fields.get("dtype"), box))
            report(done, total, step, fields)
        return box, both
    monkeypatch.setattr(experiments_state, "progress_bar", recorded)
    page_ok(PAGE, source=tiny_app_dense, prompt=f"a prompt only this test uses ({lang})", lang=lang,
            **(EXPECT if lang == "zh" else EXPECT_EN))
    steps = list(dict.fromkeys((s, d) for _, _, s, d, _ in seen))
    assert steps == [(s, d) for d in ("float32", "bfloat16", "int8") for s in ("weights", "run")], steps
    dones = [x[0] for x in seen]
    assert dones == sorted(dones) and dones[0] == 0 and dones[-1] == seen[0][1]
    from content.words import say
    text = say("waits.run", lang, dtype="int8")
    assert ("权重" in text) == (lang == "zh")
