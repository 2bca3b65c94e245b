"""The house rules for imports (docs: DESIGN.md, "The house"), read from the source with `ast`.

Every import counts: top level, inside a function, under `if TYPE_CHECKING:` or `try:`. Layers:
  ops/      never imports ui, app_pages, content, classroom, settings or streamlit (it runs alone in a Python shell)
  viz/ and content/ never import streamlit, ui, classroom, settings or app_pages
  classroom/ (the poll's store, lessons and their export, slots, the run queue, jobs) and settings.py never
            import streamlit, ui or app_pages (ui draws them)
  ui/       never imports app_pages
  nothing   imports app (the entry script) or app_pages (Streamlit runs those files itself)
and across the whole house: no import circle between modules (a function-level import counts: it hides a
circle, it does not remove it), and no module takes a private name (leading underscore) from a module of
another package, by `from m import _x` or as `m._x` on a module it imported.

And no import with side effects: every product module (ops/, ui/, viz/, content/; app.py and app_pages/ are
scripts Streamlit runs, drawing is their job) is imported in one fresh Python process, its own imports first,
by tests/unit/import_probe.py, which records against each module what its import did: start a thread, write a
file, run a program, load native code, touch the environment, or change a process-wide registry or another of
our modules (the probe's docstring says exactly what is watched). Registration is explicit, in app.py.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ops", "ui", "viz", "content", "classroom", "app_pages")
ENTRY = "app.py"
TOP_MODULES = ("settings.py",)      # modules at the top of the house (settings: the one reader of the environment)

FORBIDDEN = {   # importer package -> top-level names it must never import
    "ops": {"ui", "app_pages", "content", "classroom", "settings", "streamlit", "app"},
    "viz": {"streamlit", "ui", "app_pages", "classroom", "settings", "app"},
    "content": {"streamlit", "ui", "app_pages", "classroom", "settings", "app"},
    "classroom": {"streamlit", "ui", "app_pages", "app"},
    "settings": {"streamlit", "ui", "app_pages", "classroom", "viz", "app"},
    "ui": {"app_pages", "app"},
}


@dataclass(frozen=True)
class Import:
    module: str        # the importing module, dotted ("ops.engine.model", "app_pages.attention", "app")
    line: int
    target: str        # the absolute module imported from ("ops.engine.model", "streamlit.components.v1")
    names: tuple       # the names taken from it (`from target import a, b`); () for `import target`

    def where(self) -> str:
        return f"{module_file(self.module)}:{self.line}"


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def module_file(module: str) -> str:
    return FILES[module].relative_to(ROOT).as_posix()


def source_files() -> dict[str, Path]:
    files = {module_name(ROOT / top): ROOT / top for top in (ENTRY, *TOP_MODULES)}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if "__pycache__" not in p.parts:
                files[module_name(p)] = p
    return files


FILES = source_files()
MODULES = set(FILES)


def is_package(module: str) -> bool:
    return FILES[module].name == "__init__.py"


def resolve_relative(module: str, level: int, target: str | None) -> str:
    """`from ..x import y` inside `module` -> the absolute "pkg.x"."""
    base = module.split(".") if is_package(module) else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(module: str) -> list[Import]:
    tree = ast.parse(FILES[module].read_text(encoding="utf-8"), filename=str(FILES[module]))
    out = []
    for node in ast.walk(tree):                     # every node: function-level imports included
        if isinstance(node, ast.Import):
            out += [Import(module, node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = resolve_relative(module, node.level, node.module) if node.level else node.module
            out.append(Import(module, node.lineno, target, tuple(a.name for a in node.names)))
    return out


IMPORTS = [imp for m in sorted(MODULES) for imp in imports_of(m)]


def package_of(module: str) -> str:
    return module.split(".")[0]


def longest_known(dotted: str) -> str | None:
    """The most specific module of ours that `dotted` names ("ops.engine.model.Model" -> "ops.engine.model")."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        cand = ".".join(parts[:n])
        if cand in MODULES:
            return cand
    return None


def edges_of(imp: Import) -> set[str]:
    """Modules of ours this import statement loads explicitly (a parent package's implicit __init__ is not
    counted: every submodule would otherwise be in a circle with its own package)."""
    if not imp.names:
        known = longest_known(imp.target)
        return {known} if known else set()
    out = set()
    for name in imp.names:
        sub = f"{imp.target}.{name}"
        if sub in MODULES:                          # `from ops import functional`: the submodule
            out.add(sub)
        else:                                       # `from ops.engine.model import Model`: the module itself
            known = longest_known(imp.target)
            if known:
                out.add(known)
    out.discard(imp.module)
    return out


def graph() -> dict[str, dict[str, list[Import]]]:
    g: dict[str, dict[str, list[Import]]] = {m: {} for m in MODULES}
    for imp in IMPORTS:
        for dst in edges_of(imp):
            g[imp.module].setdefault(dst, []).append(imp)
    return g


def strongly_connected(g: dict[str, dict]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one module (the import circles)."""
    index, low, on_stack, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(g[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def a_cycle(g: dict[str, dict], comp: list[str]) -> list[str]:
    """One concrete circle through the component's first module (breadth-first, so a shortest one)."""
    inside, start = set(comp), comp[0]
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for dst in sorted(g[node]):
                if dst == start:
                    path = [node]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if dst in inside and dst not in prev:
                    prev[dst] = node
                    nxt_frontier.append(dst)
        frontier = nxt_frontier
    return comp


# ---- the tests ---------------------------------------------------------------------------------------
def test_the_walk_finds_the_house():
    """Guards the walker itself: if it finds nothing, every other test here passes vacuously."""
    for pkg in ("ops", "ui", "viz", "content", "classroom", "app_pages", "settings"):
        assert any(package_of(m) == pkg for m in MODULES), pkg
    assert "app" in MODULES and "ops.engine.functional" in MODULES
    assert any(i.target.startswith("streamlit") for i in IMPORTS if package_of(i.module) == "app_pages")
    assert any(i.target == "ops" or i.target.startswith("ops.") for i in IMPORTS if package_of(i.module) == "ui")
    # relative imports resolve to absolute modules
    assert resolve_relative("ui.state", 1, "session") == "ui.session"
    assert resolve_relative("ops", 1, "engine") == "ops.engine"
    assert resolve_relative("ops.engine.model", 1, None) == "ops.engine"
    assert resolve_relative("ops.fast.native", 3, "engine") == "ops.engine"


def test_layers():
    """ops runs without Streamlit; viz and content without Streamlit or the UI; nothing imports a page."""
    bad = []
    for imp in IMPORTS:
        pkg, top = package_of(imp.module), imp.target.split(".")[0]
        if top in FORBIDDEN.get(pkg, set()) | {"app", "app_pages"}:
            names = f" ({', '.join(imp.names)})" if imp.names else ""
            bad.append(f"{imp.where()}: {pkg}/ imports {imp.target}{names}")
    assert not bad, "imports across the layers:\n" + "\n".join(bad)


def test_ui_only_draws():
    """ui/ holds what draws: every module of it imports Streamlit; logic without it belongs in classroom/, ops/ or
    content/ (issue 49: the poll's store, the lessons' export, the slots and the queue had settled in ui/)."""
    idle = [module_file(m) for m in sorted(MODULES) if package_of(m) == "ui" and not is_package(m)
            and not any(i.target.split(".")[0] == "streamlit" for i in imports_of(m))]
    assert not idle, f"ui/ modules that draw nothing (move them out of ui/): {idle}"


def test_no_import_circles():
    g = graph()
    comps = strongly_connected(g)
    lines = []
    for comp in comps:
        cyc = a_cycle(g, comp)
        steps = []
        for a, b in zip(cyc, cyc[1:]):
            imp = g[a][b][0]
            steps.append(f"    {a} -> {b}   ({imp.where()})")
        lines.append(f"circle among {{{', '.join(comp)}}}:\n" + "\n".join(steps))
    assert not comps, "import circles:\n" + "\n".join(lines)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def module_aliases(module: str) -> dict[str, str]:
    """Local names bound to a module of ours in `module` ("fn" -> "ops.engine.functional", "ops" -> "ops")."""
    out = {}
    tree = ast.parse(FILES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if longest_known(a.name):
                    out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            target = resolve_relative(module, node.level, node.module) if node.level else node.module
            for a in node.names:
                if f"{target}.{a.name}" in MODULES:
                    out[a.asname or a.name] = f"{target}.{a.name}"
    return out


def private_uses(module: str) -> list[str]:
    """`from other.mod import _x`, `import other._mod`, and `mod._x` on a module of another package."""
    out = []
    for imp in imports_of(module):
        known = longest_known(imp.target)
        if known is None or package_of(known) == package_of(module):
            continue
        names = [n for n in imp.names if is_private(n)]
        path = [p for p in imp.target.split(".") if is_private(p)]
        if names or path:
            out.append(f"{imp.where()}: {module} imports {', '.join(names) or imp.target} from {imp.target}")
    aliases = module_aliases(module)
    for node in ast.walk(ast.parse(FILES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and is_private(node.attr):
            target = aliases.get(node.value.id)
            if target and package_of(target) != package_of(module):
                out.append(f"{module_file(module)}:{node.lineno}: {module} uses {node.value.id}.{node.attr} "
                           f"(private to {target})")
    return out


def test_no_private_names_from_another_package():
    """`from ops.models.gguf import _NAMES` (or `inputs._X`) in ui/ reaches into another package's internals:
    that module should offer a public name instead."""
    bad = [line for m in sorted(MODULES) for line in private_uses(m)]
    assert not bad, "private names taken from another package:\n" + "\n".join(bad)


def test_the_checks_see_a_planted_circle():
    """The circle finder on a toy graph: a -> b -> c -> a is found, d -> a is not part of it."""
    toy = {"a": {"b": []}, "b": {"c": []}, "c": {"a": []}, "d": {"a": []}}
    assert strongly_connected(toy) == [["a", "b", "c"]]
    assert a_cycle(toy, ["a", "b", "c"]) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b": []}, "b": {}}) == []


# ---- no import with side effects -------------------------------------------------------------------------
PRODUCT = ("ops", "ui", "viz", "content", "classroom", "settings")
PROBE = Path(__file__).with_name("import_probe.py")


def import_order(modules: list[str], g: dict[str, dict]) -> list[str]:
    """`modules` with each one's imports of ours before it (depth first over the import graph, which has no circle),
    so what the probe records against a module is what that module's own body did."""
    order, seen = [], set()

    def visit(m: str):
        if m in seen:
            return
        seen.add(m)
        for dst in sorted(g.get(m, {})):
            visit(dst)
        order.append(m)

    for m in modules:
        visit(m)
    return [m for m in order if m in modules]


def third_party() -> list[str]:
    """The libraries the product imports (any import that is not ours): loaded before the probe watches."""
    return sorted({i.target.split(".")[0] for i in IMPORTS
                   if package_of(i.module) in PRODUCT and longest_known(i.target) is None} | {"plotly.io"})


def probe(root: Path, modules: list[str], first: list[str] = ()) -> dict[str, list[str]]:
    """What import_probe.py saw each module's import do, in a fresh interpreter."""
    run = subprocess.run([sys.executable, str(PROBE), str(root), "--first", ",".join(first), *modules],
                         capture_output=True, text=True, cwd=root, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_no_import_has_side_effects():
    product = sorted(m for m in MODULES if package_of(m) in PRODUCT)
    effects = probe(ROOT, import_order(product, graph()), third_party())
    assert sorted(effects) == product                     # every product module was imported, none twice
    bad = [f"{m}: " + "; ".join(e[:5]) + (f" (+{len(e) - 5} more)" if len(e) > 5 else "")
           for m, e in effects.items() if e]
    assert not bad, "imports with side effects (make them explicit, in app.py):\n" + "\n".join(bad)


PLANTED = {      # module -> (source, the kind of effect the probe must report; None: none at all)
    "registry": ("HANDLERS = []\nFIRST = None\n", None),
    "clean": ("import os\nfrom planted import registry\n\nLIMIT = 3\n\n\ndef home():\n"
              "    return os.environ.get('HOME'), registry.HANDLERS\n", None),
    "thread": ("import threading\nthreading.Thread(target=lambda: None, name='planted').start()\n", "thread"),
    "writes": ("from pathlib import Path\nPath(__file__).with_suffix('.log').write_text('x')\n", "write"),
    "environ": ("import os\nHOME = os.environ.get('HOME')\n", "environment"),
    "appends": ("from planted import registry\nregistry.HANDLERS.append(print)\n", "registry"),
    "rebinds": ("from planted import registry\nregistry.FIRST = print\n", "registry"),
    "exit_hook": ("import atexit\natexit.register(print)\n", "registry"),
    "template": ("import plotly.io as pio\npio.templates.default = 'plotly_dark'\n", "registry"),
    "builds": ("import subprocess\nimport sys\nsubprocess.run([sys.executable, '-c', 'pass'])\n", "program"),
}


def test_the_probe_sees_planted_side_effects(tmp_path):
    """The same probe on a package of planted modules: each side effect is reported, of its kind, against the
    module that does it; the clean module (it reads the environment in a function, not at import) is not."""
    (tmp_path / "planted").mkdir()
    (tmp_path / "planted" / "__init__.py").write_text("")
    for name, (source, _) in PLANTED.items():
        (tmp_path / "planted" / f"{name}.py").write_text(source)
    effects = probe(tmp_path, [f"planted.{n}" for n in PLANTED], ["plotly.io"])
    for name, (_, kind) in PLANTED.items():
        found = effects[f"planted.{name}"]
        if kind is None:
            assert found == [], (name, found)
        else:
            assert any(e.startswith(kind + ":") for e in found), (name, kind, found)
    assert "registry: planted.registry.HANDLERS changed size" in effects["planted.appends"]
    assert "registry: planted.registry.FIRST rebound" in effects["planted.rebinds"]
    assert "registry: atexit callbacks" in effects["planted.exit_hook"]
    assert "thread: planted" in effects["planted.thread"]
