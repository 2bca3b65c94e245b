"""The Scale page's "several GPUs" section: ops.arith.placement's plan for 1, 2, 4, 8 GPUs of the chosen size."""
from __future__ import annotations

import streamlit as st

from content.words import say
from ops.arith import placement
from ops.arith.costs import human
from ops.engine.config import ModelConfig
from viz.scale_placement import device_bars

from .blocks import chart
from .pickers import ranged
from .session import lang, t


@st.cache_data(show_spinner=False, max_entries=32)
def _plan(config: ModelConfig, gpus: int, gpu_gb: float, context: int, batch: int, capture: bool) -> dict:
    p = placement.plan(config, gpus, gpu_gb, context, batch, capture=capture)
    return {k: v for k, v in p.items() if k != "device_map"} | {"device_map": {k: str(v) for k,
                                                                               v in p["device_map"].items()}}


def section(config: ModelConfig, name: str, gpu: str, gpu_gb: float, context: int, batch: int):
    """The plans for 1, 2, 4, 8 GPUs (a table), and the chosen one drawn; under the page's own heading."""
    st.caption(say("placement.how", lang(), context=f"{context:,}", batch=batch, reserve=f"{placement.RESERVE_GB:g}"))
    capture = st.toggle(say("placement.capture_toggle", lang()), key="place_capture")
    with st.spinner(t("正在计算分配方案……", "Planning the placement...")):
        plans = {n: _plan(config, n, gpu_gb, context, batch, capture) for n in (1, 2, 4, 8)}
    rows = []
    for n, p in plans.items():
        gpus = [d for d in p["devices"] if d["device"] != "cpu"]
        full = max(gpus, key=lambda d: d["total"])
        rows.append({t("GPU 数", "GPUs"): n, t("放得下？", "fits?"): "✓" if p["fits"] else
                     t(f"✗（{len(p['spill_layers'])} 层落到 CPU）",
                       f"✗ ({len(p['spill_layers'])} layers spill to CPU)"),
                     t("每张卡的层数", "layers per GPU"): " · ".join(str(len(d["layers"])) for d in gpus),
                     t("最满那张：权重", "fullest GPU: weights"): human(full["weights"], "B"),
                     t("KV cache", "KV cache"): human(full["kv"], "B"),
                     t("追踪捕获", "trace capture"): human(full["capture"], "B"),
                     t("合计", "total"): f"{full['total'] / 1e9:,.1f} / {gpu_gb:g} GB"})
    st.dataframe(rows, hide_index=True, width="stretch")
    fitting = [n for n, p in plans.items() if p["fits"]]
    n = st.select_slider(ranged(t("画出几张卡的方案", "draw the plan for"), min(plans), max(plans)),
                         options=list(plans), key="place_n",
                         value=fitting[0] if fitting else 8,
                         format_func=lambda k: t(f"{k} 张 GPU", f"{k} GPU(s)"))
    names = dict(weights=t("权重 (bf16)", "weights (bf16)"), kv=t("KV cache", "KV cache"), capture=t("追踪捕获",
                                                                                                   "trace capture"))
    chart(device_bars(plans[n]["devices"], gpu_gb, names, say("placement.chart_title", lang(), name=name, n=n, gpu=gpu),
                      t("GB（虚线 = 显存）", "GB (dashed = memory)")), f"placement-{n}")
    here = placement.local_gpus()
    machine = (say("placement.here", lang(), n=len(here), names=t("、", ", ").join(here)) if here
               else say("placement.here_none", lang()))
    st.caption(say("placement.run_time", lang()) + machine)
