"""Figure layouts the screenshots caught: labels drawn over each other, bar text shrunk past reading."""
from __future__ import annotations

import pytest
import torch

from viz.mlp import CLEAR, LABEL_GAP, swiglu_diagram
from viz.models import next_token_bars


def test_the_w_down_label_moves_off_a_marked_neuron_s_label():
    """I = 64, an 8-high strip centred at 4.6: neuron 26 sits at 4.6 - 4 + 8 * 26.5 / 64 = 3.9125, right where the
    W_down label's usual place (0.7 above the arrow at 4.6, i.e. 3.9) would cover its label."""
    H, I = 8, 64
    gate, up = torch.full((I,), 0.1), torch.full((I,), 0.1)
    gate[26], up[26] = 3.0, 3.0                          # the one large |act|: neuron 26
    act = torch.nn.functional.silu(gate) * up
    fig = swiglu_diagram(torch.ones(H), gate, up, act, torch.ones(H), k=1)
    notes = fig.layout.annotations
    neuron = next(n for n in notes if n.text.startswith("#26:"))
    assert abs(neuron.y - 3.9125) < 1e-9
    w_down = next(n for n in notes if n.text.startswith("W_down"))
    assert abs(w_down.y - neuron.y) >= CLEAR, (w_down.y, neuron.y)


def test_two_close_neurons_labels_do_not_overprint():
    """Issue 47: layer 0's MLP on "The capital of France is" marked neurons 1285 and 1375 of 4,864, 0.15 y units
    apart, and their labels were drawn over each other. Here I = 64 with neurons 20 and 21 (0.125 apart) and 50:
    the two close labels are LABEL_GAP apart, each near its mark (a leader joins it), and the lone one stays on its."""
    H, I = 8, 64
    gate, up = torch.full((I,), 0.1), torch.full((I,), 0.1)
    for j, v in ((20, 3.0), (21, 2.9), (50, 2.8)):
        gate[j], up[j] = v, v
    act = torch.nn.functional.silu(gate) * up
    fig = swiglu_diagram(torch.ones(H), gate, up, act, torch.ones(H), k=3)
    mark = {j: 4.6 - 4 + 8 * (j + 0.5) / I for j in (20, 21, 50)}
    label = {j: next(n for n in fig.layout.annotations if n.text.startswith(f"#{j}:")).y for j in mark}
    assert abs(label[21] - label[20]) >= LABEL_GAP - 1e-9
    assert abs(label[20] - mark[20]) <= LABEL_GAP and abs(label[21] - mark[21]) <= LABEL_GAP
    assert label[50] == mark[50]
    leaders = [sh for sh in fig.layout.shapes if sh.type == "line" and sh.line.width == 1]
    assert len(leaders) == 2


def test_two_models_next_token_bars_keep_room_and_size_for_their_text():
    """16 rows of two bars (the union of two top 8s): each row gets at least 40 px, and bar text is not shrunk below
    13 px to fit a thin bar."""
    rows = [dict(text=f"t{i}", p_a=0.1, p_b=None if i % 2 else 0.05) for i in range(16)]
    fig = next_token_bars(rows, "A", "B", missing="not one token")
    assert fig.layout.height >= 40 * 16
    assert fig.layout.uniformtext.minsize >= 13 and fig.layout.uniformtext.mode == "show"


def test_compare_pair_bars_keep_room_and_size_for_their_text():
    """Twelve candidates of two bars (the Compare page shows the union of two top 5s): 40 px a row, text >= 13 px."""
    from viz.experiments import pair_bars

    fig = pair_bars([f"t{i}" for i in range(12)], [0.1] * 12, [0.2] * 12, "A", "B")
    assert fig.layout.height >= 40 * 12
    assert fig.layout.uniformtext.minsize >= 13 and fig.layout.uniformtext.mode == "show"


def test_scale_parameter_bars_name_operators_in_the_page_language():
    """The Scale page's bars said "embedding", "attention q_proj" on the Chinese page while its table said 嵌入."""
    from content.scale import param_bar_rows
    from ops.arith import costs
    from viz.scale import param_bars

    v = {"params": costs.param_table(costs.reference_config("Qwen2.5-0.5B-Instruct"))}
    zh = list(param_bars(param_bar_rows(v, "zh"), "t", "x", "y").data[0].y)
    assert "嵌入" in zh and "注意力 q_proj" in zh and not any(n.startswith(("embedding", "attention")) for n in zh), zh
    en = list(param_bars(param_bar_rows(v, "en"), "t", "x", "y").data[0].y)
    assert "embedding" in en and "attention q_proj" in en


def test_two_models_attention_labels_are_whole_and_apart():
    """Issue 47: the Two models page's attention pair cut SmolLM2's byte-pair pieces to "<0xE6…" and drew 24 labels in
    300 px. A byte pair keeps its 11 characters, and each of 24 rows gets ROW_PX (22 px for 16 px labels)."""
    import numpy as np

    from viz.labels import short
    from viz.models import ROW_PX, attention_pair

    piece = "<0xE6 0xAD>"                  # bytes of a partial character, a plain space between them (viz.labels)
    assert short(piece, 12) == piece
    labels = [piece] * 24
    fig = attention_pair(np.eye(24), np.eye(24), labels, labels, "A", "B")
    assert fig.layout.height >= 150 + ROW_PX * 24 and ROW_PX >= 16 + 4
    assert list(fig.layout.yaxis2.ticktext) == labels
    assert len(fig.layout.xaxis2.ticktext) <= 14 and fig.layout.xaxis2.ticktext[0] == piece      # keys: every 2nd


def test_tour_logit_bars_keep_their_token_names_above_the_fold():
    """Issue 47: the Tour's step 16 drew its top-10 logits HEIGHT (440) px tall, so the token names under the bars
    fell below a 1500x900 projector's fold; at BARS_HEIGHT (360) they are seen whole in the projector screenshot of
    step 16 (en). Steps 16 and 17 are that tall and name every bar by its token."""
    from viz.tour import BARS_HEIGHT, HEIGHT, view

    labels = [f"t{k}" for k in range(10)]
    top = {"logits": torch.linspace(13, 10, 10), "probs": torch.linspace(0.5, 0.01, 10), "ids": torch.arange(10)}
    for key in ("logits", "softmax"):
        fig = view(key, {}, {"short": labels, "top": top, "top_labels": labels}, "en")
        assert fig.layout.height == BARS_HEIGHT < HEIGHT
        assert list(fig.data[0].x) == labels


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_tour_titles_name_the_live_counts_and_token(lang):
    """The Tour's titles come from assets/words/tour_pictures.<lang>.json with the live numbers filled in: the bars'
    count (here 7, not the usual 10), the row's last token and the next run's length (the 3 tokens + the new one)."""
    from viz.tour import companion, view

    labels = [f"t{k}" for k in range(7)]
    top = {"logits": torch.linspace(13, 10, 7), "probs": torch.linspace(0.5, 0.01, 7), "ids": torch.arange(7)}
    ctx = {"short": ["a", "b", "c"], "top": top, "top_labels": labels, "piece_short": "d", "vocab": 151936}
    for key in ("logits", "softmax"):
        assert "7" in view(key, {}, ctx, lang).layout.title.text
    mlp = view("mlp", {"values": [3.0, 2.0], "neurons": [5, 9]}, ctx, lang).layout.title.text
    assert "“c”" in mlp and "2" in mlp
    assert "4" in companion("loop", {}, ctx, lang).layout.title.text
    assert "151,936" in companion("ids", {"ids": [1, 2, 3]}, ctx, lang).layout.title.text
    assert "{" not in companion("decode", {}, ctx, lang).layout.title.text


def test_axis_labels_keep_an_english_word_whole():
    """Walk leftover (issue 48): the attention map labelled ' lighthouse' as "ighthou…" (a cut at 8 characters, the ␣
    counted). The default cut keeps a word of up to 11 letters and its ␣; a longer piece is still cut, with …"""
    from viz.labels import short
    assert short(" lighthouse") == "␣lighthouse" and short(" because") == "␣because"
    assert short(" internationalisation") == "␣internatio…" and len(short(" internationalisation")) == 12
