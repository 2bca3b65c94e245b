"""AppTest for the overview, tokenize, RMSNorm, attention and residual pages: real model and tiny random ones."""
from __future__ import annotations

import pytest

from apptest_utils import APP, open_page as _open

PAGES = ["overview", "tokenize", "rmsnorm", "attention", "residual"]
TITLES_ZH = {"overview": "总览", "tokenize": "分词", "rmsnorm": "RMSNorm", "attention": "注意力", "residual": "残差"}
TITLES_EN = {"overview": "Overview", "tokenize": "Tokenize", "rmsnorm": "RMSNorm", "attention": "Attention",
             "residual": "Residual"}
BATCH = "I like shanghai\n人工智能 😀 你好吗？ and a longer second line"


def _assert_page(at, page: str, lang: str = "zh"):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    titles = [x.value for x in at.title]
    want = (TITLES_ZH if lang == "zh" else TITLES_EN)[page]
    assert any(want in x for x in titles), titles
    assert len(at.get("plotly_chart")) > 0
    assert len(at.success) > 0, "no passing check on the page"
    assert all("✗" not in s.value for s in at.success)


# ---- the real bundled model ---------------------------------------------------------------------
@pytest.mark.real
@pytest.mark.parametrize("page", PAGES)
def test_page_real(page):
    at = _open(page)
    _assert_page(at, page)


@pytest.mark.real
@pytest.mark.parametrize("page", PAGES)
def test_page_real_batch_english(page, english):
    at = _open(page, prompt=BATCH, lang="en")
    _assert_page(at, page, "en")
    if page == "tokenize":   # the padded row is drawn and the id matrix is [2, S]
        assert any("tokens.ids" in m.value and "[2," in m.value for m in at.markdown)


@pytest.mark.real
def test_tokenize_seed_sentence_and_chat():
    at = _open("tokenize", chat=True)
    _assert_page(at, "tokenize")
    text = " ".join(m.value for m in at.markdown)
    assert "[40, 1075, 557, 30070]" in text          # "I like shanghai" = 4 tokens, no BOS
    assert "&lt;|im_start|&gt;" in text or "<|im_start|>" in text


@pytest.mark.real
@pytest.mark.parametrize("norm", ["attn_norm", "mlp_norm", "final"])
def test_rmsnorm_each_norm(norm):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["norm"] = norm
    at.query_params["layer"] = "5"
    at.run()
    at.switch_page("app_pages/rmsnorm.py")
    at.run()
    _assert_page(at, "rmsnorm")


@pytest.mark.real
def test_attention_pickers_from_url():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"layer": "23", "head": "13", "pair": "31"})
    at.run()
    at.switch_page("app_pages/attention.py")
    at.run()
    _assert_page(at, "attention")
    assert at.slider(key="head").value == 13


# ---- tiny random models -------------------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES)
def test_page_tiny(page, tiny_app_dense):
    at = _open(page, source=tiny_app_dense)
    _assert_page(at, page)
    if page == "overview":   # the tiny model really was loaded
        assert any("H = 32" in c.value for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("page", PAGES)
def test_page_tiny_batch_english(page, tiny_app_dense, english):
    at = _open(page, source=tiny_app_dense, prompt=BATCH, lang="en")
    _assert_page(at, page, "en")


@pytest.mark.parametrize("page", PAGES)
def test_page_tiny_one_token(page, tiny_app_dense):
    at = _open(page, source=tiny_app_dense, prompt="a")        # S = 1: every S x S map is 1 x 1
    _assert_page(at, page)


@pytest.mark.parametrize("page", ["overview", "rmsnorm", "residual"])
def test_page_tiny_app_moe(page, tiny_app_moe):
    at = _open(page, source=tiny_app_moe, prompt=BATCH)
    _assert_page(at, page)


def test_sidebar_prompt_survives_page_switch(tiny_app_dense):
    """A prompt typed in the sidebar is kept across a page switch and later reruns (checked in Chromium too)."""
    from streamlit.testing.v1 import AppTest

    new = "hello world\n人工智能很有趣"
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.session_state["source"] = tiny_app_dense
    at.run()
    at.sidebar.text_area(key="prompt_text").set_value(new).run()
    assert not at.exception, [e.value for e in at.exception]
    for _ in range(2):                         # the switch itself, then a plain rerun on the new page
        if _ == 0:
            at.switch_page("app_pages/tokenize.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["prompt_text"] == new
        assert at.sidebar.text_area(key="prompt_text").value == new
        assert any("tokens.ids" in m.value and "[2," in m.value for m in at.markdown)
        assert at.query_params["prompt"] == [new] or at.query_params["prompt"] == new
    at.sidebar.radio(key="lang").set_value("en").run()          # a language switch keeps it too
    assert at.session_state["prompt_text"] == new
    assert any("Tokenize" in x.value for x in at.title)
