"""Every page in both languages: no Chinese in the English UI, no stray English words in the Chinese UI.

The test walks every page of the app (AppTest, the default prompt) and collects what a reader sees: titles,
headers, markdown, captions, boxes, metric labels, widget labels, options and help, tab, expander and button
labels, table column names and cells, the words inside formulas (LaTeX \\text{...}), and the titles, axis
titles, legends and annotations of every Plotly figure (from the figure JSON). What may cross languages:
  - proper names and model names (Qwen2.5-32B-Instruct, PyTorch, NVIDIA), acronyms (GPU, FLOPs, KV, MoE);
  - code: identifiers (attn.out, q_proj, ops/arith/costs.py), code spans and blocks, tensor names of the trace
    contract, Python literals, file types;
  - the terms Chinese LLM writing keeps in English (token, logits, softmax, top-k, prefill, decode, batch,
    query/key/value, pre-norm, roofline), math functions (max, exp, rsqrt), dimension symbols (nh, nkv, hd);
  - an English gloss in full-width brackets right after the Chinese term: 带宽受限（memory-bound）;
  - token text: the prompt's pieces, chips and blocks the page marks class="tok", pieces shown with ␣,
    quoted literals ('unbelievable', “,”), and table cells that are one token of the tokenizer.
"""
from __future__ import annotations

import html
import json
import re

import pytest
from apptest_utils import open_page

from content import stages

PAGES = [s.page for s in stages.pages()]          # every page of the app, from the stage registry

CJK_RUN = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+")
# An English word: a letter, then lower-case letters. Acronyms (GPU, FLOPs) and camel-case names (PyTorch,
# RMSNorm) never match; hyphenated words (memory-bound) match whole.
WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z][a-z]+(?:-[A-Za-z][a-z]*)*(?![A-Za-z0-9_])")
CALL = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\([^()]*\)")                  # code: decode(encode(text))
NOT_PROSE = [
    re.compile(r"<\|[^|]*\|>"),                                           # special tokens: <|endoftext|>
    re.compile(r"[A-Za-z0-9_.\-]*\d[A-Za-z0-9_.\-]*"),                    # Qwen2.5-0.5B-Instruct, bf16, 1e-06
    re.compile(r"[A-Za-z0-9_]+(?:[._/][A-Za-z0-9_]+)+"),                  # attn.out, ops/arith/costs.py, K/V
    re.compile(r"[A-Za-z0-9]*_[A-Za-z0-9_]*"),                            # q_proj, tie_word_embeddings
    re.compile(r"\.[a-z]{2,5}\b"),                                        # file types: .npy
    re.compile(r"␣\S*|↵"),                                                # token pieces as the pages show them
    re.compile(r"LM [Hh]ead|Hugging Face|Alibaba Cloud|[Ll]ogit lens"),   # names of more than one word
    re.compile(r"(?<=[^\s（(])（[A-Za-z][A-Za-z \-/]*）"),                # a gloss on a term: 稠密（dense）
    re.compile(r"[A-Z][A-Za-z\-]+(?: (?:&|和) [A-Z][A-Za-z\-]+)? 等|Qwen Team"),  # a citation's authors: Vaswani 等
]
QUOTED = re.compile(r"'[^'\n]{1,40}'|\"[^\"\n]{1,40}\"|“[^”\n]{1,40}”|‘[^’\n]{1,40}’")

EN_ALLOWED = set("""
    qwen instruct smollm llama pytorch transformers accelerate nvidia python unicode kimi english
    punica hopper mooncake medusa gemma
    cpu cuda eager sdpa
    token tokens id ids logit logits softmax trace config dtype cache vs eos bos top top-k top-p min-p log-sum-exp
    prefill decode gather one-hot all-to-all all-reduce all-gather reduce-scatter batch base query key value pre-norm post-norm roofline goodput
    max min exp log cos sin sqrt rsqrt silu relu gelu argmax inf
    nh nkv hd sq skv rad ms true false none
    """.split())
ZH_ALLOWED = ("中文",)        # the language picker's own name for Chinese
# Developer references, in either language: a source file's path ("ops/arith/costs.py") belongs in the
# "Formula and code" tab (drawn only when opened, so never seen by this walk), not in a caption on every page.
SOURCE_PATH = re.compile(r"(?<![\w/])[A-Za-z_][\w]*(?:/[\w]+)+\.py\b")
# Code-style part names on a Chinese chart (the attribution's "L20.attn.h1", the waterfall's "L3 mlp"): the ticks
# and bar labels are not prose the checks above read, and the code-name filter would let them through.
CODE_LABEL = re.compile(r"^L\d+[. ](?:attn|mlp|moe)\b")


def _tensor_words() -> set[str]:
    """The parts of the trace contract's names (gate, up, act, probs ...): tensor names, as in code."""
    from ops.engine.trace import CONTRACT

    return {p for name in CONTRACT for p in re.split(r"[.{}]", name) if p}


def _plain(text: str) -> str:
    """Markdown/HTML as a reader sees it, less code, LaTeX and tags; token text marked class="tok" removed.
    The words of a formula's \\text{...} stay: they are prose."""
    text = re.sub(r"<style>.*?</style>", " ", text, flags=re.S)
    text = re.sub(r"(?:<|&lt;)\|[^|<>]*\|(?:>|&gt;)[A-Za-z_]*", " ", text)     # token text: <|im_start|>assistant
    text = re.sub(r"<(span|div)[^>]*class=\"tok\"[^>]*>.*?</\1>", " ", text, flags=re.S)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`|<code>.*?</code>", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", lambda m: latex_words(m.group(0)), text, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)            # a link's address
    return html.unescape(text)


def latex_words(latex: str) -> str:
    """Only the \\text{...} parts of a formula (the rest is symbols)."""
    return " ".join(m.replace("\\_", "_") for m in re.findall(r"\\text\{([^{}]*)\}", latex))


def _figure_texts(spec: str) -> list[str]:
    """The words a Plotly figure shows: title, axis and colour-bar titles, annotations, legend entries."""
    fig = json.loads(spec)
    layout, data, out = fig.get("layout", {}), fig.get("data", []), []

    def title(obj):
        t = obj.get("title") if isinstance(obj, dict) else None
        return (t.get("text") if isinstance(t, dict) else t) or ""

    out.append(title(layout))
    for k, v in layout.items():
        if isinstance(v, dict) and (re.fullmatch(r"[xy]axis\d*", k) or k in ("coloraxis", "legend")):
            out += [title(v), title(v.get("colorbar", {}))]
    out += [a.get("text", "") for a in layout.get("annotations", [])]
    for tr in data:
        if tr.get("showlegend", True) and tr.get("name") and len(data) > 1:
            out.append(tr["name"])
        out.append(title(tr.get("colorbar", {})))
    return [_plain(s) for s in out if s]


def _figure_categories(spec: str) -> list[str]:
    """The category labels a Plotly figure's bars and steps carry (x or y values that are strings)."""
    out = []
    for tr in json.loads(spec).get("data", []):
        for axis in ("x", "y"):
            values = tr.get(axis)
            if isinstance(values, list):
                out += [v for v in values if isinstance(v, str)]
    return out


def developer_refs(at) -> list[tuple[str, str]]:
    """(kind, text) of every visible string that names a source file."""
    return [(kind, text) for kind, text in visible_strings(at) if SOURCE_PATH.search(text)]


def code_labels(at) -> list[str]:
    """The code-style part names among the chart categories of the page."""
    return [v for e in at.get("plotly_chart") for v in _figure_categories(e.proto.spec) if CODE_LABEL.match(v)]


def visible_strings(at) -> list[tuple[str, str]]:
    """(kind, text) for everything a reader sees on the page and in the sidebar; table cells as ("cell", text)."""
    out = []

    def add(kind, *texts):
        out.extend((kind, str(t)) for t in texts if t not in (None, ""))

    def walk(node):
        kind = getattr(node, "type", "")
        if kind in ("code", "exception"):
            return
        if kind == "latex":
            add(kind, latex_words(str(node.value)))
        elif kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "error", "success",
                      "text"):
            add(kind, _plain(str(node.value)))
        elif kind == "metric":
            add(kind, node.label, node.value, node.help)
        elif kind in ("dataframe", "table"):
            try:
                df = node.value
            except Exception:                   # a table the element tree cannot rebuild
                df = None
            if df is not None:
                add(kind, *[str(c) for c in df.columns], *[str(i) for i in df.index if not isinstance(i, int)])
                add("cell", *[str(v) for v in df.astype(str).to_numpy().ravel()])
        elif kind == "plotly_chart":
            add(kind, *_figure_texts(node.proto.spec))
        elif kind == "page_link":
            add(kind, node.label)
        elif hasattr(node, "label") and kind != "column":
            add(kind, _plain(str(node.label)), _plain(getattr(node, "help", "") or ""), getattr(node, "placeholder", ""))
            add(kind, *(getattr(node, "options", None) or []))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return out


def stray_cjk(text: str) -> list[str]:
    """Runs of Chinese characters in an English string, less the allowed names and quoted examples."""
    text = re.sub(r"'[^'\n]{1,40}'|\"[^\"\n]{1,40}\"", " ", text)
    for name in ZH_ALLOWED:
        text = text.replace(name, " ")
    return CJK_RUN.findall(text)


def stray_english(text: str, tokens=(), allowed=frozenset()) -> list[str]:
    """English words in a Chinese string, less names, code, allowed terms, glosses and token text."""
    text = QUOTED.sub(lambda m: " " if not CJK_RUN.search(m.group(0)) else m.group(0), text)
    for piece in sorted(tokens, key=len, reverse=True):
        if len(piece.strip()) > 1:
            text = text.replace(piece, " ")
    while CALL.search(text):
        text = CALL.sub(" ", text)
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    return [w for w in WORD.findall(text) if w.lower() not in EN_ALLOWED and w not in allowed]


def test_the_checks_find_what_they_should():
    """The detectors themselves, on the strings the issue found and on each allowed kind of crossing."""
    assert stray_cjk("loaded · 已加载") == ["已加载"]
    assert stray_cjk("全部 / All") == ["全部"]
    assert stray_cjk("Language: 中文; try '人工智能'") == []
    assert stray_english("View 3 more") == ["View", "more"]
    assert stray_english("第 0 行 row 0") == ["row"]
    assert stray_english(latex_words(r"M_{ij} = 0 \text{ if } j \text{ real}, -\infty \text{ otherwise}")) == \
        ["if", "real", "otherwise"]
    assert stray_english("每行 attn.out 与 q_proj、softmax、Qwen2.5-32B-Instruct、FLOPs、12 KiB、PyTorch 的 LM head") == []
    assert stray_english("带宽受限（memory-bound），不是 memory-bound") == ["memory-bound"]
    assert stray_english("- 原始架构：Vaswani 等，2017；Qwen Team，2024；Zhang 和 Sennrich 等") == []
    assert stray_english("Vaswani 说 attention") == ["Vaswani", "attention"]
    assert stray_english("提示词 I like shanghai", tokens=["I", " like", " sh", "anghai"]) == []
    assert stray_english("选中“,”与 ' and'，␣like") == []
    assert stray_english("第 0 行：decode(encode(text)) == NFC(text)") == []
    assert stray_english(_plain("最后留一个 <|im_start|>assistant。")) == []
    md = _plain('**粗体** `code here` $x_{\\text{real}}$ <span class="tok">belie</span> &lt;|endoftext|&gt;')
    assert stray_english(md) == ["real"]
    assert SOURCE_PATH.search("B = 1，由 ops/arith/costs.py 依据 config 计算") and not SOURCE_PATH.search("attn.out · .npy")
    assert CODE_LABEL.match("L20.attn.h1") and CODE_LABEL.match("L3 mlp") and not CODE_LABEL.match("第20层 注意力 头1")


@pytest.fixture(scope="module")
def tokenizer():
    from ops import load_model

    return load_model().tokenizer


def _is_token(tok, cell: str) -> bool:
    """A table cell that is one token of the tokenizer, as the pages show pieces (␣ for a space, ↵ newline)."""
    text = cell.replace("␣", " ").replace("↵", "\n")
    return bool(text.strip()) and len(tok.encode(text)) == 1


def _report(page, lang, bad):
    lines = [f"  {kind}: {found} in {text[:140]!r}" for kind, text, found in bad[:40]]
    return f"{page} ({lang}): {len(bad)} strings in the other language:\n" + "\n".join(lines)


def stray_strings(at, lang: str, tok) -> list[tuple[str, str, list]]:
    """(kind, text, stray words) for every string on the page that holds the other language."""
    from ui.session import DEFAULT_PROMPT

    tokens = [tok.decode([i]) for i in tok.encode(DEFAULT_PROMPT)] + [DEFAULT_PROMPT]
    allowed = _tensor_words()
    bad = []
    for kind, text in visible_strings(at):
        if lang == "en":
            found = stray_cjk(text)
        else:
            found = [] if kind == "cell" and _is_token(tok, text) else stray_english(text, tokens, allowed)
        if found:
            bad.append((kind, text, found))
    return bad


@pytest.mark.real
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", PAGES)
def test_page_speaks_one_language(page, lang, tokenizer):
    at = open_page(page, lang=lang)
    assert not at.exception, f"{page} ({lang}) raised: {at.exception[0].value}"
    bad = stray_strings(at, lang, tokenizer)
    assert not bad, _report(page, lang, bad)
    assert not developer_refs(at), f"{page} ({lang}) names source files: {developer_refs(at)[:5]}"
    if lang == "zh":
        assert not code_labels(at), f"{page}: code-style labels on a Chinese chart: {code_labels(at)[:5]}"


STUDENT_PROMPT = "我明天要去北京参加面试，我觉得"      # a sentence from outside the curated list (issue 48)


@pytest.mark.real
@pytest.mark.parametrize("page", PAGES)
def test_page_speaks_chinese_on_a_students_own_prompt(page, tokenizer):
    """The Chinese walk again on a student's own Chinese sentence (the default prompt hides what a prompt's text
    changes: labels, chips, the overview's first sentence)."""
    at = open_page(page, prompt=STUDENT_PROMPT, lang="zh")
    assert not at.exception, f"{page} raised: {at.exception[0].value}"
    bad = stray_strings(at, "zh", tokenizer) + [(k, x, ["source file"]) for k, x in developer_refs(at)]
    bad += [("chart", v, ["code label"]) for v in code_labels(at)]
    assert not bad, _report(page, "zh", bad)
