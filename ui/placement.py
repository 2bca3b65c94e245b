"""The Scale page's "several GPUs" section: ops.arith.placement's plan for 1, 2, 4, 8 GPUs of the chosen size."""
from __future__ import annotations

import streamlit as st

from ops.arith import placement
from ops.arith.costs import human
from ops.engine.config import ModelConfig
from viz.placement import device_bars

from .blocks import chart
from .pickers import ranged
from .session import t


@st.cache_data(show_spinner=False, max_entries=32)
def _plan(config: ModelConfig, gpus: int, gpu_gb: float, context: int, batch: int, capture: bool) -> dict:
    p = placement.plan(config, gpus, gpu_gb, context, batch, capture=capture)
    return {k: v for k, v in p.items() if k != "device_map"} | {"device_map": {k: str(v) for k,
                                                                               v in p["device_map"].items()}}


def section(config: ModelConfig, name: str, gpu: str, gpu_gb: float, context: int, batch: int):
    """The plans for 1, 2, 4, 8 GPUs (a table), and the chosen one drawn; under the page's own heading."""
    st.caption(t("按配置算出：整层不拆分，按字节把连续的层均衡地分给各卡（放不下时按顺序装满，剩下的留在 CPU）；每张卡"
                 "先扣掉"
                 f"它那些层在上下文 {context:,}、批 {batch} 时的 KV cache（可选再加 float32 追踪捕获）和"
                 f" {placement.RESERVE_GB:g} GB 余量。",
                 "Computed from the config: whole layers, contiguous runs balanced by bytes (when they do not fit, "
                 "GPUs "
                 "filled in order and the rest left on the CPU); each GPU's budget first loses its layers' KV cache "
                 f"at context {context:,} and batch {batch} "
                 f"(optionally a float32 trace capture of them too) and a {placement.RESERVE_GB:g} GB reserve."))
    capture = st.toggle(t("也给 float32 追踪捕获留出空间（本应用逐算子看张量时需要）",
                          "Also leave room for a float32 trace capture (what this app needs to show every tensor)"),
                        key="place_capture")
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
    chart(device_bars(plans[n]["devices"], gpu_gb, names, t(f"{name}：{n} 张 {gpu} 上每张卡装了什么",
                                                            f"{name}: what each of {n} × {gpu} holds"),
                      t("GB（虚线 = 显存）", "GB (dashed = memory)")), f"placement-{n}")
    here = placement.local_gpus()
    st.caption(t("运行时每层在持有它权重的那张卡上执行（ops.engine.model.Model(device_map=...)），层与层之间只传 [B, "
                 "S, H] 的残差流。",
                 "At run time each layer runs on the GPU that holds its weights "
                 "(ops.engine.model.Model(device_map=...)); only "
                 "the [B, S, H] residual stream moves between GPUs.")
               + t(f"本机有 {len(here)} 张 GPU（{'、'.join(here)}）。" if here else "本机没有 GPU：这里只是按配置算出的"
                                                                                    "方案。",
                   f" This machine has {len(here)} GPU(s) ({', '.join(here)})." if here else
                   " This machine has no GPU: this is the plan computed from the config."))
