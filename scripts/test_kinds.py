"""Lines of test code by kind: reference, behaviour, smoke (and the support code around them).

    python scripts/test_kinds.py                 # the working tree
    python scripts/test_kinds.py --rev d7c565f   # a commit (read with git show)

The rule, applied to each test function (a `def test_...` in tests/, its decorators and body counted as its lines):

- reference: it checks against an independent reference. Its text, or the text of a function of the same file
  that it calls, names one: transformers (or its `tf.` / `hf_` helpers), torch.nn.functional (`F.` calls),
  gguf.constants, llama.cpp, a "reference", or a number worked "by hand" (the words "by hand", "hand-worked",
  "hand count", "by-hand").
- smoke: it only shows that something runs: no `assert` (nor assert_close, ...) of its own, or only asserts that
  nothing failed (`not at.exception`), and it calls no function of its file that asserts, besides the page
  helpers' own counts (page_ok / check_page: "N charts, no error box", with no `text=` or `passing=` naming what
  the page must say or which check must be green).
- behaviour: every other test (it asserts something the code should do, against a value the test states).

Everything else in tests/ (helpers, fixtures, imports, docstrings at module level) is support. The rule reads
words, not meaning: a test can name a reference it does not use; the counts are a measure of the suite's shape,
not a verdict on one test.
"""
from __future__ import annotations

import argparse
import ast
import re
import subprocess
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = re.compile(r"transformers|\btf\.|\bhf_|torch\.nn\.functional|\bF\.[a-z_]+\(|gguf\.constants|llama\.cpp|"
                       r"reference|by hand|by-hand|hand-worked|hand worked|hand count", re.IGNORECASE)
PAGE_HELPERS = re.compile(r"\b(page_ok|check_page|open_page|new_app|no_exception)\(")
ONLY_NO_FAILURE = re.compile(r"assert\s+not\s+\w+\.(exception|error)\b")


def files(rev: str | None) -> dict[str, str]:
    """path -> source of every tests/**/*.py, in the working tree or at `rev`."""
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for p in sorted((ROOT / "tests").rglob("*.py"))}
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "tests/"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    return {n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout for n in names if n.endswith(".py")}


def functions(tree: ast.Module):
    """Every function of the module (top level and in classes), test or not."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def span(node) -> tuple[int, int]:
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return first, node.end_lineno


def kind(text: str, calls: set[str], reference_helpers: set[str], checking_helpers: set[str]) -> str:
    if REFERENCE.search(text) or calls & reference_helpers:
        return "reference"
    checks = [line.strip() for line in text.splitlines() if re.search(r"\bassert", line)]
    raises = "pytest.raises" in text or "pytest.warns" in text
    stated = re.search(r"\b(text|passing)=", text)            # the page helper checks named words or checks
    if (not raises and not stated and not calls & checking_helpers
            and all(ONLY_NO_FAILURE.match(a) for a in checks) and (PAGE_HELPERS.search(text) or not checks)):
        return "smoke"
    return "behaviour"


def count(sources: dict[str, str]) -> tuple[Counter, Counter]:
    lines, tests = Counter(), Counter()
    for source in sources.values():
        all_lines = source.splitlines()
        tree = ast.parse(source)
        funcs = list(functions(tree))
        text_of = {}
        for f in funcs:
            a, b = span(f)
            text_of[f] = "\n".join(all_lines[a - 1:b])
        helpers = [f for f in funcs if not f.name.startswith("test_")]
        reference_helpers = {f.name for f in helpers if REFERENCE.search(text_of[f])}
        checking_helpers = {f.name for f in helpers if re.search(r"\bassert", text_of[f])}
        covered = 0
        for f in funcs:
            if not f.name.startswith("test_"):
                continue
            calls = {n.func.id for n in ast.walk(f) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            k = kind(text_of[f], calls, reference_helpers, checking_helpers)
            a, b = span(f)
            lines[k] += b - a + 1
            tests[k] += 1
            covered += b - a + 1
        lines["support"] += len(all_lines) - covered
    return lines, tests


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", help="a git revision (default: the working tree)")
    args = ap.parse_args()
    lines, tests = count(files(args.rev))
    judged = sum(lines[k] for k in ("reference", "behaviour", "smoke"))
    print(f"test lines by kind ({args.rev or 'working tree'}):")
    for k in ("reference", "behaviour", "smoke"):
        print(f"  {k:<10} {lines[k]:>6} lines {100 * lines[k] / max(judged, 1):5.1f} %  {tests[k]:>5} tests")
    print(f"  {'support':<10} {lines['support']:>6} lines (helpers, fixtures, imports)")
    print(f"  {'total':<10} {judged + lines['support']:>6} lines, {sum(tests.values())} test functions")


if __name__ == "__main__":
    main()
