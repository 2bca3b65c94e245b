"""MLP / MoE page: SwiGLU parts, and the MoE router (a random-weight demo on dense models, live on MoE ones)."""
from __future__ import annotations

import pytest
from apptest_utils import page_ok, texts
from page_table import RANDOM

PAGE = "mlp"


def check_mlp(at, moe_real: bool):
    txt = texts(at)
    assert "MoE" in txt
    assert "Qwen2.5-32B" in txt
    if moe_real:
        assert any("MoE" in s.value for s in at.success)
    else:
        boxes = [e.value for e in at.error] + [w.value for w in at.warning]
        assert any(r in b for b in boxes for r in RANDOM), boxes
        assert all("max |diff|" in s.value for s in at.success if "diff" in s.value)
    assert len(at.dataframe) >= 2                           # the MoE facts table and the top-k table


@pytest.mark.real
def test_mlp_real():
    at = page_ok(PAGE, allow_errors=RANDOM)
    check_mlp(at, moe_real=False)


def test_mlp_tiny(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend", allow_errors=RANDOM)
    check_mlp(at, moe_real=False)


def test_mlp_tiny_moe(tiny_app_moe):
    at = page_ok(PAGE, source=tiny_app_moe)
    check_mlp(at, moe_real=True)
