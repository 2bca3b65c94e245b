"""The attribution's part names in the reader's language: every name ops.lab.experiments_attribution gives on a tiny model (and
the waterfall's steps) reads in Chinese without code, and in English as ops names it."""
import re

from test_int8 import tiny_dense

from content.experiments_parts import part_label
from ops.lab import experiments_attribution, experiments_data


def test_every_part_of_a_real_attribution_has_a_chinese_label():
    model = tiny_dense()
    trace = model.trace_ids([[1, 2, 3, 4]])
    attr = experiments_attribution.logit_attribution(model, trace, 0, 3, 5)
    L = model.config.num_hidden_layers
    names = list(attr) + experiments_data.attribution_layers(attr, L)[0]
    for name in names:
        zh = part_label(name, "zh")
        assert not re.search(r"[A-Za-z]", zh.replace("MLP", "").replace("MoE", "")), (name, zh)
        assert part_label(name, "en") == name
    assert part_label("L20.attn.h1", "zh") == "第20层 注意力 头1"
    assert part_label("L3 mlp", "zh") == "第3层 MLP" and part_label("embed", "zh") == "嵌入"
    assert part_label("something.else", "zh") == "something.else"
