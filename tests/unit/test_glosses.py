"""Issue 42: the overview's first screen glosses each term it uses (GQA, RoPE, pre-norm, memory-bound), and
Attention's first lines say NEOX pairing and repeat_kv in plain words, in both languages."""
from __future__ import annotations

import pytest

from content import texts
from ops.arith import costs


@pytest.fixture(scope="module")
def nums():
    return texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"), B=1, S=7)   # 14 / 2 heads: groups of 7


GLOSSED = {  # (stage, lang): a term -> the words in brackets right after it
    ("overview", "zh"): {"受显存带宽限制": "受显存带宽限制（算得比从显存读数据快", "GQA": "GQA：分组查询注意力：每组查询头共用一组 K/V",
                         "RoPE": "RoPE：按位置旋转 q、k", "pre-norm": "pre-norm（先归一化）"},
    ("overview", "en"): {"bound by memory bandwidth": "bound by memory bandwidth (it computes faster",
                         "GQA": "GQA: grouped-query attention: each group of query heads shares one K/V",
                         "RoPE": "RoPE: q and k rotated by position", "pre-norm": "*pre-norm* (normalise first)"},
    ("attention", "zh"): {"repeat_kv": "原样复制 7 份，让每个查询头都有一份可读，代码里叫 repeat_kv",
                          "NEOX": "第 $i$ 维与第 $i+hd/2$ 维配成一对（这种配法称为 NEOX 式）"},
    ("attention", "en"): {"repeat_kv": "simply copied 7 times, so every query head has one to read; the code calls it repeat_kv",
                          "NEOX": "dimension $i$ paired with dimension $i+hd/2$ (the pairing called NEOX-style)"},
}


@pytest.mark.parametrize("stage, lang", list(GLOSSED))
def test_each_term_comes_with_its_gloss(nums, stage, lang):
    text = texts.explain(stage, lang, "academic", nums)
    for term, glossed in GLOSSED[(stage, lang)].items():
        assert glossed in text, (term, glossed)
        at = text.index(glossed)                      # the first time the term is used, it is glossed
        assert at <= text.index(term) < at + len(glossed), term
