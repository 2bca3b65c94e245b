"""The scale page's words, in both languages: what each table counts and leaves out (notes filled with live numbers
by `say`), its headline sentences, and its tables' rows built from ops/arith/scale_data.view. Every text is in
assets/words/scale.<lang>.json; the numbers are computed here and passed as placeholders. Never imports streamlit."""
from __future__ import annotations

from ops.arith import costs
from ops.arith.costs import human

from . import costs_text, words

NOTES = ("intro", "too_big", "start", "bars", "dense", "flops", "fit", "time")   # assets/words/scale's note_<name>


def say(key: str, lang: str, **numbers) -> str:
    """The note `key` (assets/words/scale.<lang>.json's note_<key>) in lang, filled with numbers."""
    return words.say(f"scale.note_{key}", lang, **numbers)


def dense_note(lang: str) -> str:
    """The note under the dense-vs-MoE table, with Qwen2.5-32B's parameter count computed from its config."""
    return say("dense", lang, total=f"{costs.total_params(costs.reference_config()) / 1e9:.1f}B")


# ---- the roofline headline ---------------------------------------------------------------------------------------
def phase_names(lang: str) -> dict:
    return {"prefill": words.say("scale.prefill", lang), "decode": words.say("scale.decode_step", lang)}


def bound_word(bound: str, lang: str) -> str:
    return words.say(f"scale.{bound}_bound", lang)


def roofline_title(name: str, gpu: str, B: int, S: int, lang: str) -> str:
    return words.say("scale.roofline_title", lang, name=name, gpu=gpu, B=B, S=f"{S:,}")


def headline(v: dict, lang: str) -> str:
    """Where prefill and one decode step sit against the ridge, and their lower-bound times."""
    p, d, ridge = v["roofline"]["prefill"], v["roofline"]["decode"], v["ridge"]
    side = words.say("scale.above" if v["above_ridge"] else "scale.below", lang)
    return words.say("scale.headline", lang, pi=f"{p['intensity']:,.1f}", side=side, ridge=f"{ridge:,.0f}",
                     bp=bound_word(p["bound"], lang), tp=f"{p['time_s'] * 1e3:,.2f}", di=f"{d['intensity']:,.1f}",
                     bd=bound_word(d["bound"], lang), td=f"{d['time_s'] * 1e3:,.2f}", rate=f"{1 / d['time_s']:,.0f}")


def crossover_hint(B: int, cross: int, lang: str) -> str:
    return words.say("scale.crossover_hint", lang, B=B, cross=f"{cross:,}")


def top_metrics(v: dict, lang: str) -> list[tuple[str, str]]:
    T = v["T"]
    return [(words.say("scale.total_parameters", lang), human(v["total"])),
            (words.say("scale.active_per_token", lang), human(v["active"])),
            (words.say("scale.weights_bf16", lang), f"{v['weights']['bf16'] / 1e9:.1f} GB"),
            ("KV cache / token", human(v["kv_tok"], "B")),
            (words.say("scale.kv_cache_bs", lang, T=f"{T:,}"), human(v["kv_all"], "B"))]


# ---- parameters --------------------------------------------------------------------------------------------------
def live_check(chk: dict, lang: str) -> str:
    """costs.total_params(config) against the loaded weights counted one by one (scale_data.param_check)."""
    eq, mark = ("=", "✓") if chk["same"] else ("≠", "✗")
    return words.say("scale.live_check", lang, total=f"{chk['total']:,}", eq=eq, counted=f"{chk['counted']:,}",
                     mark=mark)


def param_rows(v: dict, lang: str) -> list[dict]:
    return [{words.say("scale.operator", lang): costs_text.operator(r["operator"], lang),
             words.say("scale.tensors", lang): ", ".join(n.replace("model.layers.{i}.", "") for n in r["tensors"]),
             words.say("scale.shapes", lang): " · ".join(str(s) for s in r["shapes"]),
             words.say("scale.per_layer", lang): f"{r['per_layer']:,}", words.say("scale.layers", lang): r["layers"],
             words.say("scale.params", lang): f"{r['params']:,}",
             words.say("scale.share", lang): f"{r['share']:.1%}"} for r in v["params"]]


def param_total(v: dict, lang: str) -> str:
    n = v["total"]
    return words.say("scale.param_total", lang, n=f"{n:,}", short=human(n))


def param_bar_rows(v: dict, lang: str) -> list[dict]:
    """The parameter rows with their operators named as in the table above (注意力 q_proj, 嵌入 in Chinese)."""
    return [dict(r, operator=costs_text.operator(r["operator"], lang)) for r in v["params"]]


def param_bars_words(name: str, lang: str) -> tuple[str, str, str]:
    """(title, x label, y label) of the parameter bars."""
    return (words.say("scale.param_bars_title", lang, name=name),
            words.say("scale.parameters_millions", lang), words.say("scale.operator", lang))


def reference_table(rows: list[dict], lang: str) -> list[dict]:
    """scale_data.reference_rows as the dense-vs-MoE table."""
    return [{words.say("scale.model", lang): r["name"],
             words.say("scale.kind", lang):
                 f"MoE ({r['experts']} × top-{r['top_k']})" if r["moe"] else words.say("scale.dense", lang),
             words.say("scale.total_params", lang): f"{r['total']:,}",
             words.say("scale.active_per_token_2", lang): f"{r['active']:,}",
             words.say("scale.active_share", lang): f"{r['share']:.0%}"} for r in rows]


# ---- FLOPs -------------------------------------------------------------------------------------------------------
def flops_intro(B: int, S: int, lang: str) -> str:
    return words.say("scale.flops_intro", lang, T=f"{B * S:,}", S=f"{S:,}", B=B, S1=f"{S + 1:,}")


def flops_metrics(v: dict, lang: str) -> list[tuple[str, str]]:
    tot = v["flops_total"]
    return [(words.say("scale.prefill_flops", lang), human(tot["prefill"], "FLOP")),
            (words.say("scale.decode_step_flops", lang), human(tot["decode"], "FLOP")),
            (words.say("scale.2_active_params_prefill", lang),
             human(v["rule_prefill"], "FLOP")),
            (words.say("scale.2_active_params_b", lang), human(v["rule_decode"], "FLOP"))]


def flops_tabs(lang: str) -> list[str]:
    return [words.say("scale.prefill_per_operator", lang), words.say("scale.one_decode_step_per", lang)]


def flops_rows(v: dict, phase: str, lang: str) -> list[dict]:
    return [{words.say("scale.operator", lang): costs_text.operator(r["operator"], lang),
             words.say("scale.formula", lang): costs_text.formula(r["formula"], lang),
             words.say("scale.per_layer", lang): human(r["per_layer"], "FLOP"),
             words.say("scale.layers", lang): r["layers"],
             "FLOPs": f"{r['flops']:,}", words.say("scale.share", lang): f"{r['share']:.1%}"}
            for r in v["flops"][phase]]


def flops_total(v: dict, phase: str, lang: str) -> str:
    n = v["flops_total"][phase]
    return words.say("scale.flops_total", lang, n=f"{n:,}", short=human(n, "FLOP"))


# ---- memory and the roofline in numbers --------------------------------------------------------------------------
def kv_sentence(c, v: dict, lang: str) -> str:
    dims = f"L {c.num_hidden_layers} × nkv {c.num_key_value_heads} × hd {c.head_dim}"
    tok, every = v["kv_tok"], v["kv_all"]
    return words.say("scale.kv_sentence", lang, dims=dims, tok=f"{tok:,}", tok_short=human(tok, "B"), T=f"{v['T']:,}",
                     every_short=human(every, "B"), every_gb=f"{every / 1e9:.2f}")


def weight_metrics(v: dict, lang: str) -> list[tuple[str, str]]:
    return [(words.say("scale.weights_as", lang, lab=lab), f"{n / 1e9:.1f} GB") for lab, n in v["weights"].items()]


def fit_table(v: dict, lang: str) -> list[dict]:
    cell = lambda f, gb: f"{'✓' if f['fits'] else '✗'}  {f['total'] / 1e9:,.1f} / {gb} GB"
    return [{"GPU": r["gpu"],
             **{words.say("scale.weights_as", lang, lab=lab): cell(f, r["gb"]) for lab, f in r["cells"].items()},
             words.say("scale.tokens_of_kv_cache", lang): f"{r['max_tokens']:,}"}
            for r in v["fit"]]


def roofline_table(v: dict, lang: str) -> list[dict]:
    names = phase_names(lang)
    return [{words.say("scale.phase", lang): names[ph], "FLOPs": human(r["flops"], "FLOP"),
             words.say("scale.bytes_moved", lang): human(r["bytes"], "B"), words.say("scale.intensity_flop_b", lang):
             f"{r['intensity']:,.1f}", words.say("scale.compute_time", lang): f"{r['t_compute_s'] * 1e3:,.3f} ms",
             words.say("scale.memory_time", lang): f"{r['t_memory_s'] * 1e3:,.3f} ms",
             words.say("scale.lower_bound_time", lang): f"{r['time_s'] * 1e3:,.3f} ms",
             words.say("scale.bound", lang): bound_word(r["bound"], lang)} for ph, r in v["roofline"].items()]
