"""AppTest for the overview, tokenize, RMSNorm, attention and residual pages: real model and tiny random ones."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGES = ["overview", "tokenize", "rmsnorm", "attention", "residual"]
TITLES_ZH = {"overview": "总览", "tokenize": "分词", "rmsnorm": "RMSNorm", "attention": "注意力", "residual": "残差"}
TITLES_EN = {"overview": "Overview", "tokenize": "Tokenize", "rmsnorm": "RMSNorm", "attention": "Attention",
             "residual": "Residual"}
BATCH = "I like shanghai\n人工智能 😀 你好吗？ and a longer second line"


def _tiny_folder(folder: Path, model_type: str = "qwen2") -> Path:
    """A random tiny Qwen2 (or Qwen2-MoE) with the real 151,936-row vocabulary and the real tokenizer.json."""
    import torch
    import transformers as tf
    from ops import loading

    tok = loading.cache_dir() / "qwen2.5-coder-0.5b-instruct" / "tokenizer.json"
    if not tok.exists():
        pytest.skip("the bundled tokenizer.json is not prepared")
    torch.manual_seed(0)
    common = dict(vocab_size=151936, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    if model_type == "qwen2":
        model = tf.Qwen2ForCausalLM(tf.Qwen2Config(**common))
    else:
        model = tf.Qwen2MoeForCausalLM(tf.Qwen2MoeConfig(**common, num_experts=4, num_experts_per_tok=2,
                                                         moe_intermediate_size=16, shared_expert_intermediate_size=32))
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    shutil.copy(tok, folder / "tokenizer.json")
    return folder


@pytest.fixture(scope="module")
def tiny_dense(tmp_path_factory):
    return str(_tiny_folder(tmp_path_factory.mktemp("tiny_a_qwen2"), "qwen2"))


@pytest.fixture(scope="module")
def tiny_moe(tmp_path_factory):
    return str(_tiny_folder(tmp_path_factory.mktemp("tiny_a_qwen2_moe"), "qwen2_moe"))


@pytest.fixture
def english(monkeypatch):
    """Run the app in English. AppTest formats radio options outside a script run, where session_state is
    empty, so the sidebar's t()-based format_func would fall back to Chinese: pin the language instead."""
    import ui.state

    monkeypatch.setattr(ui.state, "lang", lambda: "en")
    return "en"


def _open(page: str, source: str | None = None, prompt: str | None = None, lang: str = "zh", chat: bool = False):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["lang"] = lang
    if chat:
        at.query_params["chat"] = "1"
    at.run()
    if source is not None:
        at.session_state["source"] = source
    if prompt is not None:
        at.session_state["prompt_text"] = prompt
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    return at


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
def test_page_tiny(page, tiny_dense):
    at = _open(page, source=tiny_dense)
    _assert_page(at, page)
    if page == "overview":   # the tiny model really was loaded
        assert any("H = 32" in c.value for c in at.caption), [c.value for c in at.caption]


@pytest.mark.parametrize("page", PAGES)
def test_page_tiny_batch_english(page, tiny_dense, english):
    at = _open(page, source=tiny_dense, prompt=BATCH, lang="en")
    _assert_page(at, page, "en")


@pytest.mark.parametrize("page", PAGES)
def test_page_tiny_one_token(page, tiny_dense):
    at = _open(page, source=tiny_dense, prompt="a")        # S = 1: every S x S map is 1 x 1
    _assert_page(at, page)


@pytest.mark.parametrize("page", ["overview", "rmsnorm", "residual"])
def test_page_tiny_moe(page, tiny_moe):
    at = _open(page, source=tiny_moe, prompt=BATCH)
    _assert_page(at, page)
