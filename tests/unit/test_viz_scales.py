"""Figures whose scales carry meaning: sequential over the real range, diverging only about 0 for signed data,
masked cells and the cosine diagonal kept out of the range, one colour per token and red only for "chosen",
Chinese y-axis titles upright, token labels that never print as blank."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from viz import heatmap
from viz.attention import scores_map
from viz.embedding import cosine_map
from viz.figures import DIVERGING, SEQUENTIAL, color_range, upright_titles
from viz.labels import CHOSEN, TOKEN_COLORS, token_color, visible
from viz.lm_head import LIGHT_FROM, text_heatmap
from viz.sampling import candidates_chart


def test_one_signed_data_gets_a_diverging_scale_about_zero_the_rest_a_sequential_one_over_their_range():
    layer0_scores = np.array([[125.3, 140.0], [131.0, 154.1]])         # the flat-navy case: all positive
    r = color_range(layer0_scores)
    assert r["colorscale"] == SEQUENTIAL and (r["zmin"], r["zmax"]) == (125.3, 154.1)
    r = color_range(np.array([-0.2, 0.05]))
    assert r["colorscale"] == DIVERGING and (r["zmin"], r["zmax"]) == (-0.2, 0.2)
    fig = heatmap(layer0_scores)                                         # the default follows the data
    assert (fig.data[0].zmin, fig.data[0].zmax) == (125.3, 154.1)


def test_masked_scores_and_the_cosine_diagonal_stay_out_of_the_colour_range():
    raw = torch.tensor([[10.0, 99.0], [12.0, 14.0]])                   # 99 sits where the mask blocks it
    allowed = torch.tensor([[True, False], [True, True]])
    fig = scores_map(raw, allowed, ["a", "b"], text_fmt=".1f")
    assert (fig.data[0].zmin, fig.data[0].zmax) == (10.0, 14.0)
    assert fig.data[1].text[0][1] == "99.0"                            # still written, in the grey masked layer
    cos = torch.tensor([[1.0, 0.05, -0.19], [0.05, 1.0, 0.04], [-0.19, 0.04, 1.0]])
    hm = cosine_map(cos, ["a", "b", "c"]).data[0]
    assert (hm.zmin, hm.zmax) == pytest.approx((-0.19, 0.19), abs=1e-7)   # float32 in, float64 out: ~1e-8 apart
    assert np.isnan(np.asarray(hm.z, dtype=float)[0, 0])


def test_one_colour_per_token_and_red_only_for_the_chosen():
    assert CHOSEN not in TOKEN_COLORS and all(not c.lower().startswith("#d6") for c in TOKEN_COLORS)
    assert token_color(3) == token_color(3 + len(TOKEN_COLORS)) != token_color(4)
    assert token_color(3, light=True) != token_color(3)


def test_token_labels_never_print_blank():
    assert visible(" like") == "␣like" and visible("\n\n") == "\\n\\n" and visible("") == "∅"


def test_chinese_y_titles_are_set_upright_english_ones_stay():
    zh = upright_titles(heatmap(np.eye(2), ylabel="查询 i（正在看的位置）"))
    assert zh.layout.yaxis.title.text == "" and zh.layout.annotations[-1].text == "查询 i（正在看的位置）"
    en = upright_titles(heatmap(np.eye(2), ylabel="query i"))
    assert en.layout.yaxis.title.text == "query i" and not en.layout.annotations


def test_logit_lens_text_is_dark_on_light_cells_and_pieces_fit_their_cells():
    z = np.array([[0.95, 0.1]])
    fig = text_heatmap(z, [["getPosition", "\n"]], ["0:a", "1:b"], ["L0"], width_px=900)
    text = fig.data[1]
    assert list(text.textfont.color) == ["#111", "#fff"] and 0.1 < LIGHT_FROM < 0.95
    assert list(text.text) == ["getPosition", "\\n"]                     # wide cells: the whole piece, newline shown


def test_sampling_chart_shades_what_top_k_cuts_and_keeps_the_raw_softmax():
    logits = torch.tensor([3.0, 2.0, 1.0, 0.0])
    cut = logits.masked_fill(torch.tensor([False, False, True, True]), float("-inf"))   # top-k = 2
    stages = dict(logits=logits, top_k=cut, top_p=cut, probs=torch.softmax(cut, -1), chosen=1)
    fig = candidates_chart(stages, [0, 1, 2, 3], ["a", "b", "c", "d"], words=dict(cut_k="cut k"))
    raw, now = fig.data[:2]
    assert list(now.text[2:]) == ["cut k", "cut k"] and len(fig.layout.shapes) == 2
    assert list(now.marker.color).index(CHOSEN) == 1 and list(now.marker.color).count(CHOSEN) == 1
    assert np.allclose(raw.x, torch.softmax(logits, -1).numpy())          # T = 1, nothing cut


def test_atlas_writes_scores_in_small_grids_only_and_the_hover_keeps_them():
    from viz.atlas import TEXT_CELLS, atlas_grid

    def grid(L, nh):
        labels = [["previous" if (i + h) % 2 else "sink" for h in range(nh)] for i in range(L)]
        best = np.linspace(0, 1, L * nh).reshape(L, nh)
        return atlas_grid(labels, best, ["previous", "sink"], {}).data[0]

    small, large = grid(4, 4), grid(24, 14)                             # 16 heads; the 0.5B model's 336
    assert 16 <= TEXT_CELLS < 336
    assert small.texttemplate == "%{text}" and large.texttemplate is None
    assert large.text[23][13] == "1.00" and "%{text}" in large.hovertemplate    # the score is still there, on hover


def test_log_ticks_are_written_out_and_cover_the_data():
    """The precision page's error range (hand-picked 1.5e-3 .. 5e-2, under two decades): 1, 2, 5 per decade as
    decimals; a seven-decade range: powers of ten alone, all as powers (no 1e-05 and no bare "2")."""
    from viz.figures import log_ticks
    from viz.precision import error_lines

    t = log_ticks([1.5e-3, 0.0, None, 5e-2])                            # zeros and gaps are left out
    assert t["ticktext"] == ["0.001", "0.002", "0.005", "0.01", "0.02", "0.05"]
    assert t["tickvals"] == pytest.approx([1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2])
    t = log_ticks([3e-7, 2e-2])
    assert t["ticktext"] == ["10⁻⁶", "10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²"]
    assert log_ticks([1e-6, 3e-6])["ticktext"] == ["10⁻⁶", "2×10⁻⁶"]
    assert log_ticks([0.0]) == {}
    fig = error_lines({"float32": np.zeros(3), "bfloat16": np.array([2e-3, 1e-2, 4e-2])}, ["embed", "L0", "L1"])
    assert list(fig.layout.yaxis.ticktext) == ["0.002", "0.005", "0.01", "0.02", "0.05"]


def test_long_context_figures_name_the_far_keys_in_the_legend_under_the_axis_title():
    """The far-keys note was a text in the plot that the curves crossed: now a legend entry (3 traces: the two runs
    and the shade's square), with no note in the plot; the legend sits at the figure's foot, under the x title."""
    from viz.attention_rope import attention_rows, frequency_pairs

    fig = attention_rows({"plain": torch.full((10,), 0.1), "yarn": torch.full((10,), 0.1)}, 4,
                         names=("a", "b", "far keys"))
    assert [d.name for d in fig.data] == ["a", "b", "far keys"] and not fig.layout.annotations
    assert fig.layout.legend.yref == "container" and fig.layout.legend.y == 0 and fig.layout.margin.b >= 90
    near = attention_rows({"plain": torch.full((3,), 1 / 3), "yarn": torch.full((3,), 1 / 3)}, 4)
    assert len(near.data) == 2 and not near.layout.shapes                 # no key beyond the window: no shade
    n = 4
    fq = dict(pairs=np.arange(n), base=np.ones(n), used=np.ones(n), wave_base=np.ones(n), wave_used=np.ones(n),
              ratio=np.ones(n))
    assert frequency_pairs(fq, 1).layout.legend.yref == "container"


def test_the_generate_preview_title_wraps_instead_of_running_past_its_column():
    """The English title (about 1,000 px at 20 px) was cut at a 1500x900 window: broken to lines of at most 860 px
    (viz.figures.text_px), with the top margin for the second line; the shorter Chinese one stays one line."""
    from content.words import say
    from viz.figures import text_px
    from viz.generate import next_token_preview

    top = {"ids": torch.arange(3), "probs": torch.tensor([0.5, 0.3, 0.2])}
    en = next_token_preview(top, ["a", "b", "c"], False, "p", say("generate.preview_title_sampled", "en", n=8))
    lines = en.layout.title.text.split("<br>")
    assert len(lines) == 2 and max(text_px(x, 20) for x in lines) <= 860 and en.layout.margin.t >= 90
    zh = next_token_preview(top, ["a", "b", "c"], False, "p", say("generate.preview_title_sampled", "zh", n=8))
    assert "<br>" not in zh.layout.title.text
