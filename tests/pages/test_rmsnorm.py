"""RMSNorm page: the three norms (before attention, before the MLP, final), step by step."""
from __future__ import annotations

import pytest
from apptest_utils import page_ok
from page_table import expect

PAGE = "rmsnorm"
EXPECT = expect(PAGE)
WEIGHT = dict(attn_norm="model.layers.5.input_layernorm.weight",
              mlp_norm="model.layers.5.post_attention_layernorm.weight", final="model.norm.weight")


@pytest.mark.real
@pytest.mark.parametrize("norm", ["attn_norm", "mlp_norm", "final"])
def test_rmsnorm_each_norm(norm):
    """?norm=...&layer=5 in a shared link opens that norm."""
    at = page_ok(PAGE, query=dict(norm=norm, layer="5"), **EXPECT)
    assert any(WEIGHT[norm] in x.value for x in at.caption)          # the caption names the norm's own γ


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_rmsnorm_by_hand_four_numbers(tiny_app_dense, lang):
    """Four numbers, every step written out; all zeros is fine (ε keeps 1/√(mean + ε) finite), never a traceback."""
    from apptest_utils import no_exception, texts

    from ops.arith import worked_math

    words = {"zh": ("动手算一遍", "四个数的 RMSNorm"), "en": ("Do it by hand", "RMSNorm of four numbers")}[lang]
    at = page_ok(PAGE, source=tiny_app_dense, lang=lang, **dict(EXPECT, text=EXPECT["text"] + words))
    r = worked_math.rmsnorm_steps((1.0, -2.0, 3.0, 2.0), (1.0, 1.0, 0.5, 2.0), at.radio(key="hand_rms_eps").value)
    assert f"{r['inv']:.4g}" in texts(at)
    for j in range(4):
        at.number_input(key=f"hand_rms_x{j}").set_value(0.0)
    at.run()
    no_exception(at)
    assert any("ε" in box.value for box in at.info)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_rmsnorm_header_names_the_input_and_output_from_the_trace(tiny_app_dense, lang):
    """The header reads input -> output as the trace names them, with live shapes: layer 0's attention norm reads
    the embedding, layer 1's reads layer 0's resid_out, the MLP norm reads resid_mid, the final norm the last layer's
    resid_out (not "attn_norm.out -> attn_norm.out")."""
    import json

    import tokenizers
    from apptest_utils import no_exception, open_page

    prompt = "我明天要去北京参加面试，我觉得"
    n = len(tokenizers.Tokenizer.from_file(f"{tiny_app_dense}/tokenizer.json").encode(prompt).ids)
    cfg = json.load(open(f"{tiny_app_dense}/config.json"))
    H, L = cfg["hidden_size"], cfg["num_hidden_layers"]
    at = open_page(PAGE, source=tiny_app_dense, prompt=prompt, lang=lang, folds=False)
    shape = f"[1, {n}, {H}]"
    assert header(at) == f"embed.out {shape} → layers.0.attn_norm.out {shape}"
    at.slider(key="layer").set_value(1).run()
    no_exception(at)
    assert header(at) == f"layers.0.resid_out {shape} → layers.1.attn_norm.out {shape}"
    at.radio(key="norm").set_value("mlp_norm").run()
    assert header(at) == f"layers.1.resid_mid {shape} → layers.1.mlp_norm.out {shape}"
    at.radio(key="norm").set_value("final").run()
    assert header(at) == f"layers.{L - 1}.resid_out {shape} → final_norm.out {shape}"


def header(at) -> str:
    """The page's header line: the pipeline strip's input -> output (ui.blocks.pipeline_strip's monospace span)."""
    import html
    import re

    [strip] = [m.value for m in at.markdown if "font-family:monospace" in str(m.value)]
    return html.unescape(re.search(r'monospace[^>]*>(.*?)</span>', strip).group(1))
