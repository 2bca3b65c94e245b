"""Figures that hold from 3 to 64 tokens (issue 42): numbers in heatmap cells only where they fit, the heads
grid's label band above every tile whatever S is, titles wrapped rather than cut."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from viz import heatmap
from viz.attention import scores_map
from viz.diagrams import LABEL_PX, heads_grid
from viz.figures import text_px, wrap


def causal(S):
    return torch.tril(torch.ones(S, S, dtype=torch.bool))


def test_cell_numbers_only_where_the_cells_are_wide_enough():
    # 560 px less 190 px of margins and colour bar: 3 cells are ~123 px wide, 10 are 37 px; "154.5" at 14 px
    # is 5 x 0.6 x 14 = 42 px (+6): written at 3 tokens, hover only at 10
    for S, written in ((3, True), (10, False), (30, False)):
        raw = torch.full((S, S), 154.5)
        fig = scores_map(raw, causal(S), [f"t{k}" for k in range(S)], text_fmt=".1f", width_px=560)
        assert bool(fig.data[0].texttemplate) is written, S
        if S > 1:                                    # the grey masked layer follows the same rule
            assert bool(fig.data[1].texttemplate) is written, S
        assert "%{z" in fig.data[0].hovertemplate  # the value is always there on hover


def test_probabilities_fit_at_ten_tokens_in_the_main_map():
    # "0.25" is 4 x 8.4 + 6 = 39.6 px; (620 - 190) / 10 = 43 px a cell
    fig = heatmap(np.full((10, 10), 0.25), text_fmt=".2f", width_px=620)
    assert fig.data[0].texttemplate == "%{text}" and fig.data[0].text[0][0] == "0.25"
    assert not heatmap(np.full((16, 16), 0.25), text_fmt=".2f", width_px=620).data[0].texttemplate


@pytest.mark.parametrize("S", [3, 7, 10, 30, 64])
def test_heads_grid_keeps_a_label_band_above_every_row_of_tiles(S):
    probs = torch.softmax(torch.randn(14, S, S), -1)
    fig = heads_grid(probs, causal(S), cols=5, subtitle=lambda h: f"h{h} · kv{h // 7}", title="t")
    z = np.asarray(fig.data[0].z, dtype=float)
    n = S if S <= 48 else 32                         # 64 tokens are drawn as 32 blocks of 2 (block maxima)
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    cell = plot_px / z.shape[0]                      # px a cell, down the page
    rows = 3                                         # 14 heads, 5 a row
    band = z.shape[0] // rows
    gap = band - n
    assert gap * cell >= LABEL_PX - 1e-6, (S, gap, cell)   # room for the label over each tile
    for r in range(rows):                            # the band is empty, the tile under it is not
        assert np.isnan(z[r * band:r * band + gap]).all()
        assert not np.isnan(z[r * band + gap:r * band + gap + n]).all()
    labels = fig.layout.annotations
    assert len(labels) == 14 and labels[5].text == "h5 · kv0" and labels[13].text == "h13 · kv1"
    for a in labels:                                 # each label sits on its tile's top edge, inside the band
        assert a.yanchor == "bottom" and (a.y + 0.5) % band == gap


def test_heads_grid_grows_with_the_prompt():
    heights = [heads_grid(torch.softmax(torch.randn(14, S, S), -1), causal(S), cols=5).layout.height
               for S in (3, 10, 30)]
    assert heights[0] < heights[1] < heights[2], heights


def test_titles_wrap_to_the_figure_width():
    title = "All 14 heads of layer 23 (one scale 0..1, red frame = head 13)"
    lines = wrap(title, 300, 20).split("<br>")
    assert len(lines) > 1 and all(text_px(x, 20) <= 300 for x in lines) and " ".join(lines) == title
    zh = wrap("第 23 层全部 14 个头（同一色标 0..1，红框 = 头 13）", 200, 20).split("<br>")
    assert len(zh) > 1 and all(text_px(x, 20) <= 200 for x in zh)
    fig = heads_grid(torch.rand(14, 10, 10), title=title, note="one scale 0..1, red frame = head 13", width_px=360)
    assert all(text_px(x, 20) <= 320 for x in fig.layout.title.text.split("<br>"))
    short = heads_grid(torch.rand(14, 10, 10), title="t", width_px=360)
    assert fig.layout.margin.t > short.layout.margin.t      # more lines, more room above the tiles
    hm = heatmap(np.eye(3), title=title, width_px=400)
    assert "<br>" in hm.layout.title.text and hm.layout.margin.t > heatmap(np.eye(3), title="t").layout.margin.t
