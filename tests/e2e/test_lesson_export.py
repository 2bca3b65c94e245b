"""classroom/lesson_export.py: a lesson as one standalone HTML file. Each shipped lesson, exported from the real model,
opens in headless Chromium from a file:// URL with every other request aborted (no network), draws every figure
(a .plotly div with its .main-svg per figure) and logs no console error; crafted prompts, notes, titles and
questions never become markup or script (no dialog opens, and the text is escaped in the file)."""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from classroom import lesson_export, lessons

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
CRAFTED = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "</details><script>alert(2)</script>",
           "</script><script>alert(3)</script>", "<svg onload=alert(4)>"]


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is missing: scripts/test.sh installs it")
        pytest.skip("Debian chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def open_offline(browser, path: Path) -> dict:
    """Open path from file:// with every non-file request aborted; what drew and what went wrong."""
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    blocked, errors, dialogs = [], [], []
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file://")
               else (blocked.append(route.request.url), route.abort()))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.resolve().as_uri(), wait_until="load")
    try:                                      # every chart drawn (a bound against a hang: the checks below judge)
        page.wait_for_function("() => [...document.querySelectorAll('div.plotly-graph-div')]"
                               ".every(d => d.querySelector('.main-svg'))", timeout=30_000)
    except Exception:
        pass
    seen = dict(divs=page.locator("div.plotly-graph-div").count(), plots=page.locator(".js-plotly-plot").count(),
                svgs=page.locator(".js-plotly-plot .main-svg").count(), errors=errors, dialogs=dialogs,
                blocked=blocked, details=page.locator("details").count(), text=page.inner_text("body"))
    page.close()
    return seen


@pytest.mark.real
@pytest.mark.browser
@pytest.mark.parametrize("name", ["first-lesson", "attention-deep-dive", "serving-interview"])
def test_a_shipped_lesson_opens_offline_and_draws_every_figure(name, chromium, real_model, tmp_path):
    lesson = lessons.load(lessons.shipped()[name])
    html_path, npz = lesson_export.export(lessons.shipped()[name], tmp_path / f"{name}.html", model=real_model)
    text = html_path.read_text(encoding="utf-8")
    figures = text.count('class="plotly-graph-div"')
    expected = sum(1 for s in lesson.steps if s.page in lesson_export.FORMULAS)   # the pages with a view
    assert figures == expected >= 2
    assert text.count("plotly.js v") == 1, "Plotly's JavaScript inlined exactly once"
    assert "<script src" not in text and "<link" not in text
    markup = re.sub(r"<script[^>]*>.*?</script>", "", text, flags=re.S)      # our markup, the libraries' code aside
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", markup), "a network reference in the export"
    seen = open_offline(chromium, html_path)
    assert seen["plots"] == figures and seen["svgs"] >= figures, seen
    assert not seen["errors"] and not seen["dialogs"], seen
    assert seen["details"] == 2 * sum(1 for s in lesson.steps if s.question)
    assert lesson.title["zh"] in seen["text"] and lesson.title["en"] in seen["text"]
    arrays = np.load(npz)
    assert len(arrays.files) >= figures and all(np.isfinite(arrays[k]).all() for k in arrays.files)


@pytest.mark.browser
def test_crafted_text_never_becomes_markup(chromium, tiny_app_dense, tmp_path):
    from ops import load_model

    data = {"version": 1, "title": {"zh": CRAFTED[0], "en": CRAFTED[1]}, "prompts": [CRAFTED[0], CRAFTED[1]],
            "steps": [{"page": page, "pickers": {"layer": 0, "head": 0},
                       "notes": {"zh": CRAFTED[2], "en": CRAFTED[3]},
                       "question": {"zh": CRAFTED[4], "en": CRAFTED[2], "options": CRAFTED[:2], "answer": CRAFTED[1]}}
                      for page in ("tokenize", "attention", "lm_head")]}
    lesson = lessons.parse(data, "crafted")
    text, _ = lesson_export.build(lesson, model=load_model(tiny_app_dense))
    for crafted in CRAFTED:
        assert crafted not in text, f"unescaped in the export: {crafted}"
    for tag in ("<img", "<svg onload", "<script>alert", "</details><script"):
        assert tag not in text
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in text          # there, as text
    path = tmp_path / "crafted.html"
    path.write_text(text, encoding="utf-8")
    seen = open_offline(chromium, path)
    assert not seen["dialogs"] and not seen["errors"], seen
    assert CRAFTED[0] in seen["text"] and CRAFTED[2] in seen["text"]        # shown as text, as written
    assert seen["plots"] == 3
