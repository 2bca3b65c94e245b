"""The attention page's RoPE-frequency figure in words: its title, legend, axes and the caption that reads the live
numbers (ops/lab/stage_data.rope_frequencies), from assets/words/rope.<lang>.json. Never imports streamlit."""
from __future__ import annotations

from content.words import say


def _n(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.4g}"


def frequency_view(fq: dict, j: int, config, S: int, lang: str) -> dict:
    """Title, names and axes for viz.attention_rope.frequency_pairs, and the caption for pair j of this model and
    prompt."""
    w = lambda key, **f: say(f"rope.{key}", lang, **f)      # noqa: E731
    half, hd = len(fq["pairs"]), 2 * len(fq["pairs"])
    figure = dict(title=w("freq_title", rope_type=fq["rope_type"]),
                  names=(w("freq_unscaled"), w("freq_used"), w("freq_unit")), axes=(w("freq_x"), w("freq_y")))
    if not fq["changed"]:
        caption = w("freq_plain", hd=hd, theta=f"{config.rope_theta:g}", j=j, wave=_n(float(fq["wave_used"][j])))
    else:
        caption = w("freq_scaled", rope_type=fq["rope_type"], changed=fq["changed"], half=half, hd=hd, j=j,
                    inv=f"{float(fq['used'][j]):.4g}", base=f"{float(fq['base'][j]):.4g}",
                    ratio=f"{float(fq['ratio'][j]):.4g}", wave=_n(float(fq["wave_used"][j])),
                    wave_base=_n(float(fq["wave_base"][j])))
    if fq["scale"] != 1.0:
        caption += " " + w("freq_attn", scale=f"{fq['scale']:.4f}", scale2=f"{fq['scale'] ** 2:.4f}")
    if fq["rope_type"] == "dynamic":
        caption += " " + w("freq_dynamic", max_pos=f"{config.max_position_embeddings:,}", S=S)
    return dict(figure=figure, caption=caption)


def long_view(r: dict, lang: str, model: str = "", real: int = 0) -> dict:
    """The Serving page's live long-context run in words: intro, metrics, figure words, per-layer rows, caption.
    model, real: the loaded model's name and its config's own window (max_position_embeddings)."""
    w = lambda key, **f: say(f"rope.{key}", lang, **f)      # noqa: E731
    fq, window, layer = r["freq"], r["window"], r["last_layer"]
    far = r["layers"][layer]
    tp, ty = r["top_plain"][0], r["top_yarn"][0]
    return dict(
        intro=w("long_intro", n=r["n"], factor=f"{r['factor']:g}", window=window, ratio=f"{r['n'] / window:.1f}",
                model=model, real=f"{real:,}"),
        metrics=[(w("long_pairs"), f"{fq['changed']} / {len(fq['pairs'])}"),
                 (w("long_attn_factor"), f"{fq['scale']:.4f}"), (w("long_kl"), f"{r['kl']:.3g}"),
                 (w("long_logit"), f"{r['max_logit_change']:.3g}")],
        freq=dict(title=w("long_freq_title", factor=f"{r['factor']:g}", window=window),
                  names=(w("freq_unscaled"), w("long_yarn"), w("freq_unit")), axes=(w("freq_x"), w("freq_y"))),
        attn=dict(title=w("long_attn_title", layer=layer), names=(w("long_plain"), w("long_yarn"),
                                                                   w("long_far", window=window)),
                  axes=(w("long_key"), w("long_prob"))),
        rows=[{w("long_layer"): x["layer"], w("long_far_plain"): f"{x['plain']:.3f}",
               w("long_far_yarn"): f"{x['yarn']:.3f}"} for x in r["layers"]],
        tops=[{w("long_top_plain"): f"'{a['piece']}' {a['prob']:.3f}",
               w("long_top_yarn"): f"'{b['piece']}' {b['prob']:.3f}"} for a, b in zip(r["top_plain"], r["top_yarn"])],
        caption=w("long_caption", slowed=fq["changed"], half=len(fq["pairs"]), scale2=f"{fq['scale'] ** 2:.4f}",
                  window=window, far_plain=f"{far['plain']:.3f}", far_yarn=f"{far['yarn']:.3f}", layer=layer,
                  top_plain=tp["piece"], p_plain=f"{tp['prob']:.3f}", top_yarn=ty["piece"], p_yarn=f"{ty['prob']:.3f}"))
