"""A wait the reader sees: a progress bar that names each step of the work and counts it, driven by the work's own
reports (ops.lab.steps), never by a timer."""
from __future__ import annotations

import streamlit as st

from content.words import say

from .session import lang


def progress_bar():
    """(a container holding a progress bar, report(done, total, step, fields)): the bar moves and names each step
    as the work reports it (ops.lab.steps), in the page's language (assets/words/waits). Empty the container when
    the work is done."""
    box = st.empty()
    language = lang()

    def report(done: int, total: int, step: str, fields: dict):
        text = say("waits.bar", language, step=say(f"waits.{step}", language, **fields), done=done, total=total)
        box.progress(min(1.0, done / max(total, 1)), text=text)
    return box, report
