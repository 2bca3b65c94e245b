"""The one placeholder syntax of every text in assets/: `{name}` is replaced, `{{` and `}}` are literal braces
(exactly as in str.format, so LaTeX writes `$\\sqrt{{d}}$`)."""
from __future__ import annotations

import re

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(template: str, numbers: dict) -> str:
    """Replace {name} with str(numbers[name]) (KeyError if absent); {{ and }} become { and }."""
    def sub(m):
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        return str(numbers[m.group(1)])
    return _TOKEN.sub(sub, template)


def placeholders(template: str) -> set[str]:
    """The placeholder names a template uses."""
    return {m.group(1) for m in _TOKEN.finditer(template) if m.group(1)}
