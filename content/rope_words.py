"""The attention page's RoPE-frequency figure in words: its title, legend, axes and the caption that reads the live
numbers (ops/lab/stage_data.rope_frequencies), from assets/words/rope.<lang>.json. Never imports streamlit."""
from __future__ import annotations

from content.words import say


def _n(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.4g}"


def frequency_view(fq: dict, j: int, config, S: int, lang: str) -> dict:
    """Title, names and axes for viz.rope.frequency_pairs, and the caption for pair j of this model and prompt."""
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
