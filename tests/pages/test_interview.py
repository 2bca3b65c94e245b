"""Interview page: split-KV on the trace (checked against its eager context), then the runs behind buttons: chunked
prefill, batch invariance, prompt-lookup drafts; KV-bound decode from the 32B config; outliers from the trace."""
from __future__ import annotations

import pytest
from apptest_utils import no_exception, open_tab, page_ok, texts

PAGE = "interview"
EXPECT = dict(tables=2, checks=1, passing=("K = 1", "vs layers.0.attn.context"))
TABS = "tabs-interview-interview"


@pytest.mark.real
def test_interview_real():
    at = page_ok(PAGE, **EXPECT, text=("262,144 B", "log-sum-exp"))
    assert not at.get("button") or all(not b.value for b in at.get("button"))     # nothing heavy ran on opening


@pytest.mark.real
def test_interview_real_english():
    page_ok(PAGE, lang="en", **EXPECT, text=("262,144 B", "cached tokens where KV passes weights", "SmoothQuant"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_interview_tiny_runs_every_button(tiny_app_dense, lang):
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, **EXPECT)
    tabs = {"zh": ("分块预填充", "批次不变性", "提示词查找投机解码"),
            "en": ("Chunked prefill", "Batch invariance", "Prompt-lookup drafts")}[lang]
    for label, button, word in zip(tabs, ("iv-prefill", "iv-batch", "iv-lookup"),
                                   {"zh": ("每块 C", "第一个不同的张量", "接受率"),
                                    "en": ("chunk C", "first tensor that differs", "acceptance")}[lang]):
        open_tab(at, TABS, label)
        at.button(key=button).click().run(timeout=300)
        no_exception(at)
        assert not at.error and word in texts(at), (label, word)
    assert "✗" not in texts(at)                 # same tokens as one-pass prefill and as plain greedy
    # the sentences that moved to content/interview.py draw in the page's language, with their live values
    kv_tab, out_tab = {"zh": ("KV 决定的解码", "离群激活与量化"), "en": ("KV-bound decode", "Outliers and quantisation")}[lang]
    open_tab(at, TABS, kv_tab)
    assert {"zh": "批次再大也省不下它", "en": "no longer amortises them"}[lang] in texts(at)
    assert {"zh": "本模型 ", "en": "This model, "}[lang] in texts(at) and "262,144 B" in texts(at)
    open_tab(at, TABS, out_tab)
    assert "SmoothQuant" in texts(at) and {"zh": "层的残差流里", "en": "residual stream holds"}[lang] in texts(at)
    assert {"zh": "分块 KV 解码", "en": "Split-KV decode"}[lang] in texts(at)
