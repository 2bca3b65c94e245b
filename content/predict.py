"""The predict-first questions in words, (中文, English), from what ops/lab/predict_data.py computed on the running
model.

Each function returns a Question: the question, one label per option (keyed by the option's id, in the order
quiz gave them), the right option's id, and the sentence the reveal says: where in the picture the answer is.
The sentences are assets/words/predict.<lang>.json's; the numbers are filled in here.
"""
from __future__ import annotations

from dataclasses import dataclass

from content.words import LANGS, say

Pair = tuple[str, str]


@dataclass(frozen=True)
class Question:
    question: Pair
    options: dict            # option id -> label: a Pair, or one string for both languages
    answer: object           # the right option's id
    why: Pair


def _pair(key: str, **fields) -> Pair:
    """One text in every language (zh, en), filled with the same fields."""
    return tuple(say(key, lang, **fields) for lang in LANGS)


def _row(r: int) -> str:
    return "embed" if r == 0 else f"L{r - 1}"


def lens(q: dict, pos: int, token: str) -> Question:
    """At which state does the logit lens first rank the final answer top-1 (ops.lab.predict_data.lens_first_top1)."""
    return Question(_pair("predict.lens_question", pos=pos, token=token), {r: _row(r) for r in q["options"]},
                    q["answer"], _pair("predict.lens_why", pos=pos, row=_row(q["answer"]), token=token))


def attention(q: dict, query: int, labels: list[str], layer: int, head: int) -> Question:
    """Which key gets the most weight from one query row (ops.lab.predict_data.top_key)."""
    lab = {j: f"{j}: {labels[j]}" for j in q["options"]}
    j, w = q["answer"], q["weight"]
    return Question(
        _pair("predict.attention_question", layer=layer, head=head, query=query, query_label=labels[query]),
        lab, j, _pair("predict.attention_why", query=query, query_label=labels[query], column=j, key_label=labels[j],
                      weight=f"{w:.2f}"))


ABLATION_LABELS = {"head": "predict.ablation_head", "attn": "predict.ablation_attn", "mlp": "predict.ablation_mlp",
                   "norope": "predict.ablation_norope"}


def ablation(q: dict, layer: int, head: int, mode: Pair, token: str) -> Question:
    """Which ablation of one layer moves the target's probability most (ops.lab.predict_data.strongest_ablation)."""
    lab = {k: tuple(say(ABLATION_LABELS[k], lang, h=head, mode=m) for lang, m in zip(LANGS, mode))
           for k in q["options"]}
    best, before, after = q["answer"], q["before"], q["after"]
    rows = [say("predict.list_sep", lang).join(f"{lab[k][i]} {after[k]:.3f}" for k in q["options"])
            for i, lang in enumerate(LANGS)]
    return Question(
        _pair("predict.ablation_question", layer=layer, token=token, before=f"{before:.3f}"), lab, best,
        tuple(say("predict.ablation_why", lang, best=lab[best][i], token=token, rows=rows[i])
              for i, lang in enumerate(LANGS)))


def greedy(q: dict) -> Question:
    """Whether and where greedy float32 and bfloat16 texts part (ops.lab.predict_data.greedy_parting)."""
    n = q["new_tokens"]
    lab = {"never": _pair("predict.greedy_never", n=n)}
    lab.update({j: _pair("predict.greedy_part", a=a, z=z) for j, (a, z) in enumerate(q["ranges"])})
    part = q["part"]
    why = (_pair("predict.greedy_same_why", n=n) if part is None else
           _pair("predict.greedy_part_why", token=part + 1))
    return Question(_pair("predict.greedy_question", n=n), lab, q["answer"], why)


GREEDY_SECTION = _pair("predict.greedy_section")
