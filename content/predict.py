"""The predict-first questions in words, (中文, English), from what ops/lab/quiz.py computed on the running model.

Each function returns a Question: the question, one label per option (keyed by the option's id, in the order
quiz gave them), the right option's id, and the sentence the reveal says: where in the picture the answer is.
"""
from __future__ import annotations

from dataclasses import dataclass

Pair = tuple[str, str]


@dataclass(frozen=True)
class Question:
    question: Pair
    options: dict            # option id -> label: a Pair, or one string for both languages
    answer: object           # the right option's id
    why: Pair


def _row(r: int) -> str:
    return "embed" if r == 0 else f"L{r - 1}"


def lens(q: dict, pos: int, token: str) -> Question:
    """At which state does the logit lens first rank the final answer top-1 (ops.lab.quiz.lens_first_top1)."""
    row = _row(q["answer"])
    return Question(
        (f"位置 {pos} 的最终答案是 {token}。把这一列从 embed 开始逐层往后读：logit lens 最早在哪一行就把它排到"
         "第一？",
         f"The final answer at position {pos} is {token}. Reading that column layer by layer from the "
         "embedding on: at which row does the logit lens first rank it top-1?"),
        {r: _row(r) for r in q["options"]}, q["answer"],
        (f"看图中位置 {pos} 那一列：{row} 行第一次写着 {token}；比它早的行排第一的都是别的 token。",
         f"Look at the column of position {pos}: row {row} is the first to read {token}; every earlier row has "
         "another token on top."))


def attention(q: dict, query: int, labels: list[str], layer: int, head: int) -> Question:
    """Which key gets the most weight from one query row (ops.lab.quiz.top_key)."""
    lab = {j: f"{j}: {labels[j]}" for j in q["options"]}
    j, w = q["answer"], q["weight"]
    return Question(
        (f"层 {layer} 的头 {head}：查询位置 {query}（“{labels[query]}”）把最多的注意力给了哪个键位置？",
         f"Layer {layer}, head {head}: which key position gets the most weight from query position {query} "
         f"(“{labels[query]}”)?"),
        lab, j,
        (f"看左图第 {query} 行（查询 “{labels[query]}”）：最亮的格子在第 {j} 列（“{labels[j]}”），权重 {w:.2f}。",
         f"Look at row {query} of the left map (query “{labels[query]}”): its brightest cell is column {j} "
         f"(“{labels[j]}”), weight {w:.2f}."))


ABLATION_LABELS = {"head": ("消融头 {h}（{mode}）", "ablate head {h} ({mode})"),
                   "attn": ("去掉这一层的注意力", "remove the layer's attention"),
                   "mlp": ("去掉这一层的 MLP", "remove the layer's MLP"),
                   "norope": ("这一层去掉 RoPE", "no RoPE in the layer")}


def ablation(q: dict, layer: int, head: int, mode: Pair, token: str) -> Question:
    """Which ablation of one layer moves the target's probability most (ops.lab.quiz.strongest_ablation)."""
    lab = {k: tuple(x.format(h=head, mode=m) for x, m in zip(ABLATION_LABELS[k], mode)) for k in q["options"]}
    best, before, after = q["answer"], q["before"], q["after"]
    rows = "；".join(f"{lab[k][0]} {after[k]:.3f}" for k in q["options"])
    rows_en = "; ".join(f"{lab[k][1]} {after[k]:.3f}" for k in q["options"])
    return Question(
        (f"在第 {layer} 层做下面哪一种消融，{token} 的概率（现在 {before:.3f}）变化最大？",
         f"Which ablation of layer {layer} moves the probability of {token} (now {before:.3f}) the most?"),
        lab, best,
        (f"把上方“编辑方式”换成“{lab[best][0]}”，右边“编辑后”的图里 {token} 的柱子变化最大。"
         f"各自编辑后的概率：{rows}。",
         f"Pick “{lab[best][1]}” as the edit above: {token}'s bar in the “after” chart on the right moves the "
         f"most. The probability after each: {rows_en}."))


def greedy(q: dict) -> Question:
    """Whether and where greedy float32 and bfloat16 texts part (ops.lab.quiz.greedy_parting)."""
    n = q["new_tokens"]
    lab = {"never": (f"不分开（{n} 个 token 内）", f"they never part (within {n} tokens)")}
    lab.update({j: (f"在第 {a}–{z} 个 token 分开", f"they part at token {a}–{z}")
                for j, (a, z) in enumerate(q["ranges"])})
    part = q["part"]
    why = ((f"下面两段文字逐字相同：{n} 个 token 里 bfloat16 每一步选的都和 float32 一样。",
            f"The two texts below are the same token for token: in {n} tokens bfloat16 picks what float32 picks "
            "at every step.") if part is None else
           (f"下面两段文字在第 {part + 1} 个 token 第一次不同（从 ⟦ 起）：那一步两个格式的第一名不同，之后各走各的。",
            f"The two texts below first differ at token {part + 1} (from ⟦ on): the two formats rank a different token "
            "first at that step, and from there each goes its own way."))
    return Question(
        (f"用贪心解码各生成 {n} 个 token：bfloat16 权重写出的文字会和 float32 的分开吗？在哪里？",
         f"Greedy decoding, {n} tokens each: does the text from bfloat16 weights part from float32's, and where?"),
        lab, q["answer"], why)


GREEDY_SECTION = ("贪心生成：bfloat16 会和 float32 写出不同的文字吗",
                  "Greedy texts: does bfloat16 write what float32 writes?")
