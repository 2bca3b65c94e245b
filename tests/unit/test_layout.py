"""The house rules a new engineer can rely on: short pages that only compose, and one forward pass."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "app_pages").glob("*.py"))
OPERATOR_MODULES = {"torch", "F", "fn", "functional", "np", "numpy"}   # names whose calls compute on tensors


def test_every_registry_page_has_a_file_and_every_file_a_registry_entry():
    from content import stages
    assert {s.page for s in stages.pages()} == {p.stem for p in PAGES}


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.stem)
def test_page_is_a_short_composition(path):
    lines = path.read_text("utf-8").splitlines()
    assert len(lines) <= 150, f"{path.name} has {len(lines)} lines; a page is at most 150 (the scaffold draws the rest)"
    tree = ast.parse("\n".join(lines))
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = node.func.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in OPERATOR_MODULES:
                problems.append(f"line {node.lineno}: calls {ast.unparse(node.func)}()")
        if isinstance(node, ast.Attribute) and node.attr in ("w", "weights") and isinstance(node.value, ast.Name) \
                and node.value.id == "model":
            problems.append(f"line {node.lineno}: reads model.{node.attr}")
    assert not problems, f"{path.name} computes itself (move it to ops/ or viz/): " + "; ".join(problems)


def test_model_runner_is_short():
    n = len((ROOT / "ops" / "engine" / "model.py").read_text("utf-8").splitlines())
    assert n <= 400, f"ops/engine/model.py has {n} lines (at most 400: one forward pass, reading top to bottom)"
