"""The Generate page's longer sentences in both languages (assets/words/generate.<lang>.json), filled with the
run's own numbers. No streamlit, no model: numbers in, text out (lang "zh" or "en")."""
from __future__ import annotations

from content.words import LANGS, say
from ops.arith.costs import human

CHUNKS = (0, 4, 16, 64)           # prefill chunk sizes offered (0: the whole prompt in one pass)
DRAFTS = ("", "prompt-lookup")    # "" = no draft


def _pair(key: str) -> tuple[str, str]:
    """A widget's help in every language (zh, en), for the page's t()."""
    return tuple(say(key, lang) for lang in LANGS)


FAST_HELP = _pair("generate.fast_help")
MIN_P_HELP = _pair("generate.min_p_help")
CHUNK_HELP = _pair("generate.chunk_help")
DRAFT_HELP = _pair("generate.draft_help")


def chunk_label(C: int, lang: str) -> str:
    return say("generate.chunk_off", lang) if not C else f"{C}"


def draft_label(draft: str, lang: str) -> str:
    return say("generate.draft_none", lang) if not draft else say("generate.draft_lookup", lang)


def greedy_only(T: float, lang: str) -> str:
    return say("generate.greedy_only", lang, T=f"{T:g}")


def question(lang: str) -> str:
    return say("generate.question", lang)


def why(greedy: bool, T: float, seed: int, lang: str) -> str:
    if greedy:
        return say("generate.why_greedy", lang)
    return say("generate.why_sampled", lang, T=f"{T:g}", seed=seed)


def preview_title(greedy: bool, lang: str, n: int) -> str:
    """The preview chart's title: its n candidates, and what greedy or sampling does with them."""
    return say("generate.preview_title_greedy" if greedy else "generate.preview_title_sampled", lang, n=n)


def finished(stopped: str, budget: int, lang: str) -> str:
    if stopped == "eos":
        return say("generate.finished_eos", lang)
    return say("generate.finished_budget", lang, budget=budget)


def chat_caption(chat: bool, S0: int, several: bool, lang: str) -> str:
    state = say("generate.chat_on" if chat else "generate.chat_off", lang)
    return say("generate.chat_caption_several" if several else "generate.chat_caption", lang, state=state, S0=S0)


def latex(lang: str) -> str:
    return say("generate.latex", lang)


def nothing_yet(S0: int, lang: str) -> str:
    return say("generate.nothing_yet", lang, S0=S0)


def fast_caption(path: str, weight_dtype: str, compute_dtype: str, lang: str) -> str:
    return say("generate.fast_caption", lang, path=path, weight_dtype=weight_dtype, compute_dtype=compute_dtype)


def speed_metrics(S0: int, pre: float, dec: float | None, per_tok: int, lang: str) -> list[tuple[str, str]]:
    return [(say("generate.metric_prefill", lang, S0=S0), f"{pre:.0f} ms"),
            (say("generate.metric_decode", lang), f"{dec:.0f} ms" if dec else "—"),
            (say("generate.metric_speed", lang), f"{1000 / dec:.1f} tok/s" if dec else "—"),
            (say("generate.metric_kv", lang), human(per_tok, "B"))]


def option_metrics(r: dict, lang: str) -> list[tuple[str, str]]:
    """ops.lab.generate_data.generation_report's figures as label / value pairs: passes, the prefill's when it took
    more than one, then the draft's."""
    out = [(say("generate.metric_passes", lang), f"{r['forward_passes']}")]
    if r["prefill_passes"] > 1:
        out += [(say("generate.metric_prefill_passes", lang), f"{r['prefill_passes']}"),
                (say("generate.metric_prefill_largest", lang), f"{r['prefill_largest']}")]
    if r["draft"]:
        rate = "—" if r["acceptance"] is None else f"{r['acceptance']:.0%}"
        out += [(say("generate.metric_drafted", lang), f"{r['proposed']}"),
                (say("generate.metric_accepted", lang), f"{r['accepted']}"),
                (say("generate.metric_acceptance", lang), rate),
                (say("generate.metric_saved", lang), f"{r['passes_saved']}")]
    return out


def option_text(r: dict, lang: str) -> str:
    """One paragraph on what the prefill chunk and the draft did in this run (generation_report's numbers)."""
    draft = ""
    if r["draft"]:
        rate = "" if r["acceptance"] is None else say("generate.run_rate", lang, rate=f"{r['acceptance']:.0%}")
        draft = say("generate.run_draft", lang, proposed=r["proposed"], accepted=r["accepted"], rate=rate,
                    saved=r["passes_saved"])
    return say("generate.run_text", lang, n=r["tokens"], fp=r["forward_passes"], pp=r["prefill_passes"],
               big=r["prefill_largest"], S=r["prompt_tokens"], draft=draft)


def prefill_vs_decode(S0: int, passes: int, pre: float, dec: float | None, per_tok: int, L: int, nkv: int, hd: int,
                      kv_n: int, kv_bytes: int, lang: str) -> str:
    nbytes = per_tok // (2 * L * nkv * hd)           # bytes per element of the cache's dtype (kv_bytes_per_token's)
    one = passes == 1
    return say("generate.pvd_text", lang, S0=S0, pre=f"{pre:.0f}", L=L, nkv=nkv, hd=hd, nbytes=nbytes, kv_n=kv_n,
               how=say("generate.pvd_how_one", lang) if one else say("generate.pvd_how_many", lang, passes=passes),
               serve=say("generate.pvd_serve_one", lang, S0=S0) if one else say("generate.pvd_serve_many", lang),
               dec=say("generate.pvd_dec", lang, dec=f"{dec:.0f}") if dec else "",
               per=human(per_tok, "B"), now=human(kv_bytes, "B"))
