"""Building blocks of a stage page (DESIGN.md: where am I -> explanation -> formula and code ->
live tensors -> check against PyTorch -> at scale)."""
from __future__ import annotations

import html
import inspect
import io

import numpy as np
import streamlit as st

from .state import lang, t

# (stage id, 中文, English) in pipeline order; the strip at the top of every page
PIPELINE = [
    ("tokenize", "分词", "Tokenize"),
    ("embedding", "嵌入", "Embedding"),
    ("rmsnorm", "RMSNorm", "RMSNorm"),
    ("attention", "注意力", "Attention"),
    ("residual", "残差相加", "Residual add"),
    ("mlp", "MLP / MoE", "MLP / MoE"),
    ("lm_head", "LM Head", "LM head"),
    ("sampling", "采样", "Sampling"),
    ("generate", "解码循环", "Decode loop"),
]


def stage_title(stage: str) -> str:
    for sid, zh, en in PIPELINE:
        if sid == stage:
            return t(zh, en)
    return stage


def pipeline_strip(stage: str, shape_in: str = "", shape_out: str = ""):
    """The pipeline as a row of chips with this stage lit, then input shape -> output shape."""
    chips = []
    for sid, zh, en in PIPELINE:
        name = html.escape(zh if lang() == "zh" else en)
        style = ("background:#d62728;color:white;font-weight:700" if sid == stage
                 else "background:#eef1f5;color:#333")
        chips.append(f'<span style="{style};padding:4px 10px;border-radius:14px;margin:2px;'
                     f'display:inline-block;font-size:16px">{name}</span>')
    st.markdown(" → ".join(chips), unsafe_allow_html=True)
    if shape_in or shape_out:
        st.markdown(f"#### `{shape_in}` → `{shape_out}`")


def explanation(stage: str, numbers: dict):
    """学术版 / 白话版 tabs with the stage's text in the session's language, live numbers filled in."""
    from content import texts
    tabs = st.tabs([t("学术版", "Academic"), t("白话版", "Plain language")])
    for tab, level in zip(tabs, ("academic", "plain")):
        with tab:
            try:
                st.markdown(texts.explain(stage, lang(), level, numbers))
            except Exception as e:              # a missing text must not take the page down
                st.info(t("这一段讲解暂缺：", "This explanation is missing: ") + f"{stage}/{level} ({e})")


def formula_and_code(latex: str | list, *functions):
    """The formula, then the ops/functional.py source that computes it (the code that actually ran)."""
    for line in [latex] if isinstance(latex, str) else latex:
        st.latex(line)
    if functions:
        with st.expander(t("代码：ops/functional.py 中真正运行的函数", "Code: the functions in ops/functional.py that ran"),
                         expanded=False):
            for f in functions:
                st.code(inspect.getsource(f), language="python")


def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def npy_bytes(tensor) -> bytes:
    buf = io.BytesIO()
    np.save(buf, tensor.detach().float().cpu().numpy())
    return buf.getvalue()


def tensor_view(name: str, tensor, fig=None, key: str | None = None, caption: str = ""):
    """One live tensor: its name and exact shape, a figure, and a .npy download of the whole tensor."""
    st.markdown(f"**`{name}`** &nbsp; {t('形状', 'shape')} `{shape_str(tensor.shape)}` &nbsp; "
                f"dtype `{str(tensor.dtype).replace('torch.', '')}`")
    if caption:
        st.caption(caption)
    if fig is not None:
        st.plotly_chart(fig, width="stretch", key=f"fig-{key or name}", theme=None)
    # deferred: the .npy bytes are made only when someone clicks, not on every rerun of the page
    st.download_button(t("下载该张量 (.npy)", "Download this tensor (.npy)"), data=lambda: npy_bytes(tensor),
                       file_name=f"{name}.npy", mime="application/octet-stream", key=f"dl-{key or name}",
                       on_click="ignore")


def check(label: str, ours, reference, tol: float = 1e-4):
    """This operator against PyTorch's own, on the same inputs: max |diff| shown, with a verdict."""
    diff = (ours.float() - reference.float()).abs()
    d = float(diff.masked_fill(diff.isnan(), 0).max()) if diff.numel() else 0.0    # NaN: both -inf (masked)
    ok = d <= tol
    msg = f"{label}: max |diff| = {d:.3g} " + ("✓" if ok else "✗") + f" (tol {tol:g})"
    (st.success if ok else st.error)(msg)
    return d


def human(n: float, unit: str = "") -> str:
    """1234567 -> '1.23 M' (FLOPs, parameters, bytes)."""
    for div, suffix in ((1e12, " T"), (1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}{unit}"
    return f"{n:.4g} {unit}".rstrip()


def at_scale(stage: str, B: int, S: int):
    """The same operator's shapes, parameters, FLOPs and bytes for Qwen2.5-32B at the user's B and S."""
    from ops import costs
    st.header(t("放大到 Qwen2.5-32B", "At scale: Qwen2.5-32B"))
    try:
        ref = costs.reference_configs()["Qwen2.5-32B-Instruct"]
        c = costs.operator_costs(ref, stage, B, S)
    except Exception as e:
        st.info(t("规模数据暂不可用：", "Scale figures unavailable: ") + str(e))
        return
    st.caption(t(f"B = {B}, S = {S}（当前提示词），由 ops/costs.py 依据 Qwen2.5-32B 的 config 计算；层数 {c.get('layers', 1)}。",
                 f"B = {B}, S = {S} (your prompts), computed by ops/costs.py from Qwen2.5-32B's config; "
                 f"{c.get('layers', 1)} layer(s)."))
    cols = st.columns(4)
    cols[0].metric(t("输入 → 输出", "input → output"), f"{shape_str(c['input_shape'])} → {shape_str(c['output_shape'])}")
    cols[1].metric(t("参数量", "parameters"), human(c.get("params", 0)))
    cols[2].metric("FLOPs", human(c.get("flops", 0)))
    cols[3].metric(t("读写字节 (bf16)", "bytes moved (bf16)"), human(c.get("bytes", 0), "B"))
    if c.get("tensors"):
        st.dataframe([{t("权重", "weight"): n, t("形状", "shape"): shape_str(sh)} for n, sh in c["tensors"]],
                     hide_index=True, width="stretch")
    if c.get("note"):
        st.caption(c["note"])


def token_labels(model, trace, b: int) -> list[str]:
    """Readable piece of every real token in row b (for axis labels)."""
    ids = trace.token_ids[b, :trace.lengths[b]].tolist()
    try:
        return model.tokenizer.pieces(ids)
    except Exception:
        return [str(i) for i in ids]
