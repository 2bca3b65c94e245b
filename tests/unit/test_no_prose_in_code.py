"""Words are data: the Python under content/, app_pages/, ui/ and viz/ holds keys and short labels, never a sentence.

A sentence, for this check, is a string literal (docstrings, the messages of a raise or a log call, and the SQL handed
to a database aside) with more than 12 CJK characters, or an English
literal of 8 or more words. Markup is not prose: HTML and SVG tags, Plotly's hover placeholders (`%{x:.3f}`), inline CSS
declarations, a font stack and `\\uXXXX` escapes are taken out before the count, so a figure's hover template or a
styled <div> is code, while the words between its tags still count. Short UI labels stay as one `t(zh, en)` call;
anything longer lives in assets/words/ (read through content.words.say) or assets/explain/. Run it as a script to list a file's sentences:

    python tests/unit/test_no_prose_in_code.py ui/poll.py content/scale.py
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DIRS = ("content", "app_pages", "ui", "viz")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
MAX_CJK, MAX_WORDS = 12, 8
TAG = re.compile(r"<[^<>]*>")                            # <div style="...">, </b>, <extra></extra>
HOVER = re.compile(r"%\{[^{}]*\}")                       # Plotly's %{customdata[0]:,.1f}
ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")                # a regular expression's \u4e00
DECLARATION = re.compile(r"[a-z][a-z-]*:(?=\S)([^;<>]*)(;|$)")   # padding:2px 8px; (no space after the colon, a
                                                                # value of a few words at most): "Note: ..." is prose
FONT_STACK = re.compile(r'\s*("[^"]*"|[\w-]+)(\s*,\s*("[^"]*"|[\w-]+))+\s*')   # "Source Sans", sans-serif


def without_markup(text: str) -> str:
    """The words a reader would read of `text`: tags, hover placeholders, escapes, CSS declarations and a font stack
    taken out."""
    if FONT_STACK.fullmatch(text) and '"' in text:
        return ""
    text = ESCAPE.sub(" ", HOVER.sub(" ", TAG.sub(" ", text)))
    return DECLARATION.sub(lambda m: " " if len(WORD.findall(m.group(1))) <= 4 else m.group(0), text)


def is_sentence(text: str) -> bool:
    text = without_markup(text)
    if len(CJK.findall(text)) > MAX_CJK:
        return True
    return len(CJK.findall(text)) == 0 and len(WORD.findall(text)) >= MAX_WORDS


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the constant nodes that are docstrings (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                out.add(id(first.value))
    return out


SQL_CALLS = ("execute", "executemany", "executescript", "_sql")      # a query for the database, not for a reader


def for_developers(tree: ast.AST) -> set[int]:
    """ids of the nodes inside a raise or a log call (messages for a developer's log, not for the screen), and in the
    query of a database call."""
    out = set()
    for node in ast.walk(tree):
        is_log = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name) and node.func.value.id in ("log", "logger", "logging", "warnings"))
        is_sql = (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS)
        if isinstance(node, ast.Raise) or is_log or is_sql:
            out |= {id(n) for n in ast.walk(node)}
    return out


def sentences(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text("utf-8"))
    skip = docstrings(tree) | for_developers(tree)
    pieces = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}   # read joined below
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip | pieces:
            if is_sentence(node.value):
                found.append((node.lineno, node.value[:60]))
        elif isinstance(node, ast.JoinedStr) and id(node) not in skip:      # an f-string: its literal pieces joined
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            if is_sentence(text):
                found.append((node.lineno, text[:60]))
    return sorted(set(found))


def product_files() -> list[Path]:
    return sorted(p for d in DIRS for p in (ROOT / d).rglob("*.py"))


def test_the_rule_itself():
    assert is_sentence("这是一个很长的句子，它解释了注意力在做什么。")
    assert not is_sentence("注意力权重")
    assert is_sentence("The attention weights of the last token over every position.")
    assert not is_sentence("Attention weights")
    assert not is_sentence("SELECT id, texts FROM poll")                  # 4 words: code, not prose


def test_markup_is_not_prose_but_the_words_in_it_are():
    assert not is_sentence("layer %{y}, head %{x}<br>%{customdata}<br>score %{text}<extra></extra>")
    assert not is_sentence('<span class="tok" style="border:1px solid #bbb;border-radius:3px;padding:0 3px">')
    assert not is_sentence("padding:2px 8px;text-align:center;font-size:15px;color:#555;")
    assert not is_sentence('"Source Sans", "Source Sans Pro", "Noto Sans CJK SC", "Noto Sans", sans-serif')
    assert not is_sentence("[\\u1100-\\u115f\\u2e80-\\ua4cf\\uac00-\\ud7a3\\uf900-\\ufaff]")
    assert is_sentence('<div style="font-size:26px">The attention weights of the last token over every position</div>')
    assert is_sentence("<b>注意力</b>权重是最后一个词元对每个位置的关注程度")
    assert is_sentence("Note: the attention weights of the last token over every position.")
    assert is_sentence("What the rotation changed: q_rope − q (head 0)")


def test_messages_for_developers_and_queries_are_not_sentences(tmp_path):
    code = tmp_path / "demo.py"
    code.write_text("def f(n, cur, x):\n"
                    "    if n < 1:\n"
                    "        raise ValueError(f'a batch holds at least one decoding, got cap={n}')\n"
                    "    log.warning('operator-lab: %s came back at its default on a switch to %s', n, x)\n"
                    "    cur.execute(x._sql(f'SELECT failures, last_at FROM key_tries WHERE address = {n}'))\n"
                    "    return f'a batch holds at least one decoding, got cap={n}'\n", "utf-8")
    assert [line for line, _ in sentences(code)] == [6]


def test_no_sentence_in_product_python():
    offenders = {str(p.relative_to(ROOT)): s for p in product_files() if (s := sentences(p))}
    assert not offenders, "\n".join(f"{f}:{n}: {t!r}" for f, s in offenders.items() for n, t in s[:3])


if __name__ == "__main__":
    paths = [Path(a) for a in sys.argv[1:]] or product_files()
    total = 0
    for p in paths:
        for n, t in sentences(p):
            total += 1
            print(f"{p}:{n}: {t!r}")
    print(f"{total} sentences")
