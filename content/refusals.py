"""A model that cannot be loaded, in the reader's language: a refused config field (ops.errors.Refused) gets its
sentence from assets/words/rope.<lang>.json, naming the field and its value; any other error its own message.
Never imports streamlit."""
from __future__ import annotations

from content.words import say
from ops.errors import Refused


def load_error(e: Exception, lang: str) -> str:
    if isinstance(e, Refused):
        return say(f"rope.refused_{e.reason}", lang, field=e.field, value=e.value)
    return str(e)
