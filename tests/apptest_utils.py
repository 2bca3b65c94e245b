"""Helpers shared by the AppTest page tests (imported by the test files; fixtures live in conftest.py)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def page_path(page: str) -> str:
    """"attention" or "app_pages/attention.py" -> "app_pages/attention.py"."""
    return page if page.endswith(".py") else f"app_pages/{page}.py"


def open_page(page: str, source: str | None = None, prompt: str | None = None, lang: str = "zh",
              chat: bool = False, timeout: float = 120):
    """The app opened on its first page with ?lang= (and ?chat=1), then source / prompt set in session_state,
    then switched to `page` and run once more. Returns the AppTest; asserts nothing."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params["lang"] = lang
    if chat:
        at.query_params["chat"] = "1"
    at.run()
    if source is not None:
        at.session_state["source"] = source
    if prompt is not None:
        at.session_state["prompt_text"] = prompt
    at.switch_page(page_path(page))
    at.run()
    return at
