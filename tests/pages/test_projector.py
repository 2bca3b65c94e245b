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


def spec_font_sizes(spec) -> list[float]:
    """Every font size a chart's spec sets (its template aside): titles, ticks, cell text, annotations, legends."""
    out = []
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k == "template":
                continue
            if k.endswith("font") and isinstance(v, dict) and isinstance(v.get("size"), (int, float)):
                out.append(v["size"])
            out += spec_font_sizes(v)
    elif isinstance(spec, list):
        for v in spec:
            out += spec_font_sizes(v)
    return out


@pytest.mark.parametrize("page", ["attention", "sampling"])
def test_projector_mode_grows_every_chart_text(tiny_app_dense, page):
    """Issue 42: on a projector every text drawn in a chart is >= 18 px (normal mode has smaller ones: the
    heads grid's labels, the cells' numbers, the subtitles)."""
    normal = [spec_font_sizes(json.loads(c.proto.spec)) for c in open_page(page, source=tiny_app_dense,
                                                                           prompt="a b c").get("plotly_chart")]
    assert normal and min(min(s) for s in normal if s) < 18
    at = open_page(page, source=tiny_app_dense, prompt="a b c", projector="1")
    check_page(at, page, "zh")
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs
    for spec in specs:
        sizes = spec_font_sizes(spec)
        assert sizes and min(sizes) >= 18, (spec["layout"].get("title"), sorted(sizes)[:4])
        assert spec["layout"]["font"]["size"] >= 18                          # what every unsized text inherits


def test_the_tour_pipeline_labels_grow_on_a_projector(tiny_app_dense):
    """The tour's first step draws the pipeline; on a projector no label of it is under 18 px as drawn."""
    import re

    at = open_page("tour", source=tiny_app_dense, projector="1")
    check_page(at, "tour", "zh")
    svg = next(m.value for m in at.markdown if "<svg" in m.value)
    widest = float(re.search(r"max-width:(\d+)px", svg).group(1))
    px = [float(s) * widest / 1000 for s in re.findall(r'font-size="([\d.]+)"', svg)]
    assert px and min(px) >= 18 - 1e-9, sorted(px)[:3]
