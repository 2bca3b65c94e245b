"""The serving chapter's tables and captions: rows with column names in either language, and (zh, en) caption
templates filled with texts.numbers() and the page's own live values. The examples and placeholders are
content/serving_numbers.py's. Never imports streamlit.
"""
from __future__ import annotations

from content.words import say
from ops.arith import costs, formats, serving_math as ops_sv
from ops.engine.config import ModelConfig
from ops.lab import online_softmax, serving_phases

from .serving_numbers import (
    DECODE_CONTEXT,
    DRAFT_LABEL,
    EXAMPLE,
    PHASE_LENGTHS,
    PREFIX,
    REQUEST_TOKENS,
    SIM,
    SWA_WINDOW,
    TRAFFIC_LENGTHS,
    _b,
    _flops,
    _gb,
    _pct,
)


# ---- the page's tables: rows with column names in the page's language --------------------------------------
def _row(lang: str, *cols) -> dict:
    """cols: (name, value) or (name, value, fields) -> {assets/words/serving's col_<name> in lang: value as text}
    (a table column holds one type)."""
    return {say(f"serving.col_{c[0]}", lang, **(c[2] if len(c) > 2 else {})): str(c[1]) for c in cols}


def _bound(lang: str, bound: str) -> str:
    return say(f"serving.bound_{bound}", lang)


def online_table(view: dict, lang: str) -> list[dict]:
    return [_row(lang, ("block", r["block"]), ("keys", r["keys"]), ("block_max", f"{r['block_max']:.3f}"),
                 ("m", f"{r['m']:.3f}"), ("alpha", f"{r['alpha']:.3f}"), ("l", f"{r['l']:.3f}"),
                 ("to_final", f"{r['dist']:.1e}")) for r in view["rows"]]


def small_table(rows: list[dict], lang: str) -> list[dict]:
    return [_row(lang, ("block", r["block"]), ("scores_in_block", r["keys"]),
                 ("block_max", f"{r['block_max']:g}"), ("m", f"{r['m']:g}"),
                 ("e_m_old_m_new", f"{r['alpha']:.4f}"), ("l", f"{r['l']:.4f}"),
                 ("probabilities_so_far", ", ".join(f"{p:.3f}" for p in r["probs"]))) for r in rows]


def traffic_table(ref: ModelConfig, lang: str, lengths=TRAFFIC_LENGTHS) -> list[dict]:
    out = []
    for S in lengths:
        r = online_softmax.score_traffic(ref, S)
        out.append(_row(lang, ("s", f"{S:,}"), ("one_head_s_s_s_bf16", _b(r["matrix"])),
                        ("eager_s_s_traffic_all_heads_layers", _b(r["eager_matrix"])),
                        ("q_k_v_out_traffic", _b(r["qkvo"])),
                        ("eager_h200_ms", f"{r['eager_ms']:,.1f}"),
                        ("flashattention_h200_ms", f"{r['flash_ms']:,.1f}")))
    return out


def kv_table(ref: ModelConfig, lang: str, tokens: int = REQUEST_TOKENS) -> list[dict]:
    out = []
    for g in ops_sv.SERVING_GPUS:
        r = ops_sv.concurrent_requests(ref, g, tokens)
        out.append(_row(lang, ("gpu", g), ("bf16_weights", _gb(r["weights"])), ("left", _gb(r["free"])),
                        ("kv_per_request", _b(r["per_request"]), dict(tokens=f"{tokens:,}")),
                        ("kv_tokens_that_fit", f"{r['cache_tokens']:,}"),
                        ("concurrent_requests_bound", r["requests"])))
    return out


def paged_table(ref: ModelConfig, lang: str, lengths=(37, 1000, 4096, 4100)) -> list[dict]:
    p = ops_sv.paged_blocks(ref, list(lengths))
    return [_row(lang, ("request_tokens", f"{r['tokens']:,}"), ("blocks", r["blocks"]),
                 ("paged", _b(r["paged"])), ("paged_waste_tokens", r["paged_waste"]),
                 ("reserved_for", _b(r["reserved"]), dict(reserve=f"{p['reserve']:,}")),
                 ("reserved_waste_tokens", f"{r['reserved_waste']:,}")) for r in p["rows"]]


def batching_table(lang: str, slots=(4, 8, 16)) -> list[dict]:
    lengths = ops_sv.output_lengths(SIM["n"], 0, SIM["lo"], SIM["hi"])
    out = []
    for s in slots:
        r = ops_sv.batching(lengths, s)
        out.append(_row(lang, ("slots", s), ("static_steps", f"{r['static_steps']:,}"),
                        ("static_busy", f"{_pct(r['static_util'])}%"),
                        ("continuous_steps", f"{r['continuous_steps']:,}"),
                        ("continuous_busy", f"{_pct(r['continuous_util'])}%")))
    return out


def prefix_table(ref: ModelConfig, lang: str, system_tokens: int, requests: int = PREFIX["requests"]) -> list[dict]:
    out = []
    for label, n in (("default_system", system_tokens), ("long_system", PREFIX["tokens"])):
        r = ops_sv.prefix_caching(ref, n, requests)
        out.append(_row(lang, ("shared_prefix", say(f"serving.label_{label}", lang)), ("tokens", f"{n:,}"),
                        ("shareable_whole_blocks", f"{r['shared']:,}"),
                        ("kv_saved", _b(r["kv_saved"]), dict(requests=requests)),
                        ("prefill_flops_saved", _flops(r["flops_saved"]))))
    return out


def block_layout(qtype: str, lang: str) -> str:
    """One block's fields and their bytes: 'd: fp16 scale (2 B) + ...' in the page's language."""
    layout = formats.GGUF_BLOCK_FIELDS.get(qtype)
    if layout is None:
        return ""
    return " + ".join(f"{say(f'serving.field_{n}', lang)} ({b} B)" for n, b in layout["fields"])


def gguf_table(report: dict, lang: str) -> list[dict]:
    return [_row(lang, ("type", r["type"]), ("tensors", r["tensors"]), ("weights", f"{r['weights']:,}"),
                 ("bytes", _b(r["bytes"])), ("block_2", r["block"]), ("bytes_block", r["block_bytes"]),
                 ("bits_weight", f"{r['bits_per_weight']:g}"), ("weights_per_scale", r["sub_block"]),
                 ("block_layout", block_layout(r["type"], lang))) for r in report["rows"]]


def block_table(example: dict, lang: str) -> list[dict]:
    return [_row(lang, ("j", j), ("integer_q", q), ("d_q", f"{w:.6f}"))
            for j, (q, w) in enumerate(zip(example["q"], example["w"]))]


def group_table(rows: list[dict], lang: str) -> list[dict]:
    return [_row(lang, ("bits", r["bits"]), ("group", say("serving.whole_row", lang, group=r["group"])
                                                    if r["per_row"] else r["group"]),
                 ("bits_weight_with_fp16_scales", f"{r['bits_per_weight']:.3f}"),
                 ("relative_error_w_w", f"{r['rel_err']:.4f}")) for r in rows]


def kv_quant_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("kv_format", r["kv_dtype"]), ("bytes_per_token", f"{r['bytes_per_token']:,}"),
                 ("4k_requests_on_141_gb", r["requests"])) for r in formats.kv_quant_rows(ref)]


def float_table(lang: str) -> list[dict]:
    return [_row(lang, ("format", r["dtype"]), ("bits_2", r["bits"]), ("mantissa_bits", r["mantissa_bits"]),
                 ("max", f"{r['max']:.4g}"), ("smallest_normal", f"{r['smallest_normal']:.3g}"),
                 ("gap_above_1", f"{r['rel_step']:g}")) for r in formats.float_formats()]


def spec_rows(ref: ModelConfig, lang: str) -> list[dict]:
    c = ops_sv.draft_cost_ratio(costs.reference_config(DRAFT_LABEL), ref)
    return [_row(lang, ("acceptance_a", f"{r['a']:g}"), ("draft_length_k", r["k"]),
                 ("tokens_per_verification_e", f"{r['expected']:.2f}"),
                 ("speed_up", f"{r['speedup']:.2f}×")) for r in ops_sv.spec_table(c)]


def swa_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("context", f"{r['context']:,}"), ("full_attention_kv", _b(r["full"])),
                 ("window_kv", _b(r["windowed"]), dict(window=f"{r['window']:,}")))
            for r in ops_sv.sliding_window(ref, window=SWA_WINDOW)]


def variants_table(ref: ModelConfig, lang: str) -> list[dict]:
    mla = ops_sv.MLA_DEEPSEEK_V3
    return [_row(lang, ("design", r["variant"]),
                 ("what_is_cached", say(f"serving.variant_{r['variant']}", lang, **mla)),
                 ("kv_heads", r["kv_heads"] if r["kv_heads"] else "-"),
                 ("bytes_per_token", f"{r['bytes_per_token']:,}"), ("vs_mha", f"{r['vs_mha']:.3f}"))
            for r in ops_sv.attention_variants(ref)]


def tp_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("tp_degree", r["tp"]), ("works", "✓" if r["valid"] else "✗"),
                 ("query_heads_per_gpu", f"{r['q_heads']:g}"), ("kv_heads_per_gpu", r["kv_heads"]),
                 ("copies_of_each_kv_head", r["kv_copies"]), ("weights_per_gpu", _gb(r["weights_per_gpu"])),
                 ("kv_per_token_per_gpu", _b(r["kv_per_token_per_gpu"])),
                 ("kv_tokens_per_gpu", f"{r['tokens_per_gpu']:,}" if r["valid"] else "-"))
            for r in ops_sv.tensor_parallel(ref)]


def h200_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("phase", r["phase"]), ("s", f"{r['S']:,}"),
                 ("intensity_flop_b", f"{r['intensity']:.1f}"), ("h200_ridge", f"{r['ridge']:.0f}"),
                 ("bound_by", _bound(lang, r["bound"])),
                 ("bound_per_token_ms", f"{r['ms_per_token']:.3f}"))
            for r in serving_phases.h200_phases(ref, PHASE_LENGTHS, DECODE_CONTEXT)]


def measured_table(result: dict, lang: str) -> list[dict]:
    return [_row(lang, ("phase", r["phase"]), ("s_context", r["S"]),
                 ("measured_ms_token", f"{r['ms_per_token']:.2f}"),
                 ("roofline_ms_token", f"{r['predicted_ms_per_token']:.2f}"),
                 ("predicted_bound", _bound(lang, r["bound"]))) for r in result["rows"]]


def roofline_points(ref: ModelConfig) -> list[dict]:
    """The H200 phases of h200_table with a label each, for the roofline figure."""
    rows = serving_phases.h200_phases(ref, PHASE_LENGTHS, DECODE_CONTEXT)
    return [dict(r, label=f"{r['phase']} S={r['S']:,}") for r in rows]


# ---- the page's captions: (zh, en) templates filled with texts.numbers() and the page's own live values ----
MEASURE = dict(prefill=(8, 128), context=128, steps=8)     # what the "measure" button runs on the loaded model
def caption(key: str, lang: str, numbers: dict, **live) -> str:
    """A page caption in `lang`, filled from texts.numbers() and the page's live values."""
    return say(f"serving.cap_{key}", lang, **{**numbers, **{k: str(v) for k, v in live.items()}})


def measured_live(result: dict) -> dict:
    """The live values of the 'measured' caption."""
    p = result["peaks"]
    return dict(dtype=p["dtype"], flops=costs.human(p["flops_per_s"]), bw=costs.human(p["bytes_per_s"], "B"),
                ridge=f"{p['ridge']:.1f}")


def caption_example() -> str:
    """The small example's scores as the text box starts with them."""
    return ", ".join(f"{x:g}" for x in EXAMPLE["scores"])


def draft_cost(ref: ModelConfig) -> float:
    """c of the speculative-decoding example: the draft's weight bytes over the target's."""
    return ops_sv.draft_cost_ratio(costs.reference_config(DRAFT_LABEL), ref)


def measure_live() -> dict:
    """The live values of the 'measure' caption (what the button will run)."""
    return dict(p=" / ".join(str(n) for n in MEASURE["prefill"]), ctx=MEASURE["context"], steps=MEASURE["steps"])
