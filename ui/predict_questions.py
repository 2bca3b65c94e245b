"""The predict-first questions of the pages (ui/predict.gate's ask()): ops.lab.predict_data computes the answer on the
running model, content.predict words it, token ids become the labels the page's pictures show."""
from __future__ import annotations

import streamlit as st

from content import predict as words
from ops.lab import predict_data
from viz.labels import pieces, visible

from . import experiments_state
from .session import t


def _token(tok, i: int) -> str:
    return f"“{visible(pieces(tok, [i])[0])}”"


def lens(model, trace, b: int):
    """Logit lens (lm_head's fold): at which state the lens first ranks the final answer top-1."""
    q = predict_data.lens_first_top1(model, trace, b)
    return words.lens(q, q["position"], _token(model.tokenizer, q["final_id"]))


def attention(one: dict, n: int, labels: list[str], i: int, h: int):
    """Attention: which key the last real query of row b gives the most weight (one: stage_data.attention_head)."""
    return words.attention(predict_data.top_key(one["probs"][n - 1], n), n - 1, [visible(x) for x in labels], i, h)


def ablation(model, base, ids: list[int], s: int, target: int, i: int, h: int, mode: str, mode_words):
    """Experiments: which of the layer's ablations moves the target most; its runs kept for every session."""
    key = experiments_state.model_key() + (tuple(ids), "quiz-ablation", s, target, i, h, mode)
    q = experiments_state.kept(key, lambda: predict_data.strongest_ablation(model, base, ids, s, target, i, h, mode),
                               share=True)
    return None if q is None else words.ablation(q, i, h, mode_words, _token(model.tokenizer, target))


def greedy(model, ids: list[int]):
    """Precision: whether and where the greedy bf16 text parts from float32's; None when there is no bf16 to ask
    about. The data (with both texts) is kept for the section that shows them: greedy_data()."""
    q = greedy_data(model, ids)
    return None if q is None else words.greedy(q)


def greedy_data(model, ids: list[int]) -> dict | None:
    key = experiments_state.model_key() + (tuple(ids), "quiz-greedy")
    with_texts = lambda: _with_texts(model, predict_data.greedy_parting(model, ids))      # noqa: E731
    return experiments_state.kept(key, with_texts, t("正在用 float32 和 bfloat16 各贪心生成一段……",
                                                     "Greedy decoding on float32 and on bfloat16..."), share=True)


def _with_texts(model, q):
    """q with each format's text split where the two part: {"float32": (same, own), "bfloat16": (same, own)}."""
    if q is not None:
        cut = len(q["f32"]) if q["part"] is None else q["part"]
        text = lambda ids: model.tokenizer.decode(ids, skip_special_tokens=True)      # noqa: E731
        q["texts"] = {name: (text(q[k][:cut]), text(q[k][cut:])) for name, k in (("float32", "f32"),
                                                                                 ("bfloat16", "bf16"))}
    return q


def show_greedy(q: dict):
    """The two greedy texts, each as plain text (no markup from the model's words), the part after the first
    difference in ⟦ ⟧."""
    for name, (same, own) in q["texts"].items():
        st.caption(name)
        st.code(same + (f"⟦{own}⟧" if own else ""), language=None, wrap_lines=True)
