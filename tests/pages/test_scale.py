"""Scale page: parameters, FLOPs, KV cache and the roofline, for the live model and the reference configs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptest_utils import HTML_TABLE, check_page, html_text, open_page, page_ok, texts

PAGE = "scale"
EXPECT = dict(charts=2)                      # parameter bars + roofline
BUNDLED_PARAMS = "630,167,424"      # untied GGUF: 494,032,768 + 151,936 × 896 for its own output.weight
QWEN32B_PARAMS = "32,763,876,352"


def difference_rows(at) -> list[list[str]]:
    """The config comparison's rows (cells): the table whose header names A and B."""
    for m in at.markdown:
        if str(m.value).startswith(HTML_TABLE):
            lines = [line.split(" | ") for line in html_text(str(m.value)).splitlines()]
            if lines[0][2:4] == ["A", "B"]:
                return lines[1:]
    raise AssertionError("no config comparison table")


def live_check(at) -> list[str]:
    return [s.value for s in at.success if "model.num_parameters" in s.value]


def check_scale(at, want_params: str):
    live = live_check(at)
    assert live, "no live parameter check on the page"
    assert live[0].count(want_params) == 2, live[0]            # config count == counted weights
    text = texts(at)
    for word in ("✓", "FLOP", "KV cache"):
        assert word in text or any(word in str(d.value) for d in at.dataframe), word


@pytest.mark.real
def test_scale_real(real_model):
    assert f"{real_model.num_parameters:,}" == BUNDLED_PARAMS
    at = page_ok(PAGE, prompt="I like shanghai", **EXPECT)
    check_scale(at, BUNDLED_PARAMS)
    assert at.number_input(key="scale_B").value == 1 and at.number_input(key="scale_S").value == 4  # from the trace
    at.selectbox(key="scale_cfg").set_value("Qwen2.5-32B-Instruct")
    at.run()
    check_page(at, PAGE)
    text = texts(at)
    assert QWEN32B_PARAMS in text
    assert "稠密" in text                                   # Qwen2.5-32B is dense, said where MoE is compared
    assert not live_check(at)
    plan = next(d.value for d in at.dataframe if "每张卡的层数" in d.value.columns)     # the placement section
    assert list(plan["GPU 数"]) == [1, 2, 4, 8] and plan["每张卡的层数"][0] == "64"    # one H200 holds all 64
    two = [int(x) for x in plan["每张卡的层数"][1].split(" · ")]      # a balanced split
    assert plan["放得下？"][0] == "✓" and sum(two) == 64 and max(two) - min(two) <= 4, two


@pytest.mark.real
def test_scale_real_english_moe_long_context():
    at = page_ok(PAGE, lang="en", **EXPECT)
    at.selectbox(key="scale_cfg").set_value("Qwen3-30B-A3B")
    at.number_input(key="scale_B").set_value(64)
    at.number_input(key="scale_S").set_value(32768)
    at.selectbox(key="scale_gpu").set_value("RTX 4090 24GB")
    at.run()
    check_page(at, PAGE, "en")
    text = texts(at)
    assert "30,532,122,624" in text and "dense" in text
    assert "compute-bound" in text and "memory-bound" in text
    assert any("does not fit" in w.value for w in at.warning)


def test_scale_tiny(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, **EXPECT)
    assert "FLOP/B" in str(json.loads(at.get("plotly_chart")[0].proto.spec))         # the main picture first: the roofline
    cfg = json.loads((Path(tiny_app_dense) / "config.json").read_text())
    assert cfg["hidden_size"] == 32
    live = live_check(at)
    assert live
    n = live[0].split("= ")[1].split(" ")[0]
    assert live[0].count(n) == 2, live[0]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_scale_compares_qwen_with_the_llama_config(tiny_app_dense, lang, monkeypatch):
    """The fold's config rows for Qwen2.5-0.5B-Instruct (A) and SmolLM2-135M-Instruct (B, the llama reference),
    each value worked out here from the two config files (json), the parameter totals by counting their tensors."""
    from content import models as words
    from ops.lab import models_data as cm

    root = Path(__file__).resolve().parents[2] / "assets" / "configs"
    qwen, smol = (json.loads((root / f).read_text()) for f in ("qwen2.5-0.5b-instruct.json", "smollm2-135m-instruct.json"))
    at = open_page(PAGE, source=tiny_app_dense, lang=lang, folds=False)
    at.session_state["cmp_cfg_a"] = "Qwen2.5-0.5B-Instruct"
    at.session_state["cmp_cfg_b"] = "SmolLM2-135M-Instruct"
    at.run()
    check_page(at, PAGE, lang, **EXPECT)                      # opens every fold, the comparison among them
    rows = {r[1]: r for r in difference_rows(at)}
    yes, no = {"zh": ("是", "否"), "en": ("yes", "no")}[lang]

    def cells(c):
        H, L, nh, nkv, I, V = (c[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                              "num_key_value_heads", "intermediate_size", "vocab_size"))
        hd = c["head_dim"]
        bias = c.get("attention_bias", c["model_type"] == "qwen2")     # Qwen2 always biases q/k/v (FACTS.md)
        layer = H * nh * hd + 2 * H * nkv * hd + bias * (nh + 2 * nkv) * hd + nh * hd * H + 3 * H * I + 2 * H
        params = V * H * (1 if c["tie_word_embeddings"] else 2) + L * layer + H
        return dict(model_type=c["model_type"], H=f"{H:,}", L=f"{L:,}", nh=f"{nh:,}", nkv=f"{nkv:,}",
                    rep=f"{nh // nkv:,}", hd=f"{hd:,}", ratio=f"{I / H:.3f}", theta=f"{c['rope_theta']:,.0f}",
                    eps=f"{c['rms_norm_eps']:g}", bias=yes if bias else no, tie=yes if c["tie_word_embeddings"] else no,
                    V=f"{V:,}", params=f"{params:,}", kv=f"{2 * L * nkv * hd * 2:,} B")

    a, b = cells(qwen), cells(smol)
    assert (a["params"], b["params"]) == ("494,032,768", "134,515,008")     # FACTS.md: 0.494B; 134.5M
    keys = ["model_type", "H", "L", "nh", "nkv", "rep", "hd", "ratio", "theta", "eps", "bias", "tie", "V", "params",
            "kv"]
    labels = [words.row_name(k, lang) for k in cm.ROWS if k != "special_tokens"]     # the rows' names
    assert list(rows) == labels
    for label, k in zip(labels, keys):
        assert rows[label][2:4] == [a[k], b[k]], (label, rows[label])
        assert rows[label][0] == ("=" if a[k] == b[k] else "≠"), label
    differ = [k for k in keys if a[k] != b[k]]
    assert set(keys) - set(differ) == {"hd", "tie"}                # both hd 64, both tied: every other row differs
    assert rows[labels[keys.index("bias")]][3] == no and rows[labels[keys.index("bias")]][5].startswith("0 ")
    assert any(f"{len(differ)} " in m.value and "SmolLM2-135M-Instruct" in m.value for m in at.markdown)
