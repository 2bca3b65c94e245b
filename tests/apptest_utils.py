"""Helpers shared by the AppTest page tests in tests/pages/ (fixtures live in tests/conftest.py).

A page test is two calls: open the page, then check it.

    at = open_page("attention", lang="en")                          # the app, then the page, run once
    check_page(at, "attention", "en", charts=1, checks=1)            # fails on any exception or st.error

or both at once: `at = page_ok("attention", lang="en", charts=1, checks=1)`.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HTML_TABLE = '<table class="ol-table">'       # how ui.blocks.table's one Markdown element starts
APP = str(ROOT / "app.py")

# Stable words of each page's title (st.title), (中文, English). The full titles change with the wording
# of the pages; these words stay. A page not listed here is looked for by its label in the stage registry
# (content/stages.py); every page has its own tests/pages/test_<page>.py (test_all_pages.py checks).
TITLE_WORDS = {
    "overview": ("总览", "Overview"),
    "tokenize": ("分词", "Tokenize"),
    "embedding": ("嵌入", "Embedding"),
    "rmsnorm": ("RMSNorm", "RMSNorm"),
    "attention": ("注意力", "Attention"),
    "residual": ("残差", "Residual"),
    "mlp": ("MLP", "MLP"),
    "lm_head": ("LM Head", "LM head"),
    "sampling": ("采样", "Sampling"),
    "generate": ("生成", "Generate"),
    "experiments": ("实验", "Experiments"),
    "compare": ("对比", "Compare"),
    "models": ("两个模型", "Two models"),
    "atlas": ("注意力头图谱", "Head atlas"),
    "precision": ("精度", "Precision"),
    "tour": ("课堂演示", "Classroom tour"),
    "scale": ("规模", "Scale"),
    "practice": ("面试练习", "Interview practice"),
}
PAGES = list(TITLE_WORDS)
BATCH = "I like shanghai\n人工智能 😀 你好吗？ and a longer second line"   # two rows, Chinese, an emoji


def title_word(page: str, lang: str) -> str:
    """A word the page's title holds in `lang`: from TITLE_WORDS, else the registry's label for the page."""
    if page in TITLE_WORDS:
        return TITLE_WORDS[page][0 if lang == "zh" else 1]
    from content import stages

    s = stages.get(page)
    return s.zh if lang == "zh" else s.en


def page_path(page: str) -> str:
    """"attention" or "app_pages/attention.py" -> "app_pages/attention.py"."""
    return page if page.endswith(".py") else f"app_pages/{page}.py"


def page_name(page: str) -> str:
    """"app_pages/attention.py" or "attention" -> "attention"."""
    return Path(page).stem


def full_error_details():
    """Exceptions on a page shown in full: the app's config.toml redacts them for users, and a failing
    test should say what broke."""
    from streamlit import config

    config.set_option("client.showErrorDetails", "full")


def new_app(timeout: float = 120, **query):
    """An AppTest of app.py with the given query parameters, not yet run (exceptions shown in full)."""
    from streamlit.testing.v1 import AppTest

    full_error_details()
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    return at


def lazy_key(expander) -> str | None:
    """The session-state key of a lazy expander (ui.blocks.more / the by-hand examples), None for any other."""
    key = expander.proto.id.split("-", 2)[-1] if expander.proto.id.startswith("$$ID-") else ""
    return key if key.startswith(("more-", "by-hand-")) else None


def unfold(at, limit: int = 12):
    """Open every folded lazy view, as a reader clicking each fold would (a fold opened inside another is found on
    the next round); at most `limit` rounds. Lazy views are the default the tests run with, as users get them."""
    for _ in range(limit):
        closed = [k for e in at.expander if (k := lazy_key(e)) and not at.session_state[k]]
        if not closed or at.exception:
            return at
        for k in closed:
            at.session_state[k] = True
        at.run()
    return at


def open_page(page: str, source: str | None = None, prompt: str | None = None, lang: str = "zh",
              chat: bool = False, timeout: float = 120, folds: bool = True, **query):
    """The app opened on its first page with ?lang= (and ?chat=1, and any other query parameters), then
    source / prompt set in session_state, then switched to `page` and run once more, then (folds) every fold
    opened. Returns the AppTest; asserts nothing (check_page does)."""
    if chat:
        query["chat"] = "1"
    at = new_app(timeout, lang=lang, **query)
    at.run()
    if source is not None:
        at.session_state["source"] = source
    if prompt is not None:
        at.session_state["prompt_text"] = prompt
    at.switch_page(page_path(page))
    at.run()
    return unfold(at) if folds else at


def texts(at) -> str:
    """Every piece of text on the page, one per line (markdown, titles, captions, boxes, tables' cells)."""
    parts = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success",
                 "latex", "code"):
        parts += [html_text(str(x.value)) for x in at.get(kind)]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    parts += [e.label for e in at.expander]
    parts += tensor_lines(at)
    for d in [*at.dataframe, *at.table]:
        try:
            parts.append(d.value.to_string())
        except Exception:                     # a table the element tree cannot rebuild: skip its cells
            pass
    return "\n".join(parts)


def html_text(value: str) -> str:
    """ui.blocks.table's HTML <table> as its cells' text, " | " between cells and a line per row; other text as is."""
    if not value.startswith(HTML_TABLE):
        return value
    rows = re.findall(r"<tr>(.*?)</tr>", value)
    return "\n".join(" | ".join(html.unescape(c) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", r)) for r in rows)


def tensor_lines(at) -> list[str]:
    """The name · shape · dtype line under each live tensor (ui.blocks.tensor_view: the label of its .npy download)."""
    return [str(e.proto.label) for e in at.get("download_button")]


def no_exception(at):
    """Fails with the exception's message and the last lines of its stack trace."""
    if at.exception:
        shown = []
        for e in at.exception:
            shown.append(f"{e.value}\n" + "\n".join(e.stack_trace[-6:]))
        raise AssertionError("exception on the page:\n" + "\n---\n".join(shown))


def error_boxes(at, allow_errors=()) -> list[str]:
    """st.error boxes on the page, less those that contain one of the allow_errors fragments."""
    return [e.value for e in at.error if not any(a in e.value for a in allow_errors)]


def svg_pictures(at) -> list[str]:
    """The drawn pictures on the page (ui.blocks.picture: SVG through markdown), as their SVG text."""
    return [str(m.value) for m in at.markdown if str(m.value).lstrip().startswith("<svg")]


def tab_groups(at) -> dict[str, list[str]]:
    """The lazy tab groups on the page (ui.blocks.tabs and the explanation's): session-state key -> tab labels."""
    groups = {}

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if getattr(child, "type", "") == "tab_container":
                key = child.proto.tab_container.id.split("-", 2)[-1]
                if key.startswith(("tabs-", "explain-")):
                    groups[key] = [str(tab.proto.label) for tab in child.children.values()]
            walk(child)

    walk(at._tree.main)
    return groups


@dataclass
class Seen:
    """What every view of the page showed, tab by tab (charts by key, tables and green checks by content)."""
    charts: set = field(default_factory=set)
    pictures: set = field(default_factory=set)
    tables: set = field(default_factory=set)
    green: set = field(default_factory=set)
    errors: list = field(default_factory=list)
    text: list = field(default_factory=list)

    def add(self, at, allow_errors=()):
        no_exception(at)
        self.charts |= {c.proto.id for c in at.get("plotly_chart")}
        self.pictures |= set(svg_pictures(at))
        for d in at.dataframe:
            try:
                self.tables.add(d.value.to_string())
            except Exception:                      # a table the element tree cannot rebuild: count it by its id
                self.tables.add(id(d))
        self.tables |= {m.value for m in at.markdown if m.value.startswith(HTML_TABLE)}
        self.green |= {x.value for x in at.success}
        self.errors += error_boxes(at, allow_errors)
        self.text.append(texts(at))


def every_tab(at, allow_errors=()) -> Seen:
    """Open every tab of every lazy tab group, one at a time (each a rerun, folds unfolded), as a reader clicking
    through would, and gather what each showed; then put every group back on the tab it was on."""
    seen = Seen()
    seen.add(at, allow_errors)
    groups = tab_groups(at)
    for key, labels in groups.items():
        first = at.session_state[key] if key in at.session_state else labels[0]
        for label in labels:
            if label == first:
                continue
            at.session_state[key] = label
            at.run()
            unfold(at)
            seen.add(at, allow_errors)
            for inner in set(tab_groups(at)) - set(groups):           # a tab group inside this tab
                for label2 in tab_groups(at)[inner][1:]:
                    at.session_state[inner] = label2
                    at.run()
                    seen.add(at, allow_errors)
        at.session_state[key] = first
        at.run()
    if groups:
        unfold(at)
    return seen


def open_tab(at, key: str, label: str):
    """Click tab `label` of the lazy tab group `key` (ui.blocks.tabs(..., key) is "tabs-<key>"), and unfold its folds."""
    at.session_state[key if key.startswith(("tabs-", "explain-")) else f"tabs-{key}"] = label
    at.run()
    return unfold(at)


def check_page(at, page: str, lang: str = "zh", *, charts: int = 0, checks: int = 0, passing=(), tables: int = 0,
               text=(), allow_errors=(), pictures: int = 0):
    """The page rendered cleanly and shows its own content, every tab of it opened in turn (every_tab):
    no exception, no st.error box (except ones containing an allow_errors fragment), its title in `lang`,
    at least `charts` Plotly charts, `pictures` SVG pictures, `tables` tables (dataframes or ui.blocks.table) and
    `checks` passing checks (green boxes, none with ✗), every check named in `passing` green, and every fragment
    of `text` somewhere on the page."""
    page = page_name(page)
    no_exception(at)
    titles = [x.value for x in at.title]
    want = title_word(page, lang)
    assert any(want.lower() in x.lower() for x in titles), f"{page}: no title with {want!r}: {titles}"
    seen = every_tab(at, allow_errors)
    assert not seen.errors, f"{page}: error boxes: {seen.errors}"
    assert len(seen.charts) >= charts, f"{page}: {len(seen.charts)} Plotly charts, want >= {charts}"
    assert len(seen.pictures) >= pictures, f"{page}: {len(seen.pictures)} SVG pictures, want >= {pictures}"
    assert len(seen.tables) >= tables, f"{page}: {len(seen.tables)} tables, want >= {tables}"
    green = sorted(seen.green)
    assert len(green) >= checks, f"{page}: {len(green)} passing checks, want >= {checks}: {green}"
    assert all("✗" not in s for s in green), f"{page}: a green box with ✗: {green}"
    for name in passing:
        assert any(name in s for s in green), f"{page}: check {name!r} is not green; green boxes: {green}; " \
                                              f"red: {[e.value for e in at.error if name in e.value]}"
    if text:
        body = "\n".join(seen.text)
        missing = [x for x in text if x not in body]
        assert not missing, f"{page}: text not on the page: {missing}"
    return at


def page_ok(page: str, source: str | None = None, prompt: str | None = None, lang: str = "zh",
            chat: bool = False, query: dict | None = None, **expect):
    """open_page + check_page: the page opened and checked; returns the AppTest for more assertions."""
    at = open_page(page, source, prompt, lang, chat, **(query or {}))
    return check_page(at, page, lang, **expect)

