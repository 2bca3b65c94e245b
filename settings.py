"""Every OPERATOR_LAB_* setting, read here and nowhere else, typed and checked.

A setting comes from the environment, else from .streamlit/secrets.toml (the classroom ones, by their short
name: `classroom = true`), else its default. A value that does not parse, or lies outside what the setting
accepts, stops the app with a message that names the variable, the value and what it accepts (app.py). The
rest of the house is handed what it needs: ops.configure() gets the cache folder and the limits, ui/ reads
current(). docs/configuration.md is this table, written out (tests/unit/test_settings.py keeps them equal).

current() is read at every script run, and parses again only when the environment changed (a test that sets a
variable sees it at once; a server's environment does not change).
"""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from content.words import say


class SettingError(ValueError):
    """A setting's value that the app cannot use; the message names the variable, the value and what it accepts."""


@dataclass(frozen=True)
class Setting:
    name: str            # the environment variable
    kind: str            # "int", "float", "bool", "path", "paths", "store" (a file path or postgresql:// URL), "key"
    default: object      # None: none (a path: the user cache folder; SESSION_MB, STORE_MB: by mode)
    lo: float = 1        # the smallest value a number accepts
    hi: float = 10**9    # the largest
    secret: str = ""     # its key in .streamlit/secrets.toml, where it may be set there too

    @property
    def key(self) -> str:
        """Its short name ("max_tokens"), the key of its words in assets/words/settings.<lang>.json."""
        return self.name.removeprefix("OPERATOR_LAB_").lower()

    def help(self, lang: str) -> str:
        return say(f"settings.{self.key}", lang)


SETTINGS = (                 # what each does: assets/words/settings.<lang>.json, by short name (Setting.key)
    Setting("OPERATOR_LAB_CACHE", "path", None),
    Setting("OPERATOR_LAB_MAX_TOKENS", "int", 2048),
    Setting("OPERATOR_LAB_CLASSROOM", "bool", False, secret="classroom"),
    Setting("OPERATOR_LAB_ALLOWED_MODELS", "paths", (), secret="allowed_models"),
    Setting("OPERATOR_LAB_CLASSROOM_MAX_TOKENS", "int", 512, secret="max_tokens"),
    Setting("OPERATOR_LAB_CLASSROOM_MAX_NEW_TOKENS", "int", 64, secret="max_new_tokens"),
    Setting("OPERATOR_LAB_CLASSROOM_MAX_BATCH", "int", 4, hi=8, secret="max_batch"),
    Setting("OPERATOR_LAB_SESSION_MB", "float", None, secret="session_mb"),
    Setting("OPERATOR_LAB_STORE_MB", "float", None, secret="store_mb"),
    Setting("OPERATOR_LAB_CONCURRENT_RUNS", "int", 2),
    Setting("OPERATOR_LAB_CONCURRENT_DECODES", "int", 2),
    Setting("OPERATOR_LAB_DECODE_BATCH", "int", 8, lo=0, hi=64),
    Setting("OPERATOR_LAB_TRACE_BATCH", "int", 8, lo=0, hi=64),
    Setting("OPERATOR_LAB_SWEEPS", "int", 1),
    Setting("OPERATOR_LAB_SWEEP_QUEUE", "int", 8, lo=0),
    Setting("OPERATOR_LAB_TEACHER_KEY", "key", None, secret="teacher_key"),
    Setting("OPERATOR_LAB_POLL_DB", "store", None, secret="poll_db"),
)
BY_NAME = {s.name: s for s in SETTINGS}
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")


@dataclass(frozen=True)
class Settings:
    cache: Path | None
    max_tokens: int
    classroom: bool
    allowed_models: tuple
    classroom_max_tokens: int
    classroom_max_new_tokens: int
    classroom_max_batch: int
    session_mb: float
    store_mb: float
    concurrent_runs: int
    concurrent_decodes: int
    decode_batch: int
    trace_batch: int
    sweeps: int
    sweep_queue: int
    teacher_key: str | None = None    # compared in constant time (ui/poll.py); never shown, never in a URL
    poll_db: str | None = None        # None: polls.sqlite in the cache folder

    def limits(self):
        """The prompt, generation and batch limits ops/ applies (ops.engine.inputs.Limits)."""
        from ops.engine.inputs import MAX_BATCH, Limits

        if not self.classroom:
            return Limits(max_tokens=self.max_tokens, max_new_tokens=self.max_tokens, max_batch=MAX_BATCH)
        tokens = min(self.max_tokens, self.classroom_max_tokens)
        return Limits(max_tokens=tokens, max_new_tokens=min(tokens, self.classroom_max_new_tokens),
                      max_batch=self.classroom_max_batch)


def _accepts(s: Setting) -> str:
    return say(f"settings.accepts_{s.kind}", "en", lo=f"{s.lo:g}", hi=f"{s.hi:g}", sep=os.pathsep)


def parse(s: Setting, raw) -> object:
    """raw (a string from the environment, or a TOML value) as the setting's type; SettingError if it is not one."""
    def bad():
        shown = "(hidden)" if s.kind == "key" else repr(raw)     # a key is never echoed, even a wrong one
        return SettingError(f"{s.name}={shown} is not valid: it accepts {_accepts(s)}.")

    if s.kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in TRUE or text in FALSE:
            return text in TRUE
        raise bad()
    if s.kind in ("int", "float"):
        try:
            value = float(str(raw).strip())
        except ValueError:
            raise bad() from None
        if not math.isfinite(value) or s.kind == "int" and value != int(value) or not s.lo <= value <= s.hi:
            raise bad()
        return int(value) if s.kind == "int" else value
    if s.kind in ("key", "store"):
        text = str(raw).strip()
        if not text or s.kind == "store" and text.startswith("postgres") and "://" not in text:
            raise bad()
        return text
    if s.kind == "path":
        text = str(raw).strip()
        if not text:
            raise bad()
        return Path(os.path.expanduser(text))
    items = raw if isinstance(raw, (list, tuple)) else str(raw).split(os.pathsep)
    return tuple(str(p).strip() for p in items if str(p).strip())


# as Streamlit looks; "~" is expanded when read (secrets()), so importing this module reads no environment
SECRETS = (Path("~") / ".streamlit" / "secrets.toml", Path(".streamlit") / "secrets.toml")


def secrets(paths=SECRETS) -> dict:
    """The settings the secrets files hold (by their short names; the project's file over the user's); {} when
    there is none. A file that is not TOML stops the app like any bad setting."""
    found = {}
    for path in paths:
        try:
            data = tomllib.loads(Path(path).expanduser().read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise SettingError(f"{path} could not be read as TOML: {e}") from None
        found.update({s.name: data[s.secret] for s in SETTINGS if s.secret and s.secret in data})
    return found


def read(environ=None, secret_values: dict | None = None) -> Settings:
    """Every setting, parsed and checked (SettingError names the first bad one)."""
    environ = os.environ if environ is None else environ
    secret_values = secrets() if secret_values is None else secret_values
    values = {}
    for s in SETTINGS:
        raw = environ.get(s.name)
        if raw is None:
            raw = secret_values.get(s.name)
        values[s.name] = s.default if raw is None else parse(s, raw)
    classroom = values["OPERATOR_LAB_CLASSROOM"]
    if values["OPERATOR_LAB_SESSION_MB"] is None:
        values["OPERATOR_LAB_SESSION_MB"] = 256.0 if classroom else 2048.0
    if values["OPERATOR_LAB_STORE_MB"] is None:     # the one cache of prompt data (ops.engine.store)
        values["OPERATOR_LAB_STORE_MB"] = 1024.0 if classroom else 4096.0
    return Settings(*(values[s.name] for s in SETTINGS))


_last: tuple = (None, None)


def current() -> Settings:
    """The settings for this process's environment now (parsed again only when it changed)."""
    global _last
    key = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("OPERATOR_LAB_")))
    if _last[0] != key:
        _last = (key, read())
    return _last[1]


def apply() -> Settings:
    """current(), handed to ops (the cache folder, the limits, the store's budget); app.py calls it at every run."""
    import ops

    s = current()
    ops.configure(cache=s.cache, limits=s.limits(), store_bytes=int(s.store_mb * 2**20))
    return s


def table_markdown() -> str:
    """docs/configuration.md's table: every setting, its default and what it does."""
    rows = ["| variable | default | what it does | 含义 |", "|---|---|---|---|"]
    for s in SETTINGS:
        shown = {None: "—", (): "empty"}.get(s.default, s.default)
        default = ("on" if s.default else "off") if s.kind == "bool" else shown
        rows.append(f"| `{s.name}` | {default} | {s.help('en')}; accepts {_accepts(s)} | {s.help('zh')} |")
    return "\n".join(rows)
