"""content/lessons.py: the shipped lessons load; a malformed, truncated, oversized or crafted lesson file is refused
with a message naming what is wrong, before anything runs."""
from __future__ import annotations

import copy
import json

import pytest

from content import lessons
from content.lessons import LessonError

GOOD = {"version": 1, "title": {"zh": "课", "en": "Lesson"}, "prompts": ["I like shanghai"],
        "steps": [{"page": "attention", "pickers": {"layer": 1, "head": 2}, "notes": {"zh": "注", "en": "note"},
                   "question": {"zh": "问", "en": "q", "options": ["a", "b"], "answer": "a"}}]}


def test_the_three_shipped_lessons_load_and_round_trip():
    found = lessons.shipped()
    assert {"first-lesson", "attention-deep-dive", "serving-interview"} <= set(found)
    for name, path in found.items():
        lesson = lessons.load(path)
        assert lesson.name == name and lesson.steps
        assert all(s.notes["zh"].strip() and s.notes["en"].strip() for s in lesson.steps)
        assert lessons.loads(lessons.to_json(lesson), name) == lesson


def test_a_good_lesson():
    lesson = lessons.loads(json.dumps(GOOD))
    assert lesson.steps[0].pickers == {"layer": 1, "head": 2} and lesson.steps[0].question.answer == "a"


def bad(mutate):
    data = copy.deepcopy(GOOD)
    mutate(data)
    with pytest.raises(LessonError) as e:
        lessons.loads(json.dumps(data))
    return str(e.value)


@pytest.mark.parametrize("mutate,words", [
    (lambda d: d.update(version=2), "version"),
    (lambda d: d.update(version=True), "version"),
    (lambda d: d.update(script="alert(1)"), "unknown key(s) 'script'"),
    (lambda d: d["steps"][0].update(code="import os"), "steps[0] has unknown key(s) 'code'"),
    (lambda d: d["steps"][0].update(page="secrets"), "steps[0].page 'secrets' is not a page"),
    (lambda d: d["steps"][0].update(page="tour"), "is not a page"),
    (lambda d: d["steps"][0]["pickers"].update(layer="1"), "steps[0].pickers.layer must be a whole number"),
    (lambda d: d["steps"][0]["pickers"].update(layer=-1), "steps[0].pickers.layer"),
    (lambda d: d["steps"][0]["pickers"].update(source="/etc"), "unknown key(s) 'source'"),
    (lambda d: d["steps"][0]["notes"].pop("zh"), "steps[0].notes is missing 'zh'"),
    (lambda d: d["steps"][0]["notes"].update(en=["x"]), "steps[0].notes.en must be text, not a list"),
    (lambda d: d["steps"][0]["question"].update(answer="c"), "answer 'c' is not one of its options"),
    (lambda d: d["steps"][0]["question"].update(options=["a"]), "options must be a list of 2"),
    (lambda d: d.update(prompts=[]), "prompts must be a list"),
    (lambda d: d.update(prompts=[3]), "prompts[0] must be text, not a number"),
    (lambda d: d.update(prompts=["x" * 5000]), "prompts[0] is 5000 characters"),
    (lambda d: d.update(steps={}), "steps must be a list"),
    (lambda d: d.update(title="Lesson"), "title must be an object, not text"),
])
def test_bad_lessons_name_what_is_wrong(mutate, words):
    assert words in bad(mutate)


def test_not_an_object():
    with pytest.raises(LessonError, match="the lesson must be an object, not a list"):
        lessons.loads("[1, 2]")


def test_truncated_and_malformed_json():
    text = json.dumps(GOOD)
    with pytest.raises(LessonError, match=r"not valid JSON at line 1, column \d+.*truncated"):
        lessons.loads(text[: len(text) // 2])
    with pytest.raises(LessonError, match="not valid JSON"):
        lessons.loads(text.replace(":", "=", 1))
    with pytest.raises(LessonError, match="NaN"):
        lessons.loads(text.replace('"version": 1', '"version": NaN'))
    with pytest.raises(LessonError, match="not UTF-8"):
        lessons.loads(b"\xff\xfe" + text.encode())


def test_oversized_files_are_refused_before_reading(tmp_path):
    big = copy.deepcopy(GOOD)
    big["steps"][0]["notes"]["en"] = "x" * 3000
    text = json.dumps(big)
    text = text + " " * (lessons.MAX_BYTES + 1 - len(text))        # valid JSON, one byte over the limit
    with pytest.raises(LessonError, match="262,145 bytes; the limit is 262,144"):
        lessons.loads(text)
    path = tmp_path / "big.json"
    path.write_text(text)
    with pytest.raises(LessonError, match="262,145 bytes"):
        lessons.load(path)
    with pytest.raises(LessonError, match="cannot read"):
        lessons.load(tmp_path / "missing.json")
