"""settings.py: every OPERATOR_LAB_* setting read in one module, typed, checked once, and written out in
docs/configuration.md; a bad value stops the app with a message naming the variable, its value and what it
accepts; nothing else in the product reads the environment."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import settings

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("app.py", "settings.py", "ops", "ui", "classroom", "content", "viz", "app_pages")


def test_defaults():
    s = settings.read(environ={}, secret_values={})
    assert (s.max_tokens, s.classroom, s.session_mb, s.concurrent_runs, s.sweep_queue) == (2048, False, 2048.0, 2, 8)
    limits = s.limits()
    assert (limits.max_tokens, limits.max_new_tokens, limits.max_batch) == (2048, 2048, 8)


def test_classroom_limits_and_session_default():
    s = settings.read(environ={"OPERATOR_LAB_CLASSROOM": "yes", "OPERATOR_LAB_MAX_TOKENS": "300"}, secret_values={})
    assert s.session_mb == 256.0
    limits = s.limits()
    assert (limits.max_tokens, limits.max_new_tokens, limits.max_batch) == (300, 64, 4)   # min(300, 512), 64, 4


@pytest.mark.parametrize("name,value,accepts", [
    ("OPERATOR_LAB_MAX_TOKENS", "lots", "a whole number"),
    ("OPERATOR_LAB_MAX_TOKENS", "0", "from 1"),
    ("OPERATOR_LAB_MAX_TOKENS", "12.5", "a whole number"),
    ("OPERATOR_LAB_MAX_TOKENS", "nan", "a whole number"),
    ("OPERATOR_LAB_MAX_TOKENS", "inf", "a whole number"),
    ("OPERATOR_LAB_SESSION_MB", "nan", "a number"),
    ("OPERATOR_LAB_CLASSROOM", "maybe", "1/true/yes/on"),
    ("OPERATOR_LAB_CLASSROOM_MAX_BATCH", "9", "to 8"),
    ("OPERATOR_LAB_SESSION_MB", "-3", "a number"),
    ("OPERATOR_LAB_CACHE", "  ", "a folder path"),
])
def test_a_bad_value_names_the_variable_the_value_and_what_it_accepts(name, value, accepts):
    with pytest.raises(settings.SettingError) as e:
        settings.read(environ={name: value}, secret_values={})
    msg = str(e.value)
    assert name in msg and repr(value) in msg and accepts in msg


def test_current_follows_the_environment(monkeypatch):
    monkeypatch.setenv("OPERATOR_LAB_CONCURRENT_RUNS", "3")
    assert settings.current().concurrent_runs == 3
    monkeypatch.setenv("OPERATOR_LAB_CONCURRENT_RUNS", "5")
    assert settings.current().concurrent_runs == 5


def test_docs_list_every_setting():
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert settings.table_markdown() in doc, "docs/configuration.md's table is not settings.table_markdown()"
    assert set(re.findall(r"`(OPERATOR_LAB_[A-Z_]+)`", settings.table_markdown())) == set(settings.BY_NAME)


def _reads_environment(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb") and \
                isinstance(node.value, ast.Name) and node.value.id == "os":
            lines.append(node.lineno)
    return lines


def test_nothing_else_reads_the_environment():
    found = []
    for top in PRODUCT:
        paths = [ROOT / top] if top.endswith(".py") else sorted((ROOT / top).rglob("*.py"))
        for p in paths:
            if p == ROOT / "settings.py":
                continue
            lines = _reads_environment(ast.parse(p.read_text(encoding="utf-8")))
            found += [f"{p.relative_to(ROOT)}:{n}" for n in lines]
    assert not found, f"reads the environment outside settings.py: {found}"


def test_the_app_stops_on_a_bad_setting(monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("OPERATOR_LAB_MAX_TOKENS", "twelve")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "OPERATOR_LAB_MAX_TOKENS='twelve'" in errors and "whole number" in errors
    assert not at.title                                          # stopped: no page drawn
