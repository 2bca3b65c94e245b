"""Import modules one by one in this (fresh) process and say what each import did besides defining names.

    python tests/unit/import_probe.py ROOT --first numpy,torch,... mod.a mod.b ...

ROOT goes first on sys.path. The --first modules (the third-party libraries the house imports) are imported
before anything is watched, so what they do at their own import is not blamed on ours. Then each module is
imported in the order given (a module's own imports first: tests/unit/test_imports.py orders them), and what
happened during that one import is recorded against it. Prints JSON {module: ["kind: detail", ...]}.

Watched, precisely:
  thread       threading.Thread.start or _thread.start_new_thread called (even a thread that ends at once)
  write        a file opened for writing, appending, creating or updating (the "open" audit event's mode or
               flags); os.mkdir / rename / replace / remove / rmdir / unlink / symlink / link / truncate / chmod
               / utime; shutil copies and removals (audit events)
  program      a subprocess, os.system, os.exec*, os.posix_spawn*, os.fork (audit events): e.g. a compiler
  native       ctypes.dlopen (audit event): native code loaded
  environment  os.environ (or os.getenv) read, iterated, set or deleted; os.putenv / os.unsetenv
  registry     a process-wide table differs after the import: atexit callbacks (count), signal handlers,
               sys.path / meta_path / path_hooks, sys.excepthook, threading.excepthook, warnings.filters, the
               root logger's handlers and level, plotly's templates and default template, torch's default
               dtype, thread count and grad mode; or a name in another module of ROOT already imported (ours)
               now bound to another object, or a list / dict / set there changed length, or a name added there
               (registering oneself into ui/state and the like). Modules of ours first imported by this import
               (its parent packages, which Python imports first) are new, not changed; a package gaining its
               new submodule as an attribute is the import system's own doing.
Reading a file (a module's source, an asset) is not counted: reading changes nothing.
"""
from __future__ import annotations

import _thread
import atexit
import importlib
import json
import os
import signal
import sys
import threading
import types
from pathlib import Path

CURRENT: list = [None]                    # the module whose import is under way
EFFECTS: dict[str, list[str]] = {}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
WRITE_EVENTS = ("os.mkdir", "os.rename", "os.replace", "os.remove", "os.rmdir", "os.unlink", "os.symlink", "os.link",
                "os.truncate", "os.chmod", "os.chown", "os.utime", "shutil.copyfile", "shutil.copymode",
                "shutil.copystat", "shutil.copytree", "shutil.move", "shutil.rmtree", "shutil.make_archive")
PROGRAM_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                  "os.forkpty", "pty.spawn")


def note(kind: str, detail, module: str | None = None) -> None:
    module = module or CURRENT[0]
    if module is not None:
        line = f"{kind}: {detail}"
        if line not in EFFECTS[module]:
            EFFECTS[module].append(line)


def audit(event: str, args: tuple) -> None:
    if CURRENT[0] is None:
        return
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and flags & WRITE_FLAGS)
        if writing:
            note("write", path)
    elif event in WRITE_EVENTS:
        note("write", f"{event} {args[0] if args else ''}")
    elif event in PROGRAM_EVENTS:
        note("program", f"{event} {args[0] if args else ''}")
    elif event == "ctypes.dlopen":
        note("native", args[0] if args else "")
    elif event in ("os.putenv", "os.unsetenv"):
        note("environment", f"{event} {args[0] if args else ''}")


class WatchedEnviron(os._Environ):
    def __getitem__(self, key):
        note("environment", f"reads {key}")
        return super().__getitem__(key)

    def __iter__(self):
        note("environment", "reads all of it")
        return super().__iter__()

    def __setitem__(self, key, value):
        note("environment", f"sets {key}")
        super().__setitem__(key, value)

    def __delitem__(self, key):
        note("environment", f"deletes {key}")
        super().__delitem__(key)


def watch_threads() -> None:
    start, raw = threading.Thread.start, _thread.start_new_thread

    def watched_start(self, *a, **k):
        note("thread", self.name)
        return start(self, *a, **k)

    def watched_raw(function, *a, **k):
        note("thread", getattr(function, "__qualname__", repr(function)))
        return raw(function, *a, **k)

    threading.Thread.start = watched_start
    _thread.start_new_thread = watched_raw
    threading._start_new_thread = watched_raw      # what Thread.start calls in this Python


def registries() -> dict:
    import logging

    out = {"atexit callbacks": atexit._ncallbacks(),
           "signal handlers": {s.name: repr(signal.getsignal(s)) for s in signal.Signals},
           "sys.path": list(sys.path), "sys.meta_path": [repr(f) for f in sys.meta_path],
           "sys.path_hooks": [repr(h) for h in sys.path_hooks],
           "sys.excepthook": repr(sys.excepthook), "threading.excepthook": repr(threading.excepthook),
           "warnings.filters": [repr(f) for f in __import__("warnings").filters],
           "root logger": (repr(logging.getLogger().handlers), logging.getLogger().level)}
    if "plotly.io" in sys.modules:
        pio = sys.modules["plotly.io"]
        out["plotly templates"] = (sorted(pio.templates), pio.templates.default)
    if "torch" in sys.modules:
        torch = sys.modules["torch"]
        out["torch settings"] = (str(torch.get_default_dtype()), torch.get_num_threads(), torch.is_grad_enabled())
    return out


# a module's file -> whether it is ours: under ROOT, and not this probe (its own cache grows as it goes). Resolving
# every loaded module's path twice per probed module was most of the probe's time; once per file is enough.
OURS: dict[str, bool] = {}
SELF = Path(__file__).resolve()


def ours(file: str, root: Path) -> bool:
    if file not in OURS:
        path = Path(file).resolve()
        OURS[file] = root in path.parents and path != SELF
    return OURS[file]


def namespaces(root: Path) -> dict:
    """Every name in every module of ours already imported -> (object id, length of a list / dict / set)."""
    out = {}
    for name, mod in list(sys.modules.items()):
        file = getattr(mod, "__file__", None)
        if not isinstance(mod, types.ModuleType) or not isinstance(file, str) or not ours(file, root):
            continue
        for k, v in list(vars(mod).items()):
            size = len(v) if isinstance(v, (list, dict, set)) and k != "__builtins__" else None
            out[(name, k)] = (id(v), size)
    return out


def compare(before_reg: dict, after_reg: dict, before_ns: dict, after_ns: dict, module: str) -> None:
    for key in before_reg.keys() | after_reg.keys():
        if before_reg.get(key) != after_reg.get(key):
            note("registry", key, module)
    for (mod, name), was in before_ns.items():
        now = after_ns.get((mod, name))
        if now != was:
            note("registry", f"{mod}.{name} {'rebound' if now is None or now[0] != was[0] else 'changed size'}", module)
    old = {mod for mod, _ in before_ns}
    for (mod, name) in after_ns.keys() - before_ns.keys():
        if mod in old and f"{mod}.{name}" not in sys.modules:      # not a new submodule bound on its package
            note("registry", f"{mod}.{name} added", module)


def main(argv: list[str]) -> None:
    root = Path(argv[0]).resolve()
    first, modules = [], argv[1:]
    if modules and modules[0] == "--first":
        first, modules = [m for m in modules[1].split(",") if m], modules[2:]
    sys.path.insert(0, str(root))
    for name in first:
        try:
            importlib.import_module(name)
        except Exception:                 # noqa: BLE001 (an optional library missing here: nothing to preload)
            pass
    os.environ.__class__ = WatchedEnviron
    watch_threads()
    sys.addaudithook(audit)
    for module in modules:
        EFFECTS[module] = []
        reg, ns = registries(), namespaces(root)
        CURRENT[0] = module
        try:
            importlib.import_module(module)
        except Exception as e:            # noqa: BLE001 (reported, not raised: the other modules still get probed)
            note("error", f"{type(e).__name__}: {e}")
        finally:
            CURRENT[0] = None
        compare(reg, registries(), ns, namespaces(root), module)
    print(json.dumps(EFFECTS))


if __name__ == "__main__":
    main(sys.argv[1:])
