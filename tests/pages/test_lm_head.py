"""LM head page: final norm -> logits over the vocabulary, the logit lens agreeing with the logits."""
from __future__ import annotations

import pytest
from apptest_utils import page_ok

PAGE = "lm_head"


def check_lm_head(at):
    assert any("lens" in s.value for s in at.success)          # the last layer's lens top-1 == the logits' top-1
    assert not any("✗" in e.value for e in at.error)


@pytest.mark.real
def test_lm_head_real():
    check_lm_head(page_ok(PAGE))


@pytest.mark.real
def test_lm_head_real_batch_and_single_token():
    page_ok(PAGE, prompt="I like shanghai\nHi")
    page_ok(PAGE, prompt="Hi")


def test_lm_head_tiny(tiny_app_dense):
    check_lm_head(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


def test_lm_head_tiny_moe(tiny_app_moe):
    check_lm_head(page_ok(PAGE, source=tiny_app_moe))
