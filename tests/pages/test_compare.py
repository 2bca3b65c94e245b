"""Compare page: curated pairs and your own, both next-token distributions, per-layer cosine, the patching
heatmap on a click; unequal token lengths as a clear red box with the rest of the page kept."""
from __future__ import annotations

import pytest
from apptest_utils import check_page, open_page, page_ok

PAGE = "compare"
EXPECT = dict(charts=3, checks=1, passing=("第一个不同 token 之前的位置",))
EXPECT_EN = dict(EXPECT, passing=("before the first different token",))


def chart_text(at) -> str:
    return "\n".join(c.proto.spec for c in at.get("plotly_chart"))


@pytest.mark.real
def test_compare_real_capital_zh():
    at = page_ok(PAGE, **EXPECT, text=("德国",))
    assert "巴黎" in chart_text(at) and "柏林" in chart_text(at)      # each prompt's answer among the bars


@pytest.mark.real
def test_compare_real_patching_once():
    """The one real patching sweep: the 5-token capital pair; A's resid_out at the last layer and position
    restores A's answer fully."""
    at = open_page(PAGE, lang="en", cmp_pair="capital")
    at.button(key="run-patch").click().run(timeout=300)
    check_page(at, PAGE, "en", **dict(EXPECT_EN, charts=4), text=("France", "Italy"))
    assert "Share of" in chart_text(at)


@pytest.mark.real
@pytest.mark.parametrize("pair", ["ioi", "code"])
def test_compare_real_other_pairs(pair):
    page_ok(PAGE, lang="en", query=dict(cmp_pair=pair), **EXPECT_EN)


@pytest.mark.real
def test_compare_real_unequal_lengths_is_a_red_box():
    at = open_page(PAGE, lang="en", cmp_pair="own", cmp_a="The capital of France is",
                                               cmp_b="The capital city of Italy is")
    check_page(at, PAGE, "en", charts=2, allow_errors=("different token counts",))
    assert any("A has 5, B has 6" in e.value for e in at.error)
    assert not [b for b in at.button if b.key == "run-patch"]                  # no patching offered
    assert at.text_input(key="cmp_b").value == "The capital city of Italy is"   # the page kept its state


def test_compare_tiny_own_pair_and_patching(tiny_app_dense):
    at = open_page(PAGE, source=tiny_app_dense, cmp_pair="own", cmp_a="I like shanghai", cmp_b="I hate shanghai")
    at.button(key="run-patch").click().run()
    check_page(at, PAGE, **dict(EXPECT, charts=4))


def test_compare_tiny_empty_prompt(tiny_app_dense):
    at = open_page(PAGE, source=tiny_app_dense, cmp_pair="own", cmp_a="I like shanghai", cmp_b=" ")
    assert any("empty" in e.value or "空" in e.value for e in at.error) and not at.exception
