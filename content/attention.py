"""Short sentences of the attention page that sit beside a figure, (中文, English): said the same in both."""
from __future__ import annotations

# beside the raw scores: softmax(s + c) = softmax(s) for any constant c added to a whole row
SCORES_SHIFT = (
    "分数本身多大并不要紧：给一整行都加上同一个数，softmax 的结果完全不变。要紧的是同一行里分数之间的差："
    "一个分数比另一个高 1，它的概率就是另一个的 e ≈ 2.7 倍。",
    "How large the scores are does not matter: adding the same number to a whole row leaves softmax unchanged. "
    "What matters is the differences within a row: a score 1 higher than another gets e ≈ 2.7 times its probability.",
)
