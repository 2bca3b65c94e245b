"""The interview page's tables and example prompts: ops/lab/interview.py's figures, labelled in either language
from assets/words/interview.<lang>.json. No streamlit, no model: rows in, rows out."""
from __future__ import annotations

from pathlib import Path

from content.words import say
from ops.arith.costs import human

# prompts that repeat themselves (two copies of one file of code, a quoted passage), where copying from the prompt pays
_TEXTS = Path(__file__).resolve().parents[1] / "assets" / "texts"
CODE = (_TEXTS / "interview_code.txt").read_text("utf-8")
QUOTE = (_TEXTS / "interview_quote.txt").read_text("utf-8")
SHORT = "The capital of France is"
CHUNKS = (None, 32, 8)
NEW_TOKENS = dict(prefill=8, batch=32, lookup=32)


def _g(x: float) -> str:
    return f"{x:.3g}"


def caption(name: str, lang: str) -> str:
    """One tab's caption (prefill, batch, lookup)."""
    return say(f"interview.caption_{name}", lang)


def prefill_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{say("interview.col_chunk", lang): r["chunk"], say("interview.col_passes", lang): r["passes"],
             say("interview.col_max_tokens", lang): r["max_tokens_per_pass"],
             say("interview.col_longest_ms", lang): f"{1000 * r['max_pass_s']:.1f}",
             say("interview.col_total_ms", lang): f"{1000 * r['total_s']:.1f}",
             say("interview.col_first_logits", lang): _g(r["logits_max_diff"]),
             say("interview.col_same_greedy", lang): "✓" if r["same_tokens"] else "✗"} for r in rows]


def split_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{say("interview.col_splits", lang): r["splits"], say("interview.col_keys", lang): r["keys"],
             say("interview.col_vs_trace", lang): _g(r["max_diff_vs_trace"]),
             say("interview.col_vs_eager", lang): _g(r["max_diff_vs_eager"]),
             "max |context|": _g(r["scale"])} for r in rows]


def invariance_rows(result: dict, lang: str, limit: int = 12) -> list[dict]:
    """The operators in pipeline order from the first that differs (the identical ones before it in one line)."""
    ops = result["operators"]
    first = next((k for k, r in enumerate(ops) if r["max_diff"] > 0), len(ops))
    same = [{say("interview.col_tensor", lang): say("interview.first_tensors", lang, n=first, name=ops[0]["name"]),
             say("interview.col_max_diff", lang): "0"}] if first else []
    return same + [{say("interview.col_tensor", lang): r["name"],
                    say("interview.col_max_diff", lang): _g(r["max_diff"]),
                    say("interview.col_max_value", lang): _g(r["scale"])} for r in ops[first:first + limit]]


def lookup_rows(gens: dict, lang: str) -> list[dict]:
    """gens: label -> (plain Generation, prompt-lookup Generation)."""
    out = []
    for label, (plain, spec) in gens.items():
        rate = spec.accepted / spec.proposed if spec.proposed else 0.0
        out.append({say("interview.col_prompt", lang): label, say("interview.col_tokens", lang): len(spec.token_ids),
                    say("interview.col_same_as_greedy", lang): "✓" if spec.token_ids == plain.token_ids else "✗",
                    say("interview.col_proposed", lang): spec.proposed,
                    say("interview.col_accepted", lang): spec.accepted,
                    say("interview.col_acceptance", lang): f"{rate:.0%}",
                    say("interview.col_passes", lang): f"{spec.forward_passes} / {plain.forward_passes}",
                    say("interview.col_saved", lang): spec.passes_saved})
    return out


def kv_rows(r: dict, lang: str) -> list[dict]:
    return [{"B": x["B"], say("interview.col_context", lang): f"{x['context']:,}",
             say("interview.col_weight_bytes", lang): human(x["weight_bytes"], "B"),
             say("interview.col_kv_bytes", lang): human(x["kv_bytes"], "B"),
             say("interview.col_kv_share", lang): f"{x['kv_share']:.0%}"} for x in r["rows"]]


def outlier_rows(figs: list[dict], lang: str) -> list[dict]:
    return [{say("interview.col_tensor", lang): f"layers.{f['layer']}.{f['name']}",
             say("interview.col_top_channels", lang): ", ".join(map(str, f["top_channels"])),
             "max |x|": _g(f["max_abs"]), say("interview.col_median", lang): _g(f["median_abs"]),
             say("interview.col_int8_step", lang): _g(f["step"]),
             say("interview.col_step_median", lang): _g(f["step_over_median"]),
             say("interview.col_zero_tensor", lang): f"{f['per_tensor']['zero_share']:.1%}",
             say("interview.col_zero_channel", lang): f"{f['per_channel']['zero_share']:.1%}",
             say("interview.col_rel_error", lang):
                 f"{f['per_tensor']['mean_rel_error']:.1%} / {f['per_channel']['mean_rel_error']:.1%}",
             say("interview.col_salient", lang): f"{f['salient_share']:.1%}"}
            for f in figs]


# ---- the page's sentences with live values ---------------------------------------------------------------------
def split_intro(lang: str, b: int, i: int, keys: int) -> str:
    return say("interview.split_intro", lang, b=b, i=i, keys=keys)


def label(name: str, lang: str) -> str:
    """A short label: first, logits, parts, alone, batched, weights, kv_tok, crossover, code, quote, step_bytes,
    kv_bytes (assets/words/interview.<lang>.json's label_<name>)."""
    return say(f"interview.label_{name}", lang)


def two_texts(lang: str, inv: dict) -> str:
    """The greedy text alone and batched, one line each."""
    return f"{label('alone', lang)}: {inv['solo_text']}\n{label('batched', lang)}: {inv['batched_text']}"


def not_parted(lang: str, n: int) -> str:
    return say("interview.not_parted", lang, n=n)


def kv_caption(lang: str, name: str) -> str:
    return say("interview.kv_caption", lang, name=name)


def own_kv_caption(lang: str, name: str, own: dict) -> str:
    kv, cross = f"{own['kv_bytes_per_token']:,}", f"{own['crossover_tokens']:,.0f}"
    return say("interview.own_kv_caption", lang, name=name, kv=kv, cross=cross)


def outlier_caption(lang: str, loud: int) -> str:
    return say("interview.outlier_caption", lang, loud=loud)
