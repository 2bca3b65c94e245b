"""Tokenize page: text -> ids, the chat template, a batch padded to one length; the prompt box across pages."""
from __future__ import annotations

import re

import pytest
from apptest_utils import BATCH, new_app, no_exception, open_page, page_ok, tensor_lines
from page_table import expect

PAGE = "tokenize"
EXPECT = expect(PAGE)


def ids_matrix_has_two_rows(at) -> bool:
    return any("tokens.ids" in x and "[2," in x for x in tensor_lines(at))


def id_cells(at) -> list[list[str]]:
    """The id grid (viz.tokenize.ids_table) as the page drew it: each row's cell texts."""
    grid = [m.value for m in at.markdown if "<table" in m.value and "<td" in m.value]
    assert len(grid) == 1, f"{len(grid)} id grids on the page"
    return [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in grid[0].split("<tr>")[2:]]


@pytest.mark.real
def test_tokenize_real_batch_english():
    at = page_ok(PAGE, prompt=BATCH, lang="en", **EXPECT)
    assert ids_matrix_has_two_rows(at)                          # the padded row is drawn and ids are [2, S]
    cells = id_cells(at)
    assert len(cells) == 2 and len(cells[0]) == len(cells[1])  # a rectangle: the short row padded
    assert cells[0][:4] == ["40", "1075", "557", "30070"]       # "I like shanghai", then padding ids


@pytest.mark.real
def test_tokenize_seed_sentence_and_chat():
    at = page_ok(PAGE, chat=True, **EXPECT)
    assert "151644" in id_cells(at)[0]                          # <|im_start|> is one id of the grid
    text = " ".join(m.value for m in at.markdown)
    assert "[40, 1075, 557, 30070]" in text                     # "I like shanghai" = 4 tokens, no BOS
    assert "&lt;|im_start|&gt;" in text or "<|im_start|>" in text


def test_sidebar_prompt_survives_page_switch(tiny_app_dense):
    """A prompt typed in the sidebar is kept across a page switch and later reruns (checked in Chromium too)."""
    new = "hello world\n人工智能很有趣"
    at = new_app()
    at.run()
    at.session_state["source"] = tiny_app_dense
    at.run()
    at.sidebar.text_area(key="w_prompt_text").set_value(new).run()
    no_exception(at)
    for step in range(2):                      # the switch itself, then a plain rerun on the new page
        if step == 0:
            at.switch_page("app_pages/tokenize.py")
        at.run()
        no_exception(at)
        assert at.session_state["prompt_text"] == new
        assert at.sidebar.text_area(key="w_prompt_text").value == new
        assert ids_matrix_has_two_rows(at)
        assert at.query_params["prompt"] == [new] or at.query_params["prompt"] == new
    at.sidebar.radio(key="w_lang").set_value("en").run()          # a language switch keeps it too
    assert at.session_state["prompt_text"] == new
    assert any("Tokenize" in x.value for x in at.title)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_merged_tokens_are_said_under_the_strip(tiny_app_dense, lang):
    """"因为她" is one token of the Qwen2.5 vocabulary (the tiny app's tokenizer is the real one): the page says so
    under the chips, in either language; a prompt without merged CJK characters gets no note."""
    from apptest_utils import texts

    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, prompt="小明把书借给了小红，因为她", **EXPECT)
    note = [c.value for c in at.caption if "“因为她”" in c.value]
    assert note, [c.value for c in at.caption]
    assert ("合并" in note[0] and "“她”" in note[0]) if lang == "zh" else ("one token" in note[0] and "“她”" in note[0])
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, prompt="I like shanghai", **EXPECT)
    assert not any("合并的 token" in c.value or "Merged tokens" in c.value for c in at.caption), texts(at)


@pytest.mark.real
def test_the_chinese_default_prompt_teaches_a_pronoun(bundled_tokenizer):
    """The Chinese UI's default prompt resolves a pronoun: "她", "妹妹" and "哥哥" are each a token of their own with
    the bundled Qwen tokenizer, so the attention map has a row for 她 and a column for each of them."""
    from ui.session import DEFAULT_PROMPTS

    tok = bundled_tokenizer
    pieces = [tok.decode([i]) for i in tok.encode(DEFAULT_PROMPTS["zh"])]
    assert pieces[-1] == "她" and "妹妹" in pieces and "哥哥" in pieces, pieces


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_example_line_is_the_students_own_sentence(tiny_app_dense, bundled_tokenizer, lang):
    """Fresh-eyes walk (issue 48): the only worked example under "The text the model really reads" was "I like
    shanghai", whatever the student typed. Now the student's own sentence comes first, with its ids as the tokenizer
    gives them (the tiny app's tokenizer is the bundled one), and the often-miscounted example after it."""
    prompt = "我每天早上喝一杯咖啡，然后" if lang == "zh" else "The old lighthouse keeper climbed the stairs and"
    at = page_ok(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, **EXPECT)
    ids = bundled_tokenizer.encode(prompt)
    own = [m.value for m in at.markdown if prompt in m.value and "→" in m.value]
    assert len(own) == 1, [m.value[:80] for m in at.markdown]
    assert f"→ {len(ids)} " in own[0] and str(ids[:16])[:-1] in own[0]
    texts = [m.value for m in at.markdown]
    assert texts.index(own[0]) < next(i for i, x in enumerate(texts) if "I like shanghai" in x and "→" in x)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_run_sanitises_the_prompt_once_and_fetches_the_model_once(tiny_app_dense, monkeypatch, lang):
    """The prompt has one way in (ui.session.prompt): a run that traces a new prompt sanitises it once, and that
    one result gives the prompts, the note on what was removed and the trace's input; the model is fetched once per
    run (the sidebar's get_model serves the page's). Counted at ops.engine.inputs.sanitize and ui.state._fetch_model;
    the expected note is sanitize's own message for the typed text, the expected trace input its text."""
    from ops.engine import inputs
    from ui import state

    calls = {"sanitize": 0, "fetch": 0}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    at = open_page(PAGE, source=tiny_app_dense, lang=lang, folds=False)
    no_exception(at)
    monkeypatch.setattr(inputs, "sanitize", counted("sanitize", inputs.sanitize))
    monkeypatch.setattr(state, "_fetch_model", counted("fetch", state._fetch_model))
    typed = "hello\x00 wor\x1bld\nsecond line"
    expected = inputs.Sanitized("hello world\nsecond line", 0, 2, ("U+0000", "U+001B"))
    at.session_state["prompt_text"] = typed
    at.run()
    no_exception(at)
    assert calls == {"sanitize": 1, "fetch": 1}
    notes = [i.value for i in at.info if expected.message(lang) in i.value]
    assert notes and ("已清理" if lang == "zh" else "was cleaned") in notes[0], [i.value for i in at.info]
    from ops.engine.store import STORE

    trace = STORE.peek(at.session_state.traces[next(reversed(at.session_state.traces))])
    assert trace.prompts == ["hello world", "second line"] and ids_matrix_has_two_rows(at)
    at.run()                                  # the same text again: the model is fetched, the text not re-cleaned
    no_exception(at)
    assert calls == {"sanitize": 1, "fetch": 2}
