"""Lesson files (assets/lessons/*.json): a teacher's prompts, an ordered list of views, notes and poll questions.

A lesson is data, never code: JSON, versioned, read by a strict loader that refuses anything it does not know, so a
malformed, truncated, oversized or crafted file stops with a message naming what is wrong, before anything runs. The
message is in both languages (LessonError.text(lang)): a class may be taught in either.

    {"version": 1,
     "title": {"zh": "...", "en": "..."},
     "prompts": ["I like shanghai"],
     "steps": [{"page": "attention", "pickers": {"layer": 0, "head": 3},
                "notes": {"zh": "...", "en": "..."},
                "question": {"zh": "...", "en": "...", "options": [{"zh": "是", "en": "yes"}, "896"],
                             "answer": {"zh": "是", "en": "yes"}}}]}

`pickers` and `question` are optional. An option (and the answer) is plain text, the same in both languages (a
number, a token), or {"zh": ..., "en": ...}; the answer may also be either language's text of one option. Texts
are plain text: an export escapes every one (classroom/lesson_export.py).
"""
from __future__ import annotations

import errno
import json
from dataclasses import dataclass
from pathlib import Path

from content import stages
from content.template import fill
from content.words import say, template

VERSION = 1
MAX_BYTES = 256 * 1024        # a lesson is a few kilobytes; a bigger file is not one
MAX_TEXT = 4000               # characters in one note or question
MAX_OPTION = 200
MAX_PROMPT = 2000
MAX_PROMPTS = 4
MAX_STEPS = 40
MAX_OPTIONS = 8
PICKERS = {                   # picker -> what it picks, (zh, en); the pages clamp each to what the model has
    "layer": ("一层的编号", "a layer"), "head": ("一个查询头的编号", "a query head"),
    "pos": ("一个 token 位置", "a token position"), "top": ("显示的候选个数", "how many candidates are shown"),
}
ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "assets" / "lessons"

# What the loader can say lives in assets/words/lesson_file.<lang>.json, by code; a field given as a (zh, en) pair is
# filled in per language. Paths into the file (steps[0].page) are the file's own key names, the same in both languages.
TRUNCATED = ("truncated",)    # a field naming a text of the catalogue: said in each language
ROOT_WHERE = ("课程文件", "the lesson")
TITLE_WHERE = ("课程的 title", "the lesson's title")
KINDS = {dict: ("对象", "an object"), list: ("列表", "a list"), str: ("文本", "text"),
         bool: ("true/false", "true/false"), int: ("数字", "a number"),
         float: ("数字", "a number"), type(None): ("null", "null")}
JSON_MSGS = {                 # json.JSONDecodeError's messages, by their opening words -> their text in the catalogue
    "Expecting value": "json_value", "Expecting ',' delimiter": "json_comma", "Expecting ':' delimiter": "json_colon",
    "Expecting property name enclosed in double quotes": "json_key_quotes", "Unterminated string": "json_unterminated",
    "Extra data": "json_extra", "Invalid control character": "json_control", "Invalid \\escape": "json_escape",
    "Invalid \\uXXXX escape": "json_u_escape",
}


class LessonError(ValueError):
    """A lesson file the loader refuses; the message says where and what is wrong, in Chinese and in English
    (str(): English, for logs and the command line; text(lang) for a page)."""

    def __init__(self, code: str, **fields):
        self.code, self.fields = code, fields
        super().__init__(self.text("en"))

    def text(self, lang: str) -> str:
        i = 0 if lang == "zh" else 1

        def field(v):
            if isinstance(v, tuple) and len(v) == 1:               # a catalogue text
                return say(f"lesson_file.{v[0]}", lang)
            return v[i] if isinstance(v, tuple) else v
        return fill(template(f"lesson_file.{self.code}", lang), {k: field(v) for k, v in self.fields.items()})


def _same(text: str) -> tuple[str, str]:
    return (text, text)


def _at(where: tuple, suffix: str) -> tuple[str, str]:
    return (where[0] + suffix, where[1] + suffix)


@dataclass(frozen=True)
class Question:
    zh: str
    en: str
    options: tuple            # of {"zh": ..., "en": ...} (a plain-text option has the same text in both)
    answer: dict              # one of the options

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

    def options_in(self, lang: str) -> list[str]:
        return [o[lang] for o in self.options]

    def answer_in(self, lang: str) -> str:
        return self.answer[lang]


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


def _keys(obj, where: tuple, required: set, optional: set = frozenset()) -> dict:
    if not isinstance(obj, dict):
        raise LessonError("not_object", where=where, kind=_kind(obj))
    unknown = sorted(set(obj) - required - set(optional))
    if unknown:
        raise LessonError("unknown_keys", where=where, keys=", ".join(map(repr, unknown)),
                          accepts=", ".join(sorted(required | set(optional))))
    missing = sorted(required - set(obj))
    if missing:
        raise LessonError("missing", where=where, keys=", ".join(map(repr, missing)))
    return obj


def _kind(value) -> tuple[str, str]:
    return KINDS.get(type(value), _same(type(value).__name__))


def _text(value, where: tuple, limit: int = MAX_TEXT, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise LessonError("not_text", where=where, kind=_kind(value))
    if len(value) > limit:
        raise LessonError("too_long", where=where, n=len(value), limit=limit)
    if not empty and not value.strip():
        raise LessonError("empty", where=where)
    return value


def _both(obj, where: tuple, limit: int = MAX_TEXT) -> dict:
    _keys(obj, where, {"zh", "en"})
    return {lang: _text(obj[lang], _at(where, f".{lang}"), limit) for lang in ("zh", "en")}


def _option(value, where: tuple) -> dict:
    """An option or an answer: plain text (both languages alike) or {"zh": ..., "en": ...}."""
    if isinstance(value, dict):
        return _both(value, where, MAX_OPTION)
    text = _text(value, where, MAX_OPTION)
    return {"zh": text, "en": text}


def _question(obj, where: tuple) -> Question:
    _keys(obj, where, {"zh", "en", "options", "answer"})
    options = obj["options"]
    if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
        raise LessonError("options_list", where=where, most=MAX_OPTIONS)
    options = tuple(_option(o, _at(where, f".options[{i}]")) for i, o in enumerate(options))
    if any(len({o[lang] for o in options}) != len(options) for lang in ("zh", "en")):
        raise LessonError("option_twice", where=where)
    raw = obj["answer"]
    answer = _option(raw, _at(where, ".answer"))
    if isinstance(raw, str):          # plain text names the option with that text in either language
        answer = next((o for o in options if raw in (o["zh"], o["en"])), answer)
    if answer not in options:
        raise LessonError("answer_not_option", where=where, answer=repr(raw) if isinstance(raw, str)
                          else (repr(answer["zh"]), repr(answer["en"])))
    return Question(_text(obj["zh"], _at(where, ".zh")), _text(obj["en"], _at(where, ".en")), options, answer)


def _pickers(obj, where: tuple) -> dict:
    _keys(obj, where, set(), set(PICKERS))
    for k, v in obj.items():
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10_000:
            raise LessonError("picker", where=where, field=k, what=PICKERS[k], value=repr(v))
    return dict(obj)


def parse(data, name: str = "") -> Lesson:
    """A lesson from parsed JSON; LessonError names the first thing wrong."""
    _keys(data, ROOT_WHERE, {"version", "title", "prompts", "steps"})
    if data["version"] != VERSION or isinstance(data["version"], bool):
        raise LessonError("version", version=repr(data["version"]), want=VERSION)
    prompts = data["prompts"]
    if not isinstance(prompts, list) or not 1 <= len(prompts) <= MAX_PROMPTS:
        raise LessonError("prompts", most=MAX_PROMPTS)
    prompts = tuple(_text(p, _same(f"prompts[{i}]"), MAX_PROMPT) for i, p in enumerate(prompts))
    steps = data["steps"]
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise LessonError("steps", most=MAX_STEPS)
    known, out = pages(), []
    for i, s in enumerate(steps):
        where = _same(f"steps[{i}]")
        _keys(s, where, {"page", "notes"}, {"pickers", "question"})
        page = _text(s["page"], _at(where, ".page"), 40)
        if page not in known:
            raise LessonError("page", where=where, page=repr(page), accepts=", ".join(sorted(known)))
        out.append(Step(page, _pickers(s.get("pickers", {}), _at(where, ".pickers")),
                        _both(s["notes"], _at(where, ".notes")),
                        _question(s["question"], _at(where, ".question")) if "question" in s else None))
    return Lesson(VERSION, _both(data["title"], TITLE_WHERE), prompts, tuple(out), name)


def loads(raw: bytes | str, name: str = "") -> Lesson:
    """A lesson from the bytes of its file: size first, then UTF-8, then JSON, then the schema."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8")
    if len(raw) > MAX_BYTES:
        raise LessonError("too_big", n=f"{len(raw):,}", limit=f"{MAX_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LessonError("not_utf8", byte=e.start) from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        ended = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")   # ran out of input
        zh = say("lesson_file." + next((v for k, v in JSON_MSGS.items() if e.msg.startswith(k)), "json_other"), "zh")
        raise LessonError("not_json", line=e.lineno, col=e.colno, msg=(zh, e.msg),
                          cut=TRUNCATED if ended else ("", "")) from None
    return parse(data, name)


def _no_constant(token: str):
    raise LessonError("constant", token=token)


def load(path: str | Path) -> Lesson:
    """A lesson file; the size is checked before the file is read whole."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        raise LessonError("unreadable", name=path.name,       # zh: the error's code, en: its words
                          why=(errno.errorcode.get(e.errno, str(e.errno)), e.strerror)) from None
    if size > MAX_BYTES:
        raise LessonError("too_big", n=f"{size:,}", limit=f"{MAX_BYTES:,}")
    with open(path, "rb") as f:
        return loads(f.read(MAX_BYTES + 1), path.stem)


COURSE = ("first-lesson", "attention-deep-dive", "serving-interview")   # the order a class takes them in


def shipped() -> dict[str, Path]:
    """The lessons in assets/lessons/, by name: the course's in COURSE order (the chooser opens on the first
    lesson), then any other file by name."""
    files = {p.stem: p for p in sorted(LESSONS.glob("*.json"))}
    return {n: files[n] for n in COURSE if n in files} | {n: p for n, p in files.items() if n not in COURSE}


def _option_json(option: dict):
    """An option as its file writes it: plain text where both languages say the same."""
    return option["en"] if option["zh"] == option["en"] else dict(option)


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
            step["question"] = {"zh": q.zh, "en": q.en, "options": [_option_json(o) for o in q.options],
                                "answer": _option_json(q.answer)}
        steps.append(step)
    return json.dumps({"version": lesson.version, "title": lesson.title, "prompts": list(lesson.prompts),
                       "steps": steps}, ensure_ascii=False, indent=1)
