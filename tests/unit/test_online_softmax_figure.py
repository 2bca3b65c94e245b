"""viz/serving.online_softmax, the Serving page's FlashAttention figure: the scores are drawn in one colour per block
parity, and the legend has one entry per colour drawn, named for the blocks of that colour (both languages)."""
from __future__ import annotations

import math

import pytest

from content import serving_page
from viz import serving

NAMES = ("even blocks", "odd blocks")


def _view(scores, blocks):
    """A hand-made view: the figure reads only the scores, the blocks' (start, end) and each block's m and l."""
    return dict(scores=scores, blocks=blocks, rows=[dict(m=1.0 + k, l=0.5 + k) for k in range(len(blocks))])


def _drawn(trace) -> list[tuple[str, str]]:
    """(x, colour) of every point this trace draws (y None: nothing drawn there)."""
    colours = trace.marker.color
    out = []
    for j, (x, y) in enumerate(zip(trace.x, trace.y)):
        if y is None:
            continue
        out.append((x, colours[j] if isinstance(colours, (list, tuple)) else colours))
    return out


def _legend(fig) -> dict[str, str]:
    """colour -> name, for every legend entry (Plotly shows an array-coloured trace's entry in its first colour)."""
    out = {}
    for t in fig.data:
        if t.showlegend is False or not t.name:
            continue
        c = t.marker.color
        out[c[0] if isinstance(c, (list, tuple)) else c] = t.name
    return out


def _score_traces(fig):
    return [t for t in fig.data if t.marker.symbol == "square"]


def test_every_colour_drawn_has_its_own_legend_entry():
    """Seven keys in blocks of 3 (0-2, 3-5, 6), key 4 masked (-inf): blue draws keys 0, 1, 2 and 6, orange keys 3
    and 5 (worked by hand); each colour one legend entry with its own name; the x order stays the keys' order."""
    s = [0.5, -1.0, 2.0, 1.5, -math.inf, 0.25, 3.0]
    labels = list("abcdefg")
    fig = serving.online_softmax(_view(s, [(0, 3), (3, 6), (6, 7)]), labels, block_labels=NAMES)
    x = [f"{j}:{labels[j]}" for j in range(7)]
    drawn: dict[str, set] = {}
    for t in fig.data:
        for key, colour in _drawn(t):
            drawn.setdefault(colour, set()).add(key)
    legend = _legend(fig)
    assert set(drawn) <= set(legend), (set(drawn), legend)           # every colour drawn has a legend entry
    blue, orange = serving.BLOCK_COLORS
    assert drawn[blue] == {x[0], x[1], x[2], x[6]} and drawn[orange] == {x[3], x[5]}
    assert legend[blue] == NAMES[0] and legend[orange] == NAMES[1]
    assert len(set(legend.values())) == len(legend)                   # no two colours under one name
    assert all(list(t.x) == x for t in _score_traces(fig))           # categories in the keys' order


def test_one_block_has_one_score_entry():
    """One block holds every key: one colour drawn, so one score entry (no orange entry for nothing)."""
    fig = serving.online_softmax(_view([0.1, 0.2, 0.3], [(0, 3)]), ["a", "b", "c"], block_labels=NAMES)
    assert [t.name for t in _score_traces(fig)] == [NAMES[0]]
    assert _legend(fig)[serving.BLOCK_COLORS[0]] == NAMES[0] and serving.BLOCK_COLORS[1] not in _legend(fig)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_page_names_each_colour_in_both_languages(lang):
    """The page's words for the two colours (assets/words/serving_page): two different names, each with the word the
    y axis carries (the score), and each naming the blocks it holds (0 for the first colour, 1 for the second)."""
    lab = serving_page.labels(lang)
    even, odd = lab["score_even"], lab["score_odd"]
    assert even != odd and lab["score"] in even and lab["score"] in odd
    assert "0" in even and "1" not in even and "1" in odd and "0" not in odd
