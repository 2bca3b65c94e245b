"""Every page of the page table (tests/page_table.py) opened in each of its runs: a model, a prompt, a language.
One test for one behaviour: the page draws its content (check_page: no exception, no error box, its title in the
page's language, its charts, tables and green checks, every tab opened in turn). What is particular to a page is
tested in its own tests/pages/test_<page>.py."""
from __future__ import annotations

import pytest
from apptest_utils import page_ok
from page_table import ROWS, RUNS, expect

FIXTURE = {"tiny": "tiny_app_dense", "moe": "tiny_app_moe"}       # "real": the bundled model, the app's default


def cases():
    for page, runs in ROWS.items():
        for run in runs:
            model = RUNS[run][0]
            yield pytest.param(page, run, id=f"{page}-{run}", marks=[pytest.mark.real] if model == "real" else [])


@pytest.mark.parametrize("page, run", list(cases()))
def test_page_draws_its_content(page, run, request):
    model, prompt, lang = RUNS[run]
    source = request.getfixturevalue(FIXTURE[model]) if model in FIXTURE else None
    page_ok(page, source=source, prompt=prompt, lang=lang, **expect(page, lang))
