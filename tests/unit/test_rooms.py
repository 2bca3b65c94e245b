"""docs/architecture.md's rooms table ("Which room owns which feature") against the tree: every module of ops/lab/,
content/, viz/ and ui/ is named in it exactly once and every name in it exists, every page has its row, and a page's
modules carry the page's name (one name per feature across the layers)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
FOLDERS = ("ops/lab/", "content/", "viz/", "ui/")
NAME = re.compile(r"`([\w*]+\.py)`")
# a page's module whose name says what it is rather than the page: the online softmax is the Serving page's
# algorithm (the lesson export draws it too); ui/batching_panel.py is named for the server's batcher it shows
NAMED_FOR_WHAT_IT_DOES = {"online_softmax.py", "batching_panel.py"}


def rooms() -> list[dict[str, str]]:
    """The rows of the table under '## Which room owns which feature': column heading -> cell."""
    text = DOC.read_text("utf-8").split("## Which room owns which feature", 1)[1].split("\n## ", 1)[0]
    table = [line for line in text.splitlines() if line.startswith("|")]
    head = [c.strip() for c in table[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in line.strip("|").split("|")))) for line in table[2:]]


def modules(folder: str, root: Path = ROOT) -> set[str]:
    return {p.name for p in (root / folder).glob("*.py") if p.name != "__init__.py"}


def problems(folder: str, root: Path = ROOT) -> dict[str, list[str]]:
    """A folder's modules named twice in the table, missing from it, or named but not in the tree."""
    named = [n for row in rooms() for n in NAME.findall(row[folder])]
    found = modules(folder, root)
    return {"twice": sorted({n for n in named if named.count(n) > 1}), "missing": sorted(found - set(named)),
            "not in the tree": sorted(set(named) - found)}


def pages() -> set[str]:
    return {p.stem for p in (ROOT / "app_pages").glob("*.py") if p.name != "__init__.py"}


def test_the_table_has_a_column_per_folder():
    assert set(FOLDERS) <= set(rooms()[0]), rooms()[0].keys()


def test_every_module_is_in_the_table_exactly_once():
    found = {folder: wrong for folder in FOLDERS if any((wrong := problems(folder)).values())}
    assert not found, found


def test_every_page_has_its_row():
    first_words = {row["feature (page)"].split()[0] for row in rooms()}
    assert pages() <= first_words, sorted(pages() - first_words)


def test_a_pages_modules_carry_its_name():
    wrong = []
    for row in rooms():
        page = row["feature (page)"].split()[0]
        if page not in pages():
            continue                                     # a feature on several pages, or a shared row
        for folder in FOLDERS:
            for name in NAME.findall(row[folder]):
                if not name.startswith(page) and name not in NAMED_FOR_WHAT_IT_DOES:
                    wrong.append(f"{folder}{name} (page {page})")
    assert not wrong, wrong


def test_the_check_sees_a_stray_module_and_a_gone_one(tmp_path):
    """The table check can fail: a module added under ui/ without a row, and one the table names that is gone."""
    (tmp_path / "ui").mkdir()                                    # a copy of ui/ less its first module, plus one
    kept = sorted(modules("ui"))
    for name in kept[1:] + ["stray.py"]:
        (tmp_path / "ui" / name).write_text("")
    assert problems("ui/", tmp_path) == {"twice": [], "missing": ["stray.py"], "not in the tree": [kept[0]]}
