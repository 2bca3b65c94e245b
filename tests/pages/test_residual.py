"""Residual page: the stream x + attn.out + mlp.out, its identities checked live."""
from __future__ import annotations

import pytest
from apptest_utils import BATCH, page_ok

PAGE = "residual"
EXPECT = dict(charts=3, checks=2, passing=("resid_mid == layer_input", "resid_out == resid_mid + mlp.out"),
              text=("resid_out − resid_mid − mlp.out",))


@pytest.mark.real
def test_residual_real():
    page_ok(PAGE, **EXPECT)


@pytest.mark.real
def test_residual_real_batch_english(english):
    page_ok(PAGE, prompt=BATCH, lang="en", **EXPECT)


def test_residual_tiny(tiny_app_dense):
    page_ok(PAGE, source=tiny_app_dense, **EXPECT)


def test_residual_tiny_batch_english(tiny_app_dense, english):
    page_ok(PAGE, source=tiny_app_dense, prompt=BATCH, lang="en", **EXPECT)


def test_residual_tiny_one_token(tiny_app_dense):
    page_ok(PAGE, source=tiny_app_dense, prompt="a", **EXPECT)


def test_residual_tiny_moe(tiny_app_moe):
    page_ok(PAGE, source=tiny_app_moe, prompt=BATCH, **EXPECT)
