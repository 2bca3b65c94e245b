"""Sampling page: repetition penalty -> temperature -> top-k -> top-p, the sliders beside one chart."""
from __future__ import annotations

import json

import pytest
from apptest_utils import no_exception, page_ok

PAGE = "sampling"


def main_chart(at) -> dict:
    """The page's one chart (viz.sampling.candidates_chart) as plotly JSON: the first chart on the page."""
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def check_sampling(at):
    """The sliders drive the one chart: top-k = 3 leaves 3 candidates solid and shades the rest as cut by top-k;
    temperature 0 is greedy (said so) and picks the largest logit."""
    assert not at.error
    at.slider(key="smp_temp").set_value(1.0)
    at.slider(key="smp_topp").set_value(1.0)
    at.slider(key="smp_topk").set_value(3)
    at.run()
    no_exception(at)
    raw, now = main_chart(at)["data"][:2]          # then the legend's marks (no bars of their own)
    assert len(now["y"]) == 10                                    # the default top N candidates
    assert sum("top-k" in x for x in now["text"]) == 10 - 3       # every candidate past the 3rd is cut ...
    # ... and the 3 left share p = 1 (a float32 softmax sums to 1 within ~1e-7; 1e-5 leaves room)
    assert all(x == 0 for x in now["x"][3:]) and abs(sum(now["x"][:3]) - 1) < 1e-5
    assert all(r > 0 for r in raw["x"])                           # the raw softmax (T = 1) keeps them all
    at.slider(key="smp_temp").set_value(0.0)
    at.run()
    no_exception(at)
    assert any("greedy" in w.value or "贪心" in w.value for w in at.warning)
    colors = main_chart(at)["data"][1]["marker"]["color"]
    assert colors[0] == "#d62728" and "#d62728" not in colors[1:]    # greedy (ρ = 1): the top raw logit, red


@pytest.mark.real
def test_sampling_real():
    check_sampling(page_ok(PAGE))


def test_sampling_tiny(tiny_app_dense):
    check_sampling(page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai\nHello there, friend"))


def test_sampling_tiny_moe(tiny_app_moe):
    check_sampling(page_ok(PAGE, source=tiny_app_moe))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sampling_by_hand_softmax(tiny_app_dense, lang):
    """The softmax of three logits, written out; T = 0.5 doubles the gaps (the numbers are ops/arith/worked_math.py's)."""
    from apptest_utils import texts

    from ops.arith import worked_math

    words = {"zh": ("动手算一遍", "三个 logit 的 softmax"), "en": ("Do it by hand", "Softmax of three logits")}[lang]
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, text=words)
    at.number_input(key="hand_sm_T").set_value(0.5)
    at.number_input(key="hand_sm_z2").set_value(-10.0)
    at.run()
    no_exception(at)
    p = worked_math.softmax_steps((2.0, 1.0, -10.0), 0.5)["probs"]
    assert f"{p[0]:.4f}" in texts(at) and f"{p[1]:.4f}" in texts(at)


def test_probability_axis_stays_put_while_t_moves(tiny_app_dense):
    """Moving T changes the bars, not the axis: the same x range at T = 0.8 and T = 1.05 (an axis that followed the
    largest bar shrank with it, and a bar kept its length while its probability fell), and it holds every bar."""
    at = page_ok(PAGE, source=tiny_app_dense)
    spans, tops = [], []
    for temp in (0.8, 1.05):
        at.slider(key="smp_temp").set_value(temp).run()
        no_exception(at)
        fig = main_chart(at)
        spans.append(fig["layout"]["xaxis"]["range"])
        tops.append(max(fig["data"][1]["x"]))
    assert spans[0] == spans[1], spans
    assert tops[0] != tops[1]                                     # the bars did move
    assert spans[0][0] == 0 and spans[0][1] >= 1                  # every probability fits, whatever T


def test_sliders_show_their_range(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense)
    assert at.slider(key="smp_temp").label.endswith("(0…2)"), at.slider(key="smp_temp").label
    assert at.slider(key="smp_topk").label.endswith("(0…100)") and at.slider(key="smp_n").label.endswith("(5…30)")


def test_min_p_slider_cuts_below_its_share_of_the_top(tiny_app_dense):
    """min-p = 0.5 at T = 1 with top-k and top-p off: a candidate keeps a probability exactly when its raw softmax
    (the faint bars, T = 1) is at least half the top one's; the kept ones renormalise to the same ratios."""
    at = page_ok(PAGE, source=tiny_app_dense)
    for key, value in (("smp_temp", 1.0), ("smp_topk", 0), ("smp_topp", 1.0), ("smp_rp", 1.0), ("smp_minp", 0.5)):
        at.slider(key=key).set_value(value)
    at.run()
    no_exception(at)
    raw, now = main_chart(at)["data"][:2]          # then the legend's marks (no bars of their own)
    top = max(raw["x"])
    assert [x > 0 for x in now["x"]] == [r >= 0.5 * top for r in raw["x"]]
    kept = [(r, x) for r, x in zip(raw["x"], now["x"]) if x > 0]
    assert all(abs(x / kept[0][1] - r / kept[0][0]) < 1e-4 for r, x in kept)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_temperature_zero_is_one_bar_at_one_on_the_argmax(tiny_app_dense, lang):
    """T = 0 is greedy as the text teaches it: one solid bar at exactly 1.0, on the token transformers' own logits
    rank first, every other candidate at 0; the faint bars stay the raw softmax (T = 1) of those logits; the axis
    stops at 1 and the legend's marks are the bars' colours."""
    import torch
    from predict_utils import transformers_run

    prompt = "我明天要去北京参加面试，我觉得"
    at = page_ok(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang)
    at.slider(key="smp_rp").set_value(1.0)
    at.slider(key="smp_temp").set_value(0.0).run()
    no_exception(at)
    fig = main_chart(at)
    raw, now = fig["data"][:2]
    out, _ = transformers_run(tiny_app_dense, prompt)
    ref = torch.softmax(out.logits[0, -1].double(), -1)
    top = ref.topk(len(raw["x"]))
    assert now["x"][0] == 1.0 and all(x == 0 for x in now["x"][1:]), now["x"]
    # the faint bars: transformers' softmax at the same candidates, in the same order (float32 logits of a tiny
    # random model agree within ~1e-6 between the two implementations; 1e-5 leaves room for other CPUs)
    assert max(abs(a - float(b)) for a, b in zip(raw["x"], top.values)) < 1e-5
    assert fig["layout"]["xaxis"]["range"] == [0, 1]
    legend = {d["name"]: d["marker"]["color"] for d in fig["data"][2:]}
    assert set(legend.values()) == {raw["marker"]["color"], *now["marker"]["color"]}
