"""ui.blocks.table: every row drawn as one HTML table in one Markdown element, cells shown as written."""
from __future__ import annotations

from apptest_utils import html_text
from streamlit.testing.v1 import AppTest


def draw():
    from ui.blocks import table
    table([{"op": "softmax", "formula": "~5 per score <exp> & *sum*"}, {"op": "rope", "extra": "3"}])
    table([])                                  # nothing to show: nothing drawn


def test_table_is_one_escaped_html_table():
    at = AppTest.from_function(draw).run()
    assert not at.exception
    (md,) = at.markdown
    assert md.value.startswith('<table class="ol-table">') and "\n" not in md.value   # one HTML block
    assert "&lt;exp&gt; &amp;" in md.value and "<exp>" not in md.value                  # text, not markup
    assert html_text(md.value).splitlines() == ["op | formula | extra",                # columns of every row
                                                "softmax | ~5 per score <exp> & *sum* | ",
                                                "rope |  | 3"]
