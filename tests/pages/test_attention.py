"""Attention page: every layer and head, scores / mask / probs, RoPE, GQA; pickers from a shared link."""
from __future__ import annotations

import pytest

from apptest_utils import BATCH, page_ok, texts

PAGE = "attention"
EXPECT = dict(charts=4, checks=1, passing=("F.scaled_dot_product_attention",))


@pytest.mark.real
def test_attention_real():
    page_ok(PAGE, **EXPECT)


@pytest.mark.real
def test_attention_real_batch_english(english):
    page_ok(PAGE, prompt=BATCH, lang="en", **EXPECT)


@pytest.mark.real
def test_attention_pickers_from_url():
    at = page_ok(PAGE, query=dict(layer="23", head="13", pair="31"), **EXPECT)
    assert at.slider(key="head").value == 13
    assert "layers.23.attn.probs" in texts(at)                                # the main map is that layer's
    assert any("attn.probs[0, 13]" in s.value for s in at.success)         # and the check that head's


def test_attention_tiny(tiny_app_dense):
    page_ok(PAGE, source=tiny_app_dense, **EXPECT)


def test_attention_tiny_batch_english(tiny_app_dense, english):
    page_ok(PAGE, source=tiny_app_dense, prompt=BATCH, lang="en", **EXPECT)


def test_attention_tiny_one_token(tiny_app_dense):
    page_ok(PAGE, source=tiny_app_dense, prompt="a", **EXPECT)        # every S x S map is 1 x 1
