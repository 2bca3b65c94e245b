"""The overview's pipeline diagram: the stage registry's stages as boxes, the live shapes on the arrows.

The main column is the prompt's way through the model; the layer box opens into a second column, one
decoder layer, whose boxes follow the trace contract's per-layer outputs in order."""
from __future__ import annotations

import html

from content import stages
from ops.engine.trace import contract_shapes

from .diagrams import pipeline_svg

# one decoder layer's outputs, in the order the contract records them; each box is the stage that makes it
LAYER_OUTPUTS = ("attn_norm.out", "attn.out", "resid_mid", "mlp_norm.out", "mlp.out", "resid_out")


def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def _maker(part: str):
    """The numbered stage whose output (or, failing that, whose reads) is layers.{i}.<part>."""
    pattern = f"layers.{{i}}.{part}"
    return next((s for s in stages.pipeline() if pattern in s.io[1:]), None) or \
        next(s for s in stages.pipeline() if pattern in s.reads)


def opening_html(text: str) -> str:
    """The first screen's plain sentence, large, as HTML (the text escaped)."""
    return (f'<div class="ol-opening" style="font-size:1.2rem;line-height:1.6;margin:0.2rem 0 0.4rem">'
            f'{html.escape(text)}</div>')


def pipeline_steps(config, shapes: dict, B: int, S: int, lang: str):
    """(steps, layer_steps, layer_index) for viz.diagrams.pipeline_svg, from the registry; `shapes` are
    the live trace's (name -> shape), the contract's filling in any name the trace did not keep."""
    T = (lambda zh, en: zh) if lang == "zh" else (lambda zh, en: en)
    c, L = config, config.num_hidden_layers
    live = {n: s for n, (s, _) in contract_shapes(c, B, S).items()}
    live.update({n: tuple(s) for n, s in shapes.items()})
    label = lambda name: f"{name.replace('layers.0.', '')} {shape_str(live[name])}" if name in live else name
    small = lambda text: "\n" + text                   # a smaller second line in the box

    outside = [s for s in stages.pipeline() if not (s.io and s.io[-1].startswith("layers."))]
    first_in = next(k for k, s in enumerate(stages.pipeline()) if s.io and s.io[-1].startswith("layers."))
    steps = [(T("文本 × B", "text × B"), "")]
    for s in outside:
        if len(steps) == first_in + 1:                # the layers, then the final norm, where the layers were
            steps.append((T(f"{L} × 解码层", f"{L} × decoder layers"), label(f"layers.{L - 1}.resid_out")))
            steps.append((stages.get("final_norm").title(lang), label("final_norm.out")))
        out = s.io[-1] if s.io else ""
        steps.append((s.title(lang), T(f"下一个 id [{B}, 1]", f"next id [{B}, 1]") if out == "next id" else
                      label(out) if out in live else ""))
    steps[-1] = (steps[-1][0], "")
    layer_index = first_in + 1

    mlp_note = (T(f"{c.num_experts} 个专家，每 token 选 {c.num_experts_per_tok} 个",
                  f"{c.num_experts} experts, top-{c.num_experts_per_tok}")
                if c.is_moe else T("SwiGLU，中间宽度 ", "SwiGLU, via ") + shape_str((B, S, c.intermediate_size)))
    notes = {"attn_norm.out": "input_layernorm", "mlp_norm.out": "post_attention_layernorm",
             "attn.out": f"q {shape_str(live['layers.0.attn.q'])} · k,v {shape_str(live['layers.0.attn.k'])}",
             "resid_mid": "x + attn.out", "mlp.out": mlp_note, "resid_out": "resid_mid + mlp.out"}
    layer_steps = [(_maker(p).title(lang) + small(notes[p]), label(f"layers.0.{p}")) for p in LAYER_OUTPUTS]
    layer_steps[-1] = (layer_steps[-1][0], "")
    return steps, layer_steps, layer_index


def pipeline_picture(config, shapes: dict, B: int, S: int, lang: str, height: int = 640,
                     max_height: int | None = None, min_px: float = 0) -> str:
    """The whole pipeline with live shapes, as SVG; the title gives the dimensions."""
    c = config
    steps, layer_steps, k = pipeline_steps(config, shapes, B, S, lang)
    title = (f"B = {B}, S = {S}, H = {c.hidden_size}, L = {c.num_hidden_layers}, V = {c.vocab_size:,}"
             f"{'（' if lang == 'zh' else ' ('}{c.name or c.model_type}{'）' if lang == 'zh' else ')'}")
    return pipeline_svg(steps, layer_steps, layer_index=k, title=title, height=height, max_height=max_height,
                        min_px=min_px)
