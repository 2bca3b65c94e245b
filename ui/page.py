"""The page scaffold: a stage page declares its stage and hands over its views; this draws the rest.

    page = StagePage("embedding")          # title, pipeline strip, live input -> output shapes
    b = page.row()                         # pickers kept in the URL
    page.view("embed.out", tensor, fig)    # the main picture first: it must sit above the fold
    page.explain(latex, fn.embedding)      # 学术版 / 白话版 / formula and code, live numbers filled in
    page.section("...", "...")             # more views
    page.checks(checks.embedding(...))     # ops/lab/checks.py against PyTorch
    page.at_scale()                        # the same operator for Qwen2.5-32B (ops/arith/costs.py)
"""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from content import facts, stages, texts
from viz import labels as lbl
from viz.figures import upright_titles

from .blocks import chart, live_shape, metrics, more, picture, pipeline_strip, tabs, tensor_view
from .explain import at_scale, explanation, formula_and_code, show_checks
from .pickers import layer_picker, row_picker, token_picker
from .session import lang, t
from .state import require_trace
from .widgets import merged_note


def next_page(current: str):
    """The registry's page after `current`; None after the last, and on the tour (its own Next button steps
    through it)."""
    keys = [s.page for s in stages.pages()]
    if current not in keys or current in (keys[-1], "tour"):
        return None
    return stages.get(keys[keys.index(current) + 1])


def next_stage(current: str):
    """A large "next" link at the end of a page, to the next page in the registry's order."""
    nxt = next_page(current)
    if nxt is None:
        return
    st.divider()
    with st.container(key="next_stage"):          # a link, not a button + switch_page: the sidebar's settings stay
        st.page_link(f"app_pages/{nxt.page}.py", label=t(f"下一步：{nxt.title('zh')}",
                                                         f"Next: {nxt.title('en')}") + "  ▶",
                     icon=nxt.icon)


class StagePage:
    """One stage page, top to bottom: where am I -> the main view -> explanation, formula and code ->
    more views -> check against PyTorch -> at scale. The page calls these in that order."""

    def __init__(self, key: str, trace: bool = True, io_text: str | None = None):
        self.stage = stages.get(key)
        st.title(self.stage.heading(lang()))
        self.model, self.trace = require_trace() if trace else (None, None)
        self.config = self.model.config if self.model is not None else None
        if io_text is None and self.trace is not None and self.stage.io:
            io_text = " → ".join(live_shape(n, self.config, self.trace.B, self.trace.S) for n in self.stage.io)
        self._strip = st.empty()           # redrawn with the live tensors' names once the layer is known (io())
        with self._strip:
            pipeline_strip(self.stage.key, io_text or "")

    def io(self, *names: str):
        """The header's input -> output, as the trace names them for what the page shows now ("embed.out" ->
        "layers.0.attn_norm.out"), each with its live shape."""
        with self._strip:
            pipeline_strip(self.stage.key, " → ".join(live_shape(n, self.config, self.trace.B, self.trace.S, True)
                                                      for n in names))

    def attach(self, model, trace):
        """A page made with trace=False that has a trace after all (Practice, Scale: they also work without one)
        hands it over here, so its numbers and memos are kept with the trace (Trace.memo)."""
        self.model, self.trace = model, trace
        self.config = model.config if model is not None else None

    # ---- pickers (values kept in the URL, shared by every page) -----------------------------------
    def layer(self) -> int:
        """Layer i's picker; a stage whose input and output are layer i's tensors names them in its header."""
        i = layer_picker(self.config.num_hidden_layers)
        if self.trace is not None and any("{i}" in n for n in self.stage.io):
            self.io(*(n.replace("{i}", str(i)) for n in self.stage.io))
        return i

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

    def labels(self, b: int, n: int | None = 12, with_pad: bool = False) -> list[str]:
        return lbl.row_labels(self.model.tokenizer, self.trace, b, n, with_pad)

    def merged_note(self, b: int):
        """Under the tokens of row b: which of them hold several characters of a CJK word (ui.widgets.merged_note)."""
        merged_note(self.model.tokenizer, self.trace.token_ids[b, :self.trace.lengths[b]].tolist())

    @property
    def numbers(self) -> dict:
        """The texts' placeholders for the loaded model and this run (content/texts.py), made once per trace."""
        tr = self.trace
        make = lambda: texts.numbers(self.config, B=tr.B if tr else 1, S=tr.S if tr else 1, **facts.loaded(self.model))
        return tr.memo(("numbers",), make) if tr is not None else make()

    def sentence(self, name: str) -> str:
        """One sentence about the loaded model (content/facts.py: tie_sentence, vocab_sentence, ...) in the reader's
        language."""
        make = lambda: texts.in_lang(self.numbers, lang())
        return (self.trace.memo(("numbers", lang()), make) if self.trace is not None else make())[name]

    def memo(self, key: tuple, compute):
        """compute() once per (page, language, key) for this trace, for every session (Trace.memo): checks, views
        and figures that are pure functions of the trace and the page's settings. The key holds every setting the
        result depends on (layer, head, row, ...). A figure kept here is shared, so nothing may change it later: its
        Chinese axis titles are set upright before it is stored, and chart() then finds nothing left to move."""
        def make():
            value = compute()
            return upright_titles(value) if isinstance(value, go.Figure) else value
        if self.trace is None:
            return make()
        return self.trace.memo((self.stage.key, lang()) + tuple(key), make)

    # ---- the parts -------------------------------------------------------------------------------
    def view(self, name: str, tensor, fig=None, key: str | None = None, caption: str = "",
             projector_height: int | None = None):
        """A live tensor and its figure; projector_height: the figure's height on a projector (ui.blocks.chart)."""
        tensor_view(name, tensor, fig, key, caption, projector_height)

    def chart(self, fig, key: str, projector_height: int | None = None):
        chart(fig, key, projector_height)

    def picture(self, svg: str):
        picture(svg)

    def metrics(self, pairs: list[tuple[str, str]], weights: list[float] | None = None):
        metrics(pairs, weights)

    def explain(self, latex=None, *functions, key: str | None = None, numbers: dict | None = None, by_hand=None):
        """The explanation (学术版 / 白话版) with a third tab for the formula and the code that ran; by_hand():
        worked examples to do by hand, in an expander under the plain text (ui/by_hand.py)."""
        extra = (t("公式与代码", "Formula and code"), lambda: formula_and_code(latex, *functions)) if latex else None
        explanation(key or self.stage.key, numbers if numbers is not None else self.numbers, extra, by_hand)

    def section(self, zh: str, en: str):
        st.subheader(t(zh, en))

    def more(self, zh: str, en: str, key: str):
        """A secondary view below the fold, drawn only when unfolded (more()): `if box := page.more(...): with box: ...`
        Its state is kept as "more-<page>-<key>"."""
        return more(t(zh, en), f"{self.stage.key}-{key}")

    def tabs(self, labels: list[str], key: str) -> list:
        """Tabs that draw only the open one (tabs()): `for tab in page.tabs(...): if tab: with tab: ...`
        Its state is kept as "tabs-<page>-<key>"."""
        return tabs(labels, f"{self.stage.key}-{key}")

    def checks(self, results, zh: str = "与 PyTorch 对照", en: str = "Check against PyTorch"):
        st.header(t(zh, en))
        show_checks(results)

    def at_scale(self, stage: str | None = None):
        tr = self.trace
        at_scale(stage or self.stage.costs, tr.B, tr.S)
