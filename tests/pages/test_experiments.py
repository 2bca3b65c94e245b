"""Experiments page: an edit of the forward pass (every kind), the next token before / after, the residual
change, the logit attribution waterfall, the head sweep on a click; bad input as a red box, never a traceback."""
from __future__ import annotations

import pytest
from apptest_utils import BATCH, check_page, open_page, page_ok

PAGE = "experiments"
EXPECT = dict(charts=6, checks=2, passing=("归因部分之和 vs logit", "之前的残差流"))
EXPECT_EN = dict(EXPECT, passing=("attribution parts vs the logit", "residual stream before layer"))


def chart_text(at) -> str:
    """Every Plotly chart's JSON (titles included): the figures' own words."""
    return "\n".join(c.proto.spec for c in at.get("plotly_chart"))


@pytest.mark.real
def test_experiments_real_head_ablation():
    at = page_ok(PAGE, **EXPECT, query=dict(x_edit="head", layer="3", head="5", x_mode="mean"))
    assert "第3层 头5 均值" in chart_text(at)                  # the after chart names the edit from the URL, in Chinese
    assert at.slider(key="head").value == 5


@pytest.mark.real
def test_experiments_real_batch_english():
    at = page_ok(PAGE, prompt=BATCH, lang="en", **EXPECT_EN, query=dict(x_edit="mlp", layer="0", row="1"))
    assert "L0 mlp.out = 0" in chart_text(at) and "Direct logit attribution" in "\n".join(s.value for s in at.subheader)


@pytest.mark.real
def test_experiments_real_head_sweep_once():
    """The one real head sweep (4 tokens): a click runs it with a progress bar; the result stays on rerun."""
    at = open_page(PAGE, prompt="I like shanghai", x_edit="attn", layer="2")
    n = len(at.get("plotly_chart"))
    at.button(key="run-head-sweep").click().run(timeout=300)
    check_page(at, PAGE, **EXPECT)
    assert len(at.get("plotly_chart")) == n + 2 and "Δ logit" in chart_text(at)
    at.run()
    assert len(at.get("plotly_chart")) == n + 2                # kept in session_state: no second click needed


@pytest.mark.real
def test_experiments_real_unknown_name_is_a_red_box():
    at = open_page(PAGE, x_edit="name", x_name="layers.99.attn.nope")
    check_page(at, PAGE, charts=4, allow_errors=("layers.99.attn.nope",))
    assert any("layers.99.attn.nope" in e.value for e in at.error)
    assert at.text_input(key="x_name").value == "layers.99.attn.nope"        # the page kept its state


@pytest.mark.real
def test_experiments_real_patch_unequal_length_is_a_red_box():
    at = open_page(PAGE, lang="en", x_edit="patch", x_src="a much longer source prompt than the other one")
    assert at.error, "an unequal-length patch must say so"
    check_page(at, PAGE, "en", charts=4, allow_errors=(at.error[0].value[:40],))


@pytest.mark.parametrize("edit, query", [
    ("head", dict(x_mode="zero")), ("head", dict(x_mode="mean")), ("attn", {}), ("mlp", {}), ("norope", {}),
    ("patch", dict(x_src="I hate shanghai")), ("steer", dict(x_sa="I love", x_sb="I hate", x_scale="-3")),
    ("name", dict(x_name="layers.1.mlp.out", x_pct="50")),
])
def test_experiments_tiny_every_edit(tiny_app_dense, edit, query):
    expect = dict(EXPECT, passing=EXPECT["passing"][:1]) if edit == "name" else EXPECT
    page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai", query=dict(x_edit=edit, layer="1", **query), **expect)


def test_experiments_tiny_sweep_and_batch(tiny_app_dense):
    at = open_page(PAGE, source=tiny_app_dense, prompt=BATCH, lang="en", row="1", x_edit="head", head="3")
    at.button(key="run-head-sweep").click().run()
    check_page(at, PAGE, "en", charts=8, **{k: v for k, v in EXPECT_EN.items() if k != "charts"})


def test_experiments_tiny_out_of_range_link_is_named(tiny_app_dense):
    """A shared link from a bigger model (layer 99, head 40) or a mistyped edit: a warning names each value and
    the range, and the page goes on with the nearest valid one instead of failing or clamping silently."""
    at = open_page(PAGE, source=tiny_app_dense, prompt="I like shanghai", lang="en", folds=False,
                   x_edit="hed", layer="99", head="40")
    warned = "\n".join(w.value for w in at.warning)
    assert "layer=99" in warned and "x_edit='hed'" in warned, warned
    assert at.slider(key="layer").value == at.slider(key="layer").max     # the nearest valid layer
    check_page(at, PAGE, "en", charts=4, allow_errors=())


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_predict_first_asks_which_ablation_moves_the_answer(tiny_app_dense, lang, monkeypatch):
    """With the switch on: which ablation of the chosen layer moves the top token's probability most? The "after"
    chart and the residual fold wait for the guess (the "before" chart does not); the verdict's answer is the one
    transformers' own model moves most under the same ablations done with hooks."""
    from apptest_utils import no_exception
    from predict_utils import ablation_moves, commit, question, right_answer, verdicts

    prompt, layer, head = "I like shanghai", 1, 2
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, predict="1", x_edit="head",
                   layer=str(layer), head=str(head), x_mode="zero")
    no_exception(at)
    ids = lambda: {c.proto.id.rsplit("-", 2)[-2] + "-" + c.proto.id.rsplit("-", 1)[-1]     # noqa: E731
                   for c in at.get("plotly_chart")}
    radio = question(at, PAGE, "ablation")
    assert radio is not None and "x-before" in ids() and not {"x-after", "x-change"} & ids()
    assert not verdicts(at)
    options = list(radio.options)
    assert len(options) == 4
    guess = commit(at, PAGE, "ablation", lang)
    no_exception(at)
    assert "x-after" in ids(), "the after chart is missing after the guess"
    [verdict] = verdicts(at)
    moves = ablation_moves(tiny_app_dense, prompt, layer, head, monkeypatch)
    kinds = ["head", "attn", "mlp", "norope"]                     # the page's order of the four ablations
    assert kinds[options.index(right_answer(verdict, guess, options))] == max(moves, key=moves.get), moves
