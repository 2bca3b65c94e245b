"""The Scale page's fold: two configs side by side (the reference configs in assets/configs and the loaded model's),
through the same ops.lab.models_data.config_rows as the Models page, without loading any weights."""
from __future__ import annotations

import streamlit as st

from content import models as words
from ops.lab import models_data

from .blocks import table
from .session import lang, t


def fold(box, refs: dict, first: str, first_config):
    """Draw the comparison into `box` (a page.more expander; nothing when it is folded). refs: label -> ModelConfig;
    `first`: the label of the config the page shows (first_config, the loaded model's or a reference), A's start;
    B starts on the next one."""
    if box is None:
        return
    configs = {first: first_config, **refs}
    with box:
        labels = list(configs)
        left, right = st.columns(2)
        a = left.selectbox("A", labels, index=labels.index(first) if first in labels else 0, key="cmp_cfg_a")
        b = right.selectbox("B", labels, index=(labels.index(a) + 1) % len(labels), key="cmp_cfg_b")
        rows = models_data.config_rows(configs[a], configs[b])
        differ = sum(not r["same"] for r in rows)
        st.markdown(t(f"**A = {a}，B = {b}：{len(rows)} 行配置中 {differ} 行不同**",
                      f"**A = {a}, B = {b}: {differ} of {len(rows)} config rows differ**"))
        table(words.config_table(rows, lang()))
