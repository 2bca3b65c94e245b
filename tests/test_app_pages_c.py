"""AppTest for the scale and interview-practice pages: real bundled model and a tiny random one."""
from __future__ import annotations

from pathlib import Path

import pytest

from apptest_utils import open_page

BUNDLED_PARAMS = "630,167,424"      # untied GGUF: 494,032,768 + 151,936 × 896 for its own output.weight
QWEN32B_PARAMS = "32,763,876,352"


def _open(page: str, source: str | None = None, prompt: str | None = None, lang: str = "zh"):
    at = open_page(page, source, prompt, lang)
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _text(at) -> str:
    parts = [m.value for m in at.markdown] + [m.value for m in at.success] + [m.value for m in at.info]
    parts += [m.value for m in at.caption] + [m.value for m in at.warning] + [m.value for m in at.title]
    return "\n".join(parts)


def _score(at) -> str:
    return next(m.value for m in at.metric if m.label in ("得分（对 / 答）", "score (correct / attempted)"))


def _answer(at, text: str):
    box = next(w for w in at.text_input if w.key.startswith("quiz_answer_"))
    box.set_value(text)
    at.button(key="quiz_reveal").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def _next(at):
    at.button(key="quiz_next").click()
    at.run()


# ---- scale ---------------------------------------------------------------------------------------
def _check_scale(at, want_params: str):
    live = [s.value for s in at.success if "model.num_parameters" in s.value]
    assert live, "no live parameter check on the page"
    assert live[0].count(want_params) == 2, live[0]            # config count == counted weights
    assert len(at.get("plotly_chart")) >= 2                   # parameter bars + roofline
    text = _text(at)
    for word in ("✓", "FLOP", "KV cache"):
        assert word in text or any(word in str(d.value) for d in at.dataframe), word


@pytest.mark.real
def test_scale_real(real_model):
    assert f"{real_model.num_parameters:,}" == BUNDLED_PARAMS
    at = _open("scale")
    _check_scale(at, BUNDLED_PARAMS)
    assert at.number_input(key="scale_B").value == 1 and at.number_input(key="scale_S").value == 4  # from the trace
    at.selectbox(key="scale_cfg").set_value("Qwen2.5-32B-Instruct")
    at.run()
    assert not at.exception and not at.error
    text = _text(at)
    assert QWEN32B_PARAMS in text
    assert "稠密" in text                                   # Qwen2.5-32B is dense, said where MoE is compared
    assert not [s for s in at.success if "model.num_parameters" in s.value]


@pytest.mark.real
def test_scale_real_english_moe_long_context(english):
    at = _open("scale", lang="en")
    at.selectbox(key="scale_cfg").set_value("Qwen3-30B-A3B")
    at.number_input(key="scale_B").set_value(64)
    at.number_input(key="scale_S").set_value(32768)
    at.selectbox(key="scale_gpu").set_value("RTX 4090 24GB")
    at.run()
    assert not at.exception and not at.error
    text = _text(at)
    assert "30,532,122,624" in text and "dense" in text
    assert "compute-bound" in text and "memory-bound" in text
    assert any("does not fit" in w.value for w in at.warning)


# ---- practice ------------------------------------------------------------------------------------
@pytest.mark.real
def test_practice_browse_real():
    at = _open("practice")
    assert len(at.expander) >= 40
    at.selectbox(key="practice_stage").set_value("attention")
    at.run()
    assert 1 <= len(at.expander) < 40
    toggle = at.toggle[0]
    toggle.set_value(True)
    at.run()
    assert not at.exception and not at.error
    at.selectbox(key="practice_stage").set_value("all")
    at.run()
    assert "［实算］" in "".join(e.label for e in at.expander)


@pytest.mark.real
def test_practice_quiz_real():
    at = _open("practice")
    assert _score(at) == "0 / 0"
    _answer(at, "")                                            # empty: a message, not a count
    assert any("预测" in w.value for w in at.warning) and _score(at) == "0 / 0"
    _answer(at, "[1, 4]")                                      # tokens.ids of "I like shanghai"
    assert _score(at) == "1 / 1", _score(at)
    assert any("[1, 4]" in s.value for s in at.success)
    _answer(at, "[1, 4]")                                      # revealing again does not count twice
    assert _score(at) == "1 / 1"
    _next(at)
    _answer(at, "1x4x999")                                     # embed.out is [1, 4, 896]
    assert _score(at) == "1 / 2", _score(at)
    assert any("[1, 4, 896]" in e.value for e in at.error)
    _next(at)
    _answer(at, "banana")                                      # garbage: a message, never a traceback
    assert any("banana" in w.value for w in at.warning) and _score(at) == "1 / 2"
    for _ in range(6):                                         # on to the number questions
        _next(at)
    _answer(at, "three hundred")
    assert any("three hundred" in w.value for w in at.warning)
    at.button(key="quiz_reset").click()
    at.run()
    assert _score(at) == "0 / 0"


@pytest.mark.real
def test_practice_english_batch(english):
    at = _open("practice", prompt="I like shanghai\nA second, longer prompt line here", lang="en")
    assert any("B = 2" in m.value for m in at.markdown)       # the quiz is built on the two-row trace
    assert len(at.expander) >= 40
    _answer(at, "[2, 99]")
    assert _score(at) == "0 / 1"


# ---- tiny random model ---------------------------------------------------------------------------
def test_scale_tiny(tiny_app_dense):
    import json

    at = _open("scale", source=tiny_app_dense)
    cfg = json.loads((Path(tiny_app_dense) / "config.json").read_text())
    assert cfg["hidden_size"] == 32
    live = [s.value for s in at.success if "model.num_parameters" in s.value]
    assert live
    n = live[0].split("= ")[1].split(" ")[0]
    assert live[0].count(n) == 2, live[0]


def test_practice_tiny(tiny_app_dense):
    at = _open("practice", source=tiny_app_dense)
    _answer(at, "[1, 4]")                                      # the real tokenizer: "I like shanghai" = 4 tokens
    assert _score(at) == "1 / 1", _score(at)
    _next(at)
    _answer(at, "1 x 4 x 32")                                  # tiny hidden size 32
    assert _score(at) == "2 / 2", [e.value for e in at.error]
