"""Issue 46 §5: the product cites only files it ships. No product file or doc mentions DESIGN.md, FACTS.md, the
other working notes or ../shared (what a reader needs is in docs/: facts.md, architecture.md); tests may."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = re.compile(r"DESIGN\.md|FACTS\.md|WALK\.md|ANCHORS\.md|\.\./shared|(?<![\w.\-/])shared/")
TEXT = {".py", ".md", ".json", ".toml", ".txt", ".sh", ".yml", ".yaml", ".cfg", ".ini", ".html", ".css", ".js", ""}
SKIP = {".git", "tests", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache", ".ruff_cache"}


def product_files():
    for p in ROOT.rglob("*"):
        rel = p.relative_to(ROOT)
        if p.is_file() and p.suffix in TEXT and not SKIP & set(rel.parts) and p.stat().st_size < 2_000_000:
            yield rel, p


def test_the_detector_sees_each_kind():
    found = [bool(OUTSIDE.search(s)) for s in ("see DESIGN.md", "(FACTS.md)", "../shared/seeds", "in shared/x",
                                               "mlp.shared_expert", "docs/facts.md", "a shared expert/gate")]
    assert found == [True, True, True, True, False, False, False]


def test_no_product_file_or_doc_refers_outside_the_repository():
    hits = []
    for rel, p in product_files():
        try:
            text = p.read_text("utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert not hits, hits


def test_the_docs_that_replace_them_exist_and_agree_with_the_configs():
    facts, arch = (ROOT / "docs/facts.md").read_text("utf-8"), (ROOT / "docs/architecture.md").read_text("utf-8")
    assert "## Conventions" in arch and "facts.md" in arch
    from ops.arith import costs
    c = costs.reference_config("Qwen2.5-32B-Instruct")
    row = lambda field: next(line for line in facts.splitlines() if line.startswith(f"| {field} "))  # noqa: E731
    assert f"| {c.hidden_size} |" in row("hidden_size") and f"| {c.num_hidden_layers} |" in row("num_hidden_layers")
    assert f"{c.num_attention_heads} / {c.num_key_value_heads}" in row("num_attention_heads")
    assert f"{costs.total_params(c):,}" in facts and f"{costs.kv_bytes_per_token(c):,}" in facts
