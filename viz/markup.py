"""The HTML, CSS and JavaScript the app sends the browser: tags and inline styles built from short pieces (tag, css),
stylesheets and scripts read from assets/web/ (style_tag, script_tag). No streamlit here."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

WEB_DIR = Path(__file__).resolve().parents[1] / "assets" / "web"
ATTRIBUTES = {"cls": "class"}           # a keyword Python reserves, written as the HTML attribute


def css(**props) -> str:
    """An inline style: css(font_size="20px", line_height="1.6") -> 'font-size:20px;line-height:1.6'."""
    return ";".join(f"{name.replace('_', '-')}:{value}" for name, value in props.items())


def tag(name: str, body: str = "", **attrs) -> str:
    """<name a="v">body</name>, the attributes in the order given (cls= is class=); body and values as given,
    so escape text before it comes here."""
    written = "".join(f' {ATTRIBUTES.get(k, k.replace("_", "-"))}="{v}"' for k, v in attrs.items())
    return f"<{name}{written}>{body}</{name}>"


@lru_cache(maxsize=None)
def web(name: str) -> str:
    """The text of assets/web/<name> (a stylesheet or a script)."""
    return (WEB_DIR / name).read_text("utf-8")


def style_tag(name: str) -> str:
    """<style> holding assets/web/<name>."""
    return f"<style>\n{web(name)}</style>"


def script_tag(name: str, fill: str | None = None) -> str:
    """<script> holding assets/web/<name>, its one %s replaced by fill when given (a JSON value)."""
    text = web(name)
    return f"<script>\n{text if fill is None else text % fill}</script>"
