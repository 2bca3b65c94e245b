"""The page scaffold: a stage page declares its stage and hands over its views; this draws the rest.

    page = StagePage("embedding")          # title, pipeline strip, live input -> output shapes
    b = page.row()                         # pickers kept in the URL
    page.view("embed.out", tensor, fig)    # the main picture first: it must sit above the fold
    page.explain(latex, fn.embedding)      # 学术版 / 白话版 / formula and code, live numbers filled in
    page.section("...", "...")             # more views
    page.checks(checks.embedding(...))     # ops/checks.py against PyTorch
    page.at_scale()                        # the same operator for Qwen2.5-32B (ops/costs.py)
"""
from __future__ import annotations

import html
import inspect
import io

import numpy as np
import streamlit as st

from content import stages, texts
from ops import costs
from ops.trace import CONTRACT, dims, eval_dim
from viz import labels as lbl

from .state import lang, layer_picker, require_trace, row_picker, t, token_picker


def shape_str(shape) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def live_shape(name: str, config, B: int, S: int) -> str:
    """'attn.out [1, 4, 896]' for a contract name; other names ('text', 'next id') as they are."""
    pattern = name if name in CONTRACT else None
    if pattern is None:
        return name
    d = dims(config, B, S)
    short = name.replace("layers.{i}.", "")
    return f"{short} {shape_str(eval_dim(p, d) for p in CONTRACT[pattern][0].split())}"


def pipeline_strip(key: str, io_text: str = ""):
    """The numbered stages as one row of chips, this one lit, then input -> output shapes."""
    chips = []
    for s in stages.pipeline():
        lit = s.key == key or s.page == key
        style = "background:#d62728;color:white;font-weight:700" if lit else "background:#eef1f5;color:#333"
        chips.append(f'<span style="{style};padding:2px 9px;border-radius:12px;margin:1px;display:inline-block;'
                     f'font-size:15px">{s.number} {html.escape(s.zh if lang() == "zh" else s.en)}</span>')
    shapes = (f'<span style="margin-left:12px;font-family:monospace;font-size:17px;white-space:nowrap">'
              f'{html.escape(io_text)}</span>') if io_text else ""
    st.markdown('<div style="line-height:1.9">' + " ".join(chips) + shapes + "</div>", unsafe_allow_html=True)


def npy_bytes(tensor) -> bytes:
    buf = io.BytesIO()
    np.save(buf, tensor.detach().float().cpu().numpy())
    return buf.getvalue()


def chart(fig, key: str):
    """A Plotly figure at full width, with its own projector-sized fonts (Streamlit's theme shrinks them)."""
    st.plotly_chart(fig, width="stretch", key=f"fig-{key}", theme=None)


def tensor_view(name: str, tensor, fig=None, key: str | None = None, caption: str = ""):
    """One live tensor: its name and exact shape, a figure, and a .npy download of the whole tensor."""
    st.markdown(f"**`{name}`** &nbsp; {t('形状', 'shape')} `{shape_str(tensor.shape)}` &nbsp; "
                f"dtype `{str(tensor.dtype).replace('torch.', '')}`")
    if caption:
        st.caption(caption)
    if fig is not None:
        chart(fig, key or name)
    # deferred: the .npy bytes are made only when someone clicks, not on every rerun of the page
    st.download_button(t("下载该张量 (.npy)", "Download this tensor (.npy)"), data=lambda: npy_bytes(tensor),
                       file_name=f"{name}.npy", mime="application/octet-stream", key=f"dl-{key or name}",
                       on_click="ignore")


def explanation(key: str, numbers: dict, extra_tab=None):
    """学术版 / 白话版 tabs (and an optional third tab drawn by extra_tab()) with the stage's text."""
    names = [t("学术版", "Academic"), t("白话版", "Plain language")]
    tabs = st.tabs(names + ([extra_tab[0]] if extra_tab else []))
    for tab, level in zip(tabs, ("academic", "plain")):
        with tab:
            try:
                st.markdown(texts.explain(key, lang(), level, numbers))
            except Exception as e:              # a missing text must not take the page down
                st.info(t("这一段讲解暂缺：", "This explanation is missing: ") + f"{key}/{level} ({e})")
    if extra_tab:
        with tabs[2]:
            extra_tab[1]()


def formula_and_code(latex, *functions):
    """The formula, then the source of the functions that computed it (the code that actually ran)."""
    for line in [latex] if isinstance(latex, str) else latex:
        st.latex(line)
    for f in functions:
        st.caption(f"{f.__module__}.{f.__qualname__}")
        st.code(inspect.getsource(f), language="python")


def show_checks(results):
    """ops/checks.py results: one green or red line each."""
    for c in results:
        (st.success if c.ok else st.error)(c.text(lang()))


def at_scale(stage: str, B: int, S: int):
    """The same operator's shapes, parameters, FLOPs and bytes for Qwen2.5-32B at the user's B and S."""
    st.header(t("放大到 Qwen2.5-32B", "At scale: Qwen2.5-32B"))
    try:
        c = costs.operator_costs(costs.reference_config(), stage, B, S)
    except Exception as e:
        st.info(t("规模数据暂不可用：", "Scale figures unavailable: ") + str(e))
        return
    st.caption(t(f"B = {B}, S = {S}（当前提示词），由 ops/costs.py 依据 Qwen2.5-32B 的 config 计算；层数 {c.get('layers', 1)}。",
                 f"B = {B}, S = {S} (your prompts), computed by ops/costs.py from Qwen2.5-32B's config; "
                 f"{c.get('layers', 1)} layer(s)."))
    cols = st.columns(4)
    cols[0].metric(t("输入 → 输出", "input → output"), f"{shape_str(c['input_shape'])} → {shape_str(c['output_shape'])}")
    cols[1].metric(t("参数量", "parameters"), costs.human(c.get("params", 0)))
    cols[2].metric("FLOPs", costs.human(c.get("flops", 0)))
    cols[3].metric(t("读写字节 (bf16)", "bytes moved (bf16)"), costs.human(c.get("bytes", 0), "B"))
    if c.get("tensors"):
        st.dataframe([{t("权重", "weight"): n, t("形状", "shape"): shape_str(sh)} for n, sh in c["tensors"]],
                     hide_index=True, width="stretch")
    if c.get("note"):
        st.caption(c["note"])


# a projector shows the top 900 px: less padding above the title, a title that is not a banner
CSS = """<style>
.block-container {padding-top: 2.2rem;}
h1 {font-size: 2.1rem !important; padding-top: 0.3rem !important; line-height: 1.35 !important;}
</style>"""


class StagePage:
    """One stage page, top to bottom: where am I -> the main view -> explanation, formula and code ->
    more views -> check against PyTorch -> at scale. The page calls these in that order."""

    def __init__(self, key: str, trace: bool = True, io_text: str | None = None):
        self.stage = stages.get(key)
        st.markdown(CSS, unsafe_allow_html=True)
        st.title(self.stage.heading(lang()))
        self.model, self.trace = require_trace() if trace else (None, None)
        self.config = self.model.config if self.model is not None else None
        if io_text is None and self.trace is not None and self.stage.io:
            io_text = " → ".join(live_shape(n, self.config, self.trace.B, self.trace.S) for n in self.stage.io)
        pipeline_strip(self.stage.key, io_text or "")

    # ---- pickers (values kept in the URL, shared by every page) -----------------------------------
    def layer(self) -> int:
        return layer_picker(self.config.num_hidden_layers)

    def row(self) -> int:
        return row_picker(self.trace.B)

    def token(self, b: int, default_last: bool = False) -> int:
        n = self.trace.lengths[b]
        return token_picker(n, default=n - 1 if default_last else 0)

    def layer_row_token(self, default_last: bool = False) -> tuple[int, int, int]:
        """Layer i, batch row b and token s side by side (the per-token pages' usual three)."""
        cols = st.columns(3)
        with cols[0]:
            i = self.layer()
        with cols[1]:
            b = self.row()
        with cols[2]:
            s = self.token(b, default_last)
        return i, b, s

    def labels(self, b: int, n: int | None = 8, with_pad: bool = False) -> list[str]:
        return lbl.row_labels(self.model.tokenizer, self.trace, b, n, with_pad)

    @property
    def numbers(self) -> dict:
        tr = self.trace
        return texts.numbers(self.config, self.model.tokenizer.vocab_size, tr.B if tr else 1, tr.S if tr else 1)

    # ---- the parts -------------------------------------------------------------------------------
    def view(self, name: str, tensor, fig=None, key: str | None = None, caption: str = ""):
        tensor_view(name, tensor, fig, key, caption)

    def chart(self, fig, key: str):
        chart(fig, key)

    def explain(self, latex=None, *functions, key: str | None = None, numbers: dict | None = None):
        """The explanation (学术版 / 白话版) with a third tab for the formula and the code that ran."""
        extra = (t("公式与代码", "Formula and code"), lambda: formula_and_code(latex, *functions)) if latex else None
        explanation(key or self.stage.key, numbers if numbers is not None else self.numbers, extra)

    def section(self, zh: str, en: str):
        st.subheader(t(zh, en))

    def checks(self, results, zh: str = "与 PyTorch 对照", en: str = "Check against PyTorch"):
        st.header(t(zh, en))
        show_checks(results)

    def at_scale(self, stage: str | None = None):
        tr = self.trace
        at_scale(stage or self.stage.costs, tr.B, tr.S)
