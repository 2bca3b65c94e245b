"""Projector mode (?projector=1 or the sidebar toggle): larger text and charts, no downloads or tensor-name
lines, and a "next stage" button at the end of every page, in the registry's order."""
from __future__ import annotations

import json

import pytest
from apptest_utils import check_page, open_page, tensor_lines

from content import stages


def styles(at) -> str:
    return "\n".join(str(h.proto.body) for h in at.get("html"))


def chart_fonts(at) -> list[float]:
    return [json.loads(c.proto.spec)["layout"].get("font", {}).get("size", 0) for c in at.get("plotly_chart")]


def next_link(at) -> list:
    """The "next stage" link at the end of the page (main area), as (label, target page)."""
    return [(p.label, p.proto.page) for p in at.main.get("page_link")]


@pytest.mark.real
def test_projector_from_the_url():
    at = open_page("embedding", lang="en", projector="1")
    check_page(at, "embedding", "en", charts=1, checks=1)
    assert at.session_state["projector"] is True
    assert "font-size: 20px" in styles(at)                                   # body text ~20 px
    assert not at.get("download_button"), "downloads are hidden in projector mode"
    assert not [x for x in tensor_lines(at) + [c.value for c in at.caption] if "embed.out" in x and "float32" in x], \
        "tensor-name line shown"
    fonts = chart_fonts(at)
    assert fonts and min(fonts) >= 19, fonts                                  # chart text for the back row
    (label, target) = next_link(at)[-1]
    assert "RMSNorm" in label and target.endswith("rmsnorm"), (label, target)   # embedding -> 3 RMSNorm
    at.switch_page("app_pages/rmsnorm.py")
    at.run()
    check_page(at, "rmsnorm", "en")
    assert not at.get("download_button")                                      # the mode stays on the next page


@pytest.mark.real
def test_normal_mode_keeps_downloads_and_names():
    at = open_page("embedding", lang="zh")
    check_page(at, "embedding", "zh", charts=1, checks=1)
    assert at.session_state["projector"] is False
    assert "font-size: 20px" not in styles(at)
    assert at.get("download_button")
    assert [x for x in tensor_lines(at) if "embed.out" in x and "float32" in x], tensor_lines(at)
    (label, target) = next_link(at)[-1]
    assert "RMSNorm" in label and "下一步" in label and target.endswith("rmsnorm")


@pytest.mark.real
def test_the_sidebar_toggle_turns_it_on():
    at = open_page("overview", lang="en")
    at.toggle(key="w_projector").set_value(True)
    at.run()
    assert at.query_params["projector"] in ("1", ["1"])
    assert "font-size: 20px" in styles(at)
    at.toggle(key="w_projector").set_value(False)
    at.run()
    assert "projector" not in at.query_params


def test_next_stage_follows_the_registry():
    """Each page leads to the registry's next page; none after the last, none on the tour (its own Next button
    steps through it)."""
    from ui.page import next_page

    keys = [s.page for s in stages.pages()]
    for k, key in enumerate(keys[:-1]):
        if key != "tour":
            assert next_page(key).page == keys[k + 1], key
    assert next_page(keys[-1]) is None and next_page("tour") is None
