"""Scale page: parameters, FLOPs, KV cache and the roofline, for the live model and the reference configs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from apptest_utils import check_page, page_ok, texts

PAGE = "scale"
EXPECT = dict(charts=2)                      # parameter bars + roofline
BUNDLED_PARAMS = "630,167,424"      # untied GGUF: 494,032,768 + 151,936 × 896 for its own output.weight
QWEN32B_PARAMS = "32,763,876,352"


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
def test_scale_real_english_moe_long_context(english):
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
