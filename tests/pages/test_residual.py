"""Residual page: the stream x + attn.out + mlp.out, its identities checked live."""
from __future__ import annotations

import pytest
from page_table import expect

PAGE = "residual"
EXPECT = expect(PAGE)


def header(at) -> str:
    """The page's header line: the pipeline strip's input -> output (ui.blocks.pipeline_strip's monospace span)."""
    import html
    import re

    [strip] = [m.value for m in at.markdown if "font-family:monospace" in str(m.value)]
    return html.unescape(re.search(r'monospace[^>]*>(.*?)</span>', strip).group(1))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_layer_slider_moves_the_main_picture(tiny_app_dense, lang):
    """The layer slider changes the picture above the fold: the stream chart's band sits on layer i's step (point i,
    its input, to point i + 1, its output), and the caption under it gives token s's ‖x‖ before and after layer i,
    equal to transformers' own hidden states (the input of layer i and of layer i + 1)."""
    import json

    from apptest_utils import no_exception, open_page
    from predict_utils import transformers_run

    prompt = "我明天要去北京参加面试，我觉得"
    out, hf = transformers_run(tiny_app_dense, prompt)
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, folds=False)
    seen = []
    for i in (0, 1):
        at.slider(key="layer").set_value(i).run()
        no_exception(at)
        [chart] = [c for c in at.get("plotly_chart") if c.proto.id.endswith("-stream")]
        spec = json.loads(chart.proto.spec)
        [band] = [s for s in spec["layout"]["shapes"] if s["type"] == "rect"]
        assert (band["x0"], band["x1"]) == (i, i + 1)
        seen.append(chart.proto.spec)
        s = at.slider(key="tok").value
        norm = lambda k: f"{float(out.hidden_states[k][0, s].norm()):,.2f}"      # noqa: E731
        # float32 norms of a tiny model's states agree to ~1e-6; two decimals leave a wide margin
        caption = next(c.value for c in at.caption if f"`layers.{i}.resid_out`" in c.value)
        assert norm(i) in caption, caption
        if i + 1 < hf.config.num_hidden_layers:           # transformers' last hidden state is after the final norm
            assert norm(i + 1) in caption, caption
        assert header(at).startswith(f"layers.{i}.attn.out"), header(at)
    assert seen[0] != seen[1]
