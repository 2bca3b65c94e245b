"""Lesson files (assets/lessons/*.json): a teacher's prompts, an ordered list of views, notes and poll questions.

A lesson is data, never code: JSON, versioned, read by a strict loader that refuses anything it does not know, so a
malformed, truncated, oversized or crafted file stops with a message naming what is wrong, before anything runs.

    {"version": 1,
     "title": {"zh": "...", "en": "..."},
     "prompts": ["I like shanghai"],
     "steps": [{"page": "attention", "pickers": {"layer": 0, "head": 3},
                "notes": {"zh": "...", "en": "..."},
                "question": {"zh": "...", "en": "...", "options": ["a", "b"], "answer": "a"}}]}

`pickers` and `question` are optional. Texts are plain text: an export escapes every one (ui/lesson_export.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import stages

VERSION = 1
MAX_BYTES = 256 * 1024        # a lesson is a few kilobytes; a bigger file is not one
MAX_TEXT = 4000               # characters in one note or question
MAX_PROMPT = 2000
MAX_PROMPTS = 4
MAX_STEPS = 40
MAX_OPTIONS = 8
PICKERS = {                   # picker -> what it picks (an index from 0); the export checks it against the model
    "layer": "a layer", "head": "a query head", "pos": "a token position", "top": "how many candidates (1-50)",
}
ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "assets" / "lessons"


class LessonError(ValueError):
    """A lesson file the loader refuses; the message says where and what is wrong."""


@dataclass(frozen=True)
class Question:
    zh: str
    en: str
    options: tuple
    answer: str


@dataclass(frozen=True)
class Step:
    page: str
    pickers: dict
    notes: dict               # {"zh": ..., "en": ...}
    question: Question | None


@dataclass(frozen=True)
class Lesson:
    version: int
    title: dict               # {"zh": ..., "en": ...}
    prompts: tuple
    steps: tuple
    name: str = ""            # the file's stem


def pages() -> set[str]:
    """The pages a step may name: the registry's, less the tour and the practice bank (no single view to replay)."""
    return {s.page for s in stages.pages()} - {"tour", "practice"}


def _keys(obj, where: str, required: set, optional: set = frozenset()) -> dict:
    if not isinstance(obj, dict):
        raise LessonError(f"{where} must be an object, not {_kind(obj)}")
    unknown = sorted(set(obj) - required - set(optional))
    if unknown:
        raise LessonError(f"{where} has unknown key(s) {', '.join(map(repr, unknown))}; it accepts "
                          f"{', '.join(sorted(required | set(optional)))}")
    missing = sorted(required - set(obj))
    if missing:
        raise LessonError(f"{where} is missing {', '.join(map(repr, missing))}")
    return obj


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


def _text(value, where: str, limit: int = MAX_TEXT, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise LessonError(f"{where} must be text, not {_kind(value)}")
    if len(value) > limit:
        raise LessonError(f"{where} is {len(value)} characters long; the limit is {limit}")
    if not empty and not value.strip():
        raise LessonError(f"{where} is empty")
    return value


def _both(obj, where: str) -> dict:
    _keys(obj, where, {"zh", "en"})
    return {lang: _text(obj[lang], f"{where}.{lang}") for lang in ("zh", "en")}


def _question(obj, where: str) -> Question:
    _keys(obj, where, {"zh", "en", "options", "answer"})
    options = obj["options"]
    if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
        raise LessonError(f"{where}.options must be a list of 2 to {MAX_OPTIONS} texts")
    options = tuple(_text(o, f"{where}.options[{i}]", 200) for i, o in enumerate(options))
    if len(set(options)) != len(options):
        raise LessonError(f"{where}.options has the same option twice")
    answer = _text(obj["answer"], f"{where}.answer", 200)
    if answer not in options:
        raise LessonError(f"{where}.answer {answer!r} is not one of its options")
    return Question(_text(obj["zh"], f"{where}.zh"), _text(obj["en"], f"{where}.en"), options, answer)


def _pickers(obj, where: str) -> dict:
    _keys(obj, where, set(), set(PICKERS))
    for k, v in obj.items():
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10_000:
            raise LessonError(f"{where}.{k} must be a whole number from 0 ({PICKERS[k]}), not {v!r}")
    return dict(obj)


def parse(data, name: str = "") -> Lesson:
    """A lesson from parsed JSON; LessonError names the first thing wrong."""
    _keys(data, "the lesson", {"version", "title", "prompts", "steps"})
    if data["version"] != VERSION or isinstance(data["version"], bool):
        raise LessonError(f"the lesson's version is {data['version']!r}; this app reads version {VERSION}")
    prompts = data["prompts"]
    if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
        raise LessonError(f"the lesson's prompts must be a list of 1 to {MAX_PROMPTS} texts")
    prompts = tuple(_text(p, f"prompts[{i}]", MAX_PROMPT) for i, p in enumerate(prompts))
    steps = data["steps"]
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise LessonError(f"the lesson's steps must be a list of 1 to {MAX_STEPS} steps")
    known, out = pages(), []
    for i, s in enumerate(steps):
        where = f"steps[{i}]"
        _keys(s, where, {"page", "notes"}, {"pickers", "question"})
        page = _text(s["page"], f"{where}.page", 40)
        if page not in known:
            raise LessonError(f"{where}.page {page!r} is not a page of the app; it accepts {', '.join(sorted(known))}")
        out.append(Step(page, _pickers(s.get("pickers", {}), f"{where}.pickers"), _both(s["notes"], f"{where}.notes"),
                        _question(s["question"], f"{where}.question") if "question" in s else None))
    return Lesson(VERSION, _both(data["title"], "the lesson's title"), prompts, tuple(out), name)


def loads(raw: bytes | str, name: str = "") -> Lesson:
    """A lesson from the bytes of its file: size first, then UTF-8, then JSON, then the schema."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if len(raw) > MAX_BYTES:
        raise LessonError(f"the lesson file is {len(raw):,} bytes; the limit is {MAX_BYTES:,} (256 KiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LessonError(f"the lesson file is not UTF-8 text (byte {e.start})") from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        ended = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")   # ran out of input
        cut = " (the file looks truncated)" if ended else ""
        raise LessonError(f"the lesson file is not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}{cut}") \
            from None
    return parse(data, name)


def _no_constant(token: str):
    raise LessonError(f"the lesson file holds {token}, which is not JSON")


def load(path: str | Path) -> Lesson:
    """A lesson file; the size is checked before the file is read whole."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        raise LessonError(f"cannot read the lesson file {path.name}: {e.strerror}") from None
    if size > MAX_BYTES:
        raise LessonError(f"the lesson file is {size:,} bytes; the limit is {MAX_BYTES:,} (256 KiB)")
    with open(path, "rb") as f:
        return loads(f.read(MAX_BYTES + 1), path.stem)


def shipped() -> dict[str, Path]:
    """The lessons in assets/lessons/, by name."""
    return {p.stem: p for p in sorted(LESSONS.glob("*.json"))}


def to_json(lesson: Lesson) -> str:
    """The lesson as its file's text (what the loader reads back)."""
    steps = []
    for s in lesson.steps:
        step = {"page": s.page}
        if s.pickers:
            step["pickers"] = s.pickers
        step["notes"] = s.notes
        if s.question:
            q = s.question
            step["question"] = {"zh": q.zh, "en": q.en, "options": list(q.options), "answer": q.answer}
        steps.append(step)
    return json.dumps({"version": lesson.version, "title": lesson.title, "prompts": list(lesson.prompts),
                       "steps": steps}, ensure_ascii=False, indent=1)
