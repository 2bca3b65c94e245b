"""Projector mode grows what is drawn (issue 42): every text of a chart at least 18 px (viz.figures.projector_fonts,
which ui.page.chart applies to every figure in projector mode), and the tour's pipeline picture with no label
under 18 px as drawn on the page."""
from __future__ import annotations

import re

import numpy as np
import torch

from ops.arith import costs
from viz import bars, heatmap
from viz.attention import scores_map
from viz.diagrams import heads_grid
from viz.figures import projector_fonts
from viz.overview import pipeline_picture
from viz.tour import pipeline_size

FONT_KEYS = ("font", "textfont", "tickfont", "insidetextfont", "outsidetextfont")


def font_sizes(spec, inherited=None) -> list[float]:
    """Every font size a figure's JSON sets (the template aside), plus the layout font every unsized text takes."""
    out = []
    if isinstance(spec, dict):
        for k, v in spec.items():
            if k == "template":
                continue
            if k in FONT_KEYS and isinstance(v, dict) and isinstance(v.get("size"), (int, float)):
                out.append(v["size"])
            out += font_sizes(v)
    elif isinstance(spec, list):
        for v in spec:
            out += font_sizes(v)
    return out


def figures():
    S = 10
    allowed = torch.tril(torch.ones(S, S, dtype=torch.bool))
    labels = [f"t{k}" for k in range(S)]
    yield heatmap(np.full((3, 3), 0.5), x=["a", "b", "c"], title="t", subtitle="sub", text_fmt=".2f", ylabel="查询 i")
    yield scores_map(torch.randn(S, S) + 150, allowed, labels, text_fmt=".1f", subtitle="s")
    yield heads_grid(torch.softmax(torch.randn(14, S, S), -1), allowed, cols=5, title="t", note="n")
    yield bars([0.2, 0.5], ["a", "b"], title="t")


def test_every_chart_text_reaches_18_px_in_projector_mode():
    for fig in figures():
        before = font_sizes(fig.to_plotly_json())
        assert min(before) < 18                                       # normal mode has smaller text
        big = projector_fonts(fig)
        sizes = font_sizes(big.to_plotly_json())
        assert sizes and min(sizes) >= 18, sizes
        assert big.layout.font.size >= 18                             # what every unsized text inherits
        assert font_sizes(fig.to_plotly_json()) == before             # the cached figure itself is untouched
        if fig.layout.title.text or fig.layout.title.subtitle.text:   # room above the plot for the larger title
            assert big.layout.margin.t > fig.layout.margin.t


def rendered_px(svg: str) -> list[float]:
    """Each text's size in px as drawn: its font-size in units of the 1000-unit drawing times the px per unit."""
    widest = float(re.search(r"max-width:(\d+)px", svg).group(1))
    return [float(s) * widest / 1000 for s in re.findall(r'font-size="([\d.]+)"', svg)]


def test_the_tour_pipeline_has_no_label_under_12_px_and_none_under_18_px_on_a_projector():
    c = costs.reference_config("Qwen2.5-0.5B-Instruct")
    normal = rendered_px(pipeline_picture(c, {}, 1, 7, "zh", **pipeline_size(False)))
    assert min(normal) >= 12 - 1e-9, sorted(normal)[:5]              # the issue's ~8 px labels, no more
    assert min(rendered_px(pipeline_picture(c, {}, 1, 7, "zh", height=560, max_height=350))) < 10
    for lang in ("zh", "en"):
        svg = pipeline_picture(c, {}, 1, 7, lang, **pipeline_size(True))
        px = rendered_px(svg)
        assert len(px) > 10 and min(px) >= 18 - 1e-9, sorted(px)[:5]
