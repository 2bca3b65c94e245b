"""Serving page: online softmax on the trace's real scores, the KV cache, quantisation read from the bundled GGUF,
speculative decoding, long context, attention variants, tensor parallelism, prefill vs decode measured."""
from __future__ import annotations

import pytest
from apptest_utils import BATCH, every_tab, open_tab, page_ok, texts

from content import serving_numbers
from ops.arith import costs

PAGE = "serving"
EXPECT = dict(charts=5, tables=15, checks=2, passing=("online softmax",))
NUMS = serving_numbers.numbers(costs.reference_config())


def key_numbers(at, lang):
    """The figures the page is for, as content/serving_numbers.py computes them, are on it (in one tab or another)."""
    body = "\n".join(every_tab(at).text)
    for value in (NUMS["sv_req_141"], NUMS["sv_req_80"], NUMS["sv_fa_eager_32k"], NUMS["sv_kv_mla_exact"],
                  NUMS["sv_yarn_ext"], NUMS["sv_spec_e"]):
        assert value in body, (lang, value)


@pytest.mark.real
def test_serving_real():
    at = page_ok(PAGE, **dict(EXPECT, checks=4, passing=("在线 softmax", "gguf.dequantize")), text=("部署与优化",))
    key_numbers(at, "zh")
    body = "\n".join(every_tab(at).text)
    assert "Q5_0" in body and "Q4_K" in body                      # the bundled file's own types


@pytest.mark.real
def test_serving_real_english_batch():
    at = page_ok(PAGE, prompt=BATCH, lang="en", query=dict(row="1", block="3"),
                 **dict(EXPECT, checks=4, passing=("online softmax (blocks of 3)", "gguf.dequantize")),
                 text=("tokens per verification E", "KV heads per GPU", "weights per scale"))
    key_numbers(at, "en")


def test_serving_tiny_small_example_and_measure(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, lang="en", **EXPECT)
    at.text_input(key="sv-scores").input("1, 5, 2").run()
    assert not at.exception and "0.017, 0.936, 0.047" in texts(at)   # softmax([1, 5, 2]), by blocks of 2
    at.text_input(key="sv-scores").input("one, two").run()
    assert not at.exception and any("not a list of numbers" in w.value for w in at.warning)
    open_tab(at, "serving-topics", "Prefill vs decode")
    at.button(key="sv-measure").click().run(timeout=300)
    assert not at.exception and "measured ms/token" in texts(at)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_serving_2026_topics_draw_in_both_languages(tiny_app_dense, lang):
    """The fold of 2026 topics: every tab draws, each with its figure as content/serving_topics.py computes it from
    Qwen2.5-32B's config, and the grammar tab masks the loaded vocabulary (Qwen's digits are single tokens, so the
    integer automaton allows '-' and the ten digits at its start)."""
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, **dict(EXPECT, passing=({"zh": "在线 softmax"}.get(lang, "online softmax"),)))
    body = "\n".join(every_tab(at).text)
    assert {"zh": "2026 年的面试题", "en": "The 2026 interview"}[lang] in texts(at)
    for key in ("sv_cp_itl_chunk", "sv_gp_good", "sv_dg_ib", "sv_eagle_c", "sv_rx_radix", "sv_cx_ring_layer",
                "sv_sp_read", "sv_mxfp4_gb", "sv_pp_weights"):
        assert NUMS[key] in body, (lang, key, NUMS[key])
    for word in {"zh": ("基数树（逐 token）", "自动机状态", "线性（门控 delta）状态"),
                 "en": ("radix tree (per token)", "automaton state", "linear (gated delta) state")}[lang]:
        assert word in body, (lang, word)
    assert "'-' '0' '1' '2' '3' '4'" in body


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_serving_shows_this_servers_own_batching(tiny_app_dense, request, lang):
    """The KV cache tab's live panel: this process's decode batcher, its steps by size (two steps of 3 and one of 1
    recorded here), with the step time against a step of one; its trace batcher, its passes by size (prompts 1 at
    200 and 300 ms, 4 at 500 ms: a pass of one 250 ms, the four one by one 1000 ms, 0.50x); with either off, a line that
    says so and the other still drawn; outside classroom mode, a line that says so."""
    from types import SimpleNamespace

    from classroom import batcher as batcher_module, tracer as tracer_module
    from ui import batching_panel

    mp = request.getfixturevalue("monkeypatch")
    mp.delenv("OPERATOR_LAB_CLASSROOM", raising=False)
    b = batcher_module.Batcher(cap=8)
    for rows, s in ((1, 0.05), (3, 0.08), (3, 0.07)):
        b.steps.append(batcher_module.StepRecord(rows, s, 0.0))
    tr = tracer_module.Tracer(cap=8, budget=2**30)
    for requests, rows, s in ((1, 1, 0.2), (3, 4, 0.5), (1, 1, 0.3)):
        tr.steps.append(tracer_module.PassRecord(requests, rows, s, 0.0))
    # the panel's own lookups (jobs.tracer patched would reach ui.state too when it is first imported after the patch)
    mp.setattr(batching_panel, "jobs", SimpleNamespace(batcher=lambda: b, tracer=lambda: tr))
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, **dict(EXPECT, passing=()))
    tab = {"zh": "KV cache 与调度", "en": "KV cache"}[lang]
    open_tab(at, "serving-topics", tab)
    body = texts(at)
    assert {"zh": "连续批处理", "en": "continuous batching"}[lang] in body
    assert "1.50×" in body                                      # 75 ms / 50 ms
    # no step running: the last step's rows, marked idle, never "in the current step"; tokens/s say their span
    idle = {"zh": "空闲 · 上一步：3 / 8 条序列", "en": "idle · last step: 3 / 8 sequences"}[lang]
    current = {"zh": "当前这一步中的序列数", "en": "sequences in the current step"}[lang]
    assert idle in body and current not in body
    assert {"zh": "最近 30 秒内平均每秒 token 数", "en": "tokens/s over the last 30 s"}[lang] in body
    b.running = 2                                               # a step of two running now
    open_tab(at, "serving-topics", tab)
    body = texts(at)
    assert current in body and "2 / 8" in body and idle not in body
    b.running = 0
    assert "2.0 · 4 · 1" in body and "1.7" in body              # prompts per pass: 6 / 3, max 4, last 1; sessions 5 / 3
    assert "500 ms · 1.0 s" in body and "0.50×" in body         # the pass of 4 against 4 x 250 ms
    assert {"zh": "新提示词", "en": "New prompts"}[lang] in body
    assert "OPERATOR_LAB_CLASSROOM=0" in body
    mp.setattr(batching_panel.jobs, "batcher", lambda: None)
    open_tab(at, "serving-topics", tab)
    body = texts(at)
    assert "OPERATOR_LAB_DECODE_BATCH=0" in body and "500 ms · 1.0 s" in body
    mp.setattr(batching_panel.jobs, "batcher", lambda: b)
    mp.setattr(batching_panel.jobs, "tracer", lambda: None)
    mp.setattr(batching_panel, "settings", SimpleNamespace(current=lambda: SimpleNamespace(classroom=True)))
    open_tab(at, "serving-topics", tab)
    body = texts(at)
    assert "OPERATOR_LAB_TRACE_BATCH=0" in body and "3 / 8" in body and "OPERATOR_LAB_CLASSROOM=0" not in body
    mp.setattr(batching_panel.jobs, "tracer", lambda: tracer_module.Tracer(cap=8, budget=2**30, window=0.1))
    open_tab(at, "serving-topics", tab)
    assert {"zh": "0.1 秒内", "en": "within 0.1 s"}[lang] in texts(at)     # no pass yet
