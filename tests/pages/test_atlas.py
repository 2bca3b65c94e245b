"""Head atlas page: the L x nh grid coloured by label, the chosen head on the prompt and on the induction test."""
from __future__ import annotations

import pytest
from apptest_utils import BATCH, page_ok
from page_table import expect

PAGE = "atlas"
EXPECT = expect(PAGE)


@pytest.mark.real
def test_atlas_real():
    at = page_ok(PAGE, **EXPECT, text=("归纳头",))
    assert any("第 0 层第 0 头" in m.value for m in at.markdown)


@pytest.mark.real
def test_atlas_real_head_from_url_english():
    at = page_ok(PAGE, lang="en", prompt=BATCH, query=dict(layer="23", head="13", row="1"), **EXPECT,
                 text=("The chosen head on the induction test sequence",))
    assert at.slider(key="head").value == 13
    assert any("L23 H13 · test sequence" in c.proto.spec for c in at.get("plotly_chart"))


