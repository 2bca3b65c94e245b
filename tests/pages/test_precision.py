"""Precision page: float32 / bfloat16 / int8 layer by layer, agreement, KL, bytes, and what it means for serving."""
from __future__ import annotations

import pytest
from apptest_utils import BATCH, page_ok

PAGE = "precision"
EXPECT = dict(charts=2, tables=2, checks=1, passing=("bfloat16 嵌入",))
EXPECT_EN = dict(EXPECT, passing=("bfloat16 embedding",))


@pytest.mark.real
def test_precision_real():
    page_ok(PAGE, **EXPECT, text=("对部署意味着什么",))


@pytest.mark.real
def test_precision_real_batch_english(english):
    at = page_ok(PAGE, prompt=BATCH, lang="en", query=dict(row="1"), **EXPECT_EN, text=("What it means for serving",))
    assert "bfloat16" in at.dataframe[0].value.to_string()


def test_precision_tiny(tiny_app_dense):
    page_ok(PAGE, source=tiny_app_dense, **EXPECT)


def test_precision_report_shared_by_sessions(tiny_app_dense, monkeypatch):
    """A second session on the same model and prompt reuses the first one's report (ui.experiments_state.kept(share=True),
    process-wide); another prompt computes its own."""
    from ops.lab import precision
    from ui import experiments_state

    calls, real = [], precision.precision_report

    def counted(model, prompt, chat=False):
        calls.append(prompt)
        return real(model, prompt, chat)

    monkeypatch.setattr(precision, "precision_report", counted)
    experiments_state._shared.clear()
    for prompt in ("shared by two", "shared by two", "another prompt"):
        page_ok(PAGE, source=tiny_app_dense, prompt=prompt, **EXPECT)          # each a new AppTest: a new session
    assert calls == ["shared by two", "another prompt"]
