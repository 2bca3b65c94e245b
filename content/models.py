"""The words of the Models page (two models side by side) and of the Scale page's config comparison, in both
languages: each config row's name and what it changes in the operator, the tables built from the rows of
ops/lab/models_data.py, the tokenizer samples, and the placeholders of assets/explain/models.<lang>.md. The
words are assets/words/models.<lang>.json's, the samples assets/texts/tokenizer_samples.json's. Every number
comes from the rows (computed from the two configs); no sentence assumes which two models these are.
Never imports streamlit.
"""
from __future__ import annotations

import json
from pathlib import Path

from content.words import LANGS, say
from ops.arith import costs
from ops.engine.config import ModelConfig

# the same three texts through both tokenizers (the user's prompt is added as a fourth): zh, en, code
SAMPLES = json.loads((Path(__file__).resolve().parents[1] / "assets" / "texts" / "tokenizer_samples.json")
                     .read_text("utf-8"))
SAMPLE_NAMES = ("zh", "en", "code", "prompt")       # assets/words/models.<lang>.json's sample_<name>


def row_name(key: str, lang: str) -> str:
    """A config row's name (a key of ops.lab.models_data.ROWS): assets/words/models.<lang>.json's name_<key>."""
    return say(f"models.name_{key}", lang)


def value_text(key: str, v, lang: str) -> str:
    """A row's value as the table shows it."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return say("models.yes" if v else "models.no", lang)
    if key == "rms_norm_eps":
        return f"{v:g}"
    if key == "kv_per_token":
        return f"{v:,} B"
    if isinstance(v, float):
        return f"{v:,.3f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def bytes_text(row: dict, side: str, lang: str) -> str:
    """What a row drives on one side ("a" or "b"): KV bytes per token, or parameters with their bf16 bytes."""
    if row.get("kind") is None:
        return ""
    if row["kind"] == "kv":
        return f"{row['bytes_' + side]:,} B / token"
    return f"{costs.human(row['cost_' + side])} · {costs.human(row['bytes_' + side], 'B')}"


def effect_text(row: dict, lang: str) -> str:
    """What the row changes in the operator, with the row's own numbers filled in."""
    fill = {"a": row["a"], "b": row["b"]}
    if row["key"] == "head_dim":
        fill.update(sqrt_a=f"{row['a'] ** 0.5:.2f}", sqrt_b=f"{row['b'] ** 0.5:.2f}")
    if row["key"] == "intermediate_ratio":
        fill.update(I_a=f"{row['I_a']:,}", I_b=f"{row['I_b']:,}")
    if row["key"] == "rope_theta":
        fill.update(wave_a=f"{row['wave_a']:,.0f}", wave_b=f"{row['wave_b']:,.0f}")
    if row["key"] == "vocab_size":
        fill["tok"] = "" if "tok_a" not in row else say("models.effect_vocab_tok", lang, tok_a=f"{row['tok_a']:,}",
                                                        tok_b=f"{row['tok_b']:,}")
    if row["key"] == "special_tokens":
        fill.update(both=len(row["both"]), only_a=len(row["only_a"]), only_b=len(row["only_b"]))
    return say(f"models.effect_{row['key']}", lang, **fill)


def config_table(rows: list[dict], lang: str, effects: bool = True) -> list[dict]:
    """The difference table: one line per row of ops.lab.models_data.config_rows (A and B named above it). The KV
    cache's bytes per token depend on several rows (layers, KV heads, head dim): the first of them gives the figure,
    a later one with the same figures points up to it (↑) rather than repeat it, and the KV-cache row itself, whose
    A and B are that figure, leaves the cells empty."""
    out, shown = [], set()
    for r in rows:
        both = (bytes_text(r, "a", lang), bytes_text(r, "b", lang))
        said = r.get("kind") == "kv" and both in shown      # the KV bytes per token of L, nkv, hd: said once
        mark = "" if r["key"] == "kv_per_token" else "↑"      # that row's own A and B already give the figure
        line = {"": "=" if r["same"] else "≠", say("models.col_config", lang): row_name(r["key"], lang),
                "A": value_text(r["key"], r["a"], lang), "B": value_text(r["key"], r["b"], lang),
                say("models.col_a_bytes", lang): mark if said else both[0],
                say("models.col_b_bytes", lang): mark if said else both[1]}
        if r.get("kind") == "kv":
            shown.add(both)
        if effects:
            line[say("models.col_changes", lang)] = effect_text(r, lang)
        out.append(line)
    return out


def effect_table(rows: list[dict], lang: str) -> list[dict]:
    """What each row changes in the operators, one line per row of ops.lab.models_data.config_rows."""
    return [{say("models.col_config", lang): row_name(r["key"], lang),
             say("models.col_changes", lang): effect_text(r, lang)} for r in rows]


def special_lines(rows: list[dict], lang: str) -> list[tuple[str, list[str]]]:
    """(label, names) of the special tokens in both, only in A, only in B (empty when the row is absent)."""
    for r in rows:
        if r["key"] == "special_tokens":
            return [(say("models.special_both", lang), r["both"]), (say("models.special_only_a", lang), r["only_a"]),
                    (say("models.special_only_b", lang), r["only_b"])]
    return []


def sample_name(name: str, lang: str) -> str:
    """A sample's name (SAMPLE_NAMES); any other name as it is."""
    return say(f"models.sample_{name}", lang) if name in SAMPLE_NAMES else name


def atlas_table(rows: list[dict], name_a: str, name_b: str, lang: str) -> list[dict]:
    """The head atlas counts of both models (ops.lab.models_data.atlas_rows), with their shares."""
    names = atlas_names(lang)
    return [{say("models.col_label", lang): names.get(r["kind"], r["kind"]), f"A · {name_a}": r["a"],
             "A %": f"{100 * r['share_a']:.0f}%", f"B · {name_b}": r["b"], "B %": f"{100 * r['share_b']:.0f}%"}
            for r in rows]


def token_table(rows: list[dict], lang: str) -> list[dict]:
    """Tokens per character of each sample through both tokenizers."""
    return [{say("models.col_text", lang): sample_name(r["name"], lang),
             say("models.col_chars", lang): r["chars"], say("models.col_utf8", lang): r["bytes"],
             "A tokens": r["n_a"], "B tokens": r["n_b"],
             say("models.col_a_per_char", lang): f"{r['per_char_a']:.2f}",
             say("models.col_b_per_char", lang): f"{r['per_char_b']:.2f}",
             say("models.col_same_pieces", lang): r["shared"]} for r in rows]


def next_table(rows: list[dict], lang: str) -> list[dict]:
    """The next-token union as a table (probabilities in %, '—' where the text is not one token of that side)."""
    pct = lambda p: "—" if p is None else f"{100 * p:.2f}%"
    rank = lambda r: "—" if r is None else str(r)
    return [{say("models.col_next", lang): repr(r["text"]), "A p": pct(r["p_a"]),
             say("models.col_a_rank", lang): rank(r["rank_a"]), "B p": pct(r["p_b"]),
             say("models.col_b_rank", lang): rank(r["rank_b"])} for r in rows]


def atlas_names(lang: str) -> dict:
    """The head atlas's kinds by name (assets/words/models.<lang>.json's atlas_<kind>)."""
    return {k: say(f"models.atlas_{k}", lang) for k in ("previous", "induction", "sink", "self", "broad")}


# ---- the explanation's placeholders ------------------------------------------------------------------------------
def _sentences(a: ModelConfig, b: ModelConfig, name_a: str, name_b: str) -> dict:
    """Sentences chosen by the two configs' facts (each true of whichever pair is loaded), in every language."""
    ba, bb = a.attention_bias, b.attention_bias
    has, hasnt = (name_a, name_b) if ba else (name_b, name_a)
    ta, tb = a.tie_word_embeddings, b.tie_word_embeddings
    tied, untied = (name_a, name_b) if ta else (name_b, name_a)
    out = {}
    for lang in LANGS:
        out[f"bias_sentence_{lang}"] = (say("models.bias_both" if ba else "models.bias_neither", lang) if ba == bb
                                        else say("models.bias_one", lang, has=has, hasnt=hasnt))
        out[f"tie_sentence_{lang}"] = (say("models.tie_both" if ta else "models.tie_neither", lang) if ta == tb
                                       else say("models.tie_one", lang, tied=tied, untied=untied))
    more, fewer = (name_a, name_b) if costs.kv_bytes_per_token(a) >= costs.kv_bytes_per_token(b) else (name_b, name_a)
    out["kv_more"], out["kv_fewer"] = more, fewer
    return out


def numbers(a: ModelConfig, b: ModelConfig, name_a: str, name_b: str, rows: list[dict]) -> dict:
    """Placeholders of assets/explain/models.<lang>.md: each model's figures with the suffix _a or _b."""
    out = dict(name_a=name_a, name_b=name_b, differ=str(sum(not r["same"] for r in rows)), rows=str(len(rows)))
    for tag, c in (("a", a), ("b", b)):
        out.update({f"H_{tag}": c.hidden_size, f"L_{tag}": c.num_hidden_layers, f"nh_{tag}": c.num_attention_heads,
                    f"nkv_{tag}": c.num_key_value_heads, f"rep_{tag}": c.n_rep, f"hd_{tag}": c.head_dim,
                    f"I_{tag}": f"{c.intermediate_size:,}", f"V_{tag}": f"{c.vocab_size:,}",
                    f"theta_{tag}": f"{c.rope_theta:,.0f}", f"eps_{tag}": f"{c.rms_norm_eps:g}",
                    f"kv_{tag}": f"{costs.kv_bytes_per_token(c):,}",
                    f"kv_4k_{tag}": costs.human(costs.kv_cache_bytes(c, 4096), "B"),
                    f"params_{tag}": costs.human(costs.total_params(c))})
    out.update(_sentences(a, b, name_a, name_b))
    return {k: str(v) for k, v in out.items()}
