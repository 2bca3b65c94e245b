"""The house rules a new engineer can rely on: short pages that only compose, and one forward pass."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "app_pages").glob("*.py"))
OPERATOR_MODULES = {"torch", "F", "fn", "functional", "np", "numpy"}   # names whose calls compute on tensors
# a model's weights, on anything (model.w(...), m.weights, a module's state_dict()); a page shows view data only
WEIGHT_ATTRS = {"w", "weights", "weight_set", "state_dict", "load_state_dict", "named_parameters", "parameters"}


def weight_access(tree: ast.AST) -> list[str]:
    """Every reach into weights: an attribute of WEIGHT_ATTRS on any object, or a tensor named "...weight"/"...bias"
    taken by subscript (W["lm_head.weight"])."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in WEIGHT_ATTRS:
            out.append(f"line {node.lineno}: reads {ast.unparse(node)}")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str) and node.slice.value.endswith((".weight", ".bias")):
            out.append(f"line {node.lineno}: reads {ast.unparse(node)}")
    return out


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
    problems += weight_access(tree)
    assert not problems, f"{path.name} computes itself (move it to ops/ or viz/): " + "; ".join(problems)


def test_the_weight_check_sees_planted_weight_access():
    """The check above on planted lines: each way into the weights is caught, view data and labels are not."""
    planted = ("model.w('lm_head.weight')", "m.weights['model.norm.weight']", "model.weight_set('int8')",
               "net.state_dict()", "[p for _, p in net.named_parameters()]", "W['model.layers.0.mlp.up_proj.weight']")
    for line in planted:
        assert weight_access(ast.parse(line)), line
    clean = "rep['weight_bytes']\nr['weights']\nt('权重', 'weights')\npage.view('embed.out', x, fig)\nweights = 3"
    assert weight_access(ast.parse(clean)) == []


PRODUCT = ("app.py", "settings.py", "app_pages", "ui", "classroom", "ops", "content", "viz")


def product_files() -> list[Path]:
    return [p for top in PRODUCT for p in ([ROOT / top] if top.endswith(".py") else sorted((ROOT / top).rglob("*.py")))]


def test_no_product_file_over_400_lines():
    """One job per file: the forward pass (ops/engine/model.py) reads top to bottom, and so does every other file."""
    files = product_files()
    assert ROOT / "ops" / "engine" / "model.py" in files and len(files) > 100
    long = {p.relative_to(ROOT).as_posix(): n for p in files if (n := len(p.read_text("utf-8").splitlines())) > 400}
    assert not long, f"product files over 400 lines (split them by what they do): {long}"


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text("utf-8").splitlines())
    assert n <= 150, f"README.md has {n} lines; a newcomer finishes 150 (the rest belongs in docs/)"
