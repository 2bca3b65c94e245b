"""classroom/lessons.py: the shipped lessons load; a malformed, truncated, oversized or crafted lesson file is refused
with a message naming what is wrong, in Chinese and in English, before anything runs; a question's options may be
plain text or {"zh", "en"}."""
from __future__ import annotations

import copy
import json
import re

import pytest

from classroom import lessons
from classroom.lessons import LessonError

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


ENGLISH_SENTENCE = re.compile(r"[A-Za-z]+(?: +[A-Za-z]+){2,}")     # three English words in a row
HAN = re.compile(r"[\u4e00-\u9fff]")


def chinese_only(message: str) -> bool:
    """A Chinese message: Han characters and no English sentence (file paths, key names and JSON tokens are the
    file's own words; ../../etc/passwd and steps[0].page are not sentences)."""
    words = re.sub(r"'[^']*'|[\w.]*\[\d+\][\w.]*", "", message)          # quoted values and steps[0].x paths
    return bool(HAN.search(message)) and not ENGLISH_SENTENCE.search(words)


def test_the_chinese_check_itself():
    assert chinese_only("课程文件有 1 字节；上限是 2（256 KiB）")
    assert not chinese_only("课程文件无法打开。问题：the lesson file is not UTF-8 text (byte 0)")
    assert not chinese_only("the lesson file is not UTF-8 text")


def test_a_good_lesson():
    lesson = lessons.loads(json.dumps(GOOD))
    assert lesson.steps[0].pickers == {"layer": 1, "head": 2} and lesson.steps[0].question.answer_in("en") == "a"


def bad(mutate):
    data = copy.deepcopy(GOOD)
    mutate(data)
    with pytest.raises(LessonError) as e:
        lessons.loads(json.dumps(data))
    return str(e.value)


SCHEMA_CASES = [
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
]


@pytest.mark.parametrize("mutate,words", SCHEMA_CASES)
def test_bad_lessons_name_what_is_wrong(mutate, words):
    assert words in bad(mutate)


def error(call) -> LessonError:
    with pytest.raises(LessonError) as e:
        call()
    return e.value


BAD_BYTES = {                # every way a file fails before or at the schema: its bytes -> the place the message names
    "truncated": (lambda t: t[: len(t) // 2], "1"),
    "malformed": (lambda t: t.replace(b":", b"=", 1), "1"),
    "nan": (lambda t: t.replace(b'"version": 1', b'"version": NaN'), "NaN"),
    "oversized": (lambda t: b" " * (lessons.MAX_BYTES + 1) + t, "262,144"),
    "not-utf8": (lambda t: b"\xff\xfe" + t, "0"),
    "crafted-page": (lambda t: t.replace(b'"attention"', b'"../../etc/passwd"'), "steps[0].page"),
    "code-for-prompt": (lambda t: t.replace(b'"I like shanghai"', b'{"__import__": "os"}'), "prompts[0]"),
    "unknown-key": (lambda t: t.replace(b'"version"', b'"script": 1, "version"'), "script"),
    "not-an-object": (lambda t: b"[1, 2]", "[]"),
}


@pytest.mark.parametrize("kind", list(BAD_BYTES))
def test_every_message_is_in_both_languages(kind):
    """Issue: the loader's detail was English inside a Chinese page. Each refusal words itself in both languages:
    Chinese with no English sentence, English with no Chinese, the same place named in both."""
    make, place = BAD_BYTES[kind]
    e = error(lambda: lessons.loads(make(json.dumps(GOOD).encode())))
    zh, en = e.text("zh"), e.text("en")
    assert chinese_only(zh), zh
    assert not HAN.search(en) and en == str(e), en
    if place != "[]":
        assert place in zh and place in en, (zh, en)


def test_a_missing_file_in_both_languages(tmp_path):
    e = error(lambda: lessons.load(tmp_path / "missing.json"))
    assert "missing.json" in e.text("zh") and chinese_only(e.text("zh")) and "ENOENT" in e.text("zh")
    assert "cannot read the lesson file missing.json" in e.text("en")


@pytest.mark.parametrize("mutate", [m for m, _ in SCHEMA_CASES])
def test_schema_messages_in_chinese(mutate):
    data = copy.deepcopy(GOOD)
    mutate(data)
    e = error(lambda: lessons.loads(json.dumps(data)))
    assert chinese_only(e.text("zh")), e.text("zh")


# ---- bilingual options ---------------------------------------------------------------------------------------------
YES, NO = {"zh": "能", "en": "yes"}, {"zh": "不能", "en": "no"}


def with_question(**q):
    data = copy.deepcopy(GOOD)
    data["steps"][0]["question"].update(q)
    return data


def test_an_option_may_be_bilingual_or_plain():
    lesson = lessons.loads(json.dumps(with_question(options=[YES, NO, "896"], answer=NO)))
    q = lesson.steps[0].question
    assert q.options_in("zh") == ["能", "不能", "896"] and q.options_in("en") == ["yes", "no", "896"]
    assert (q.answer_in("zh"), q.answer_in("en")) == ("不能", "no")
    assert lessons.loads(lessons.to_json(lesson)) == lesson                     # round trip, both forms
    written = json.loads(lessons.to_json(lesson))["steps"][0]["question"]
    assert written["options"] == [YES, NO, "896"] and written["answer"] == NO
    for plain in ("no", "不能"):             # a plain answer names a bilingual option by either language's text
        q = lessons.loads(json.dumps(with_question(options=[YES, NO], answer=plain))).steps[0].question
        assert q.answer == NO


def test_plain_options_still_load():
    q = lessons.loads(json.dumps(GOOD)).steps[0].question
    assert q.options_in("zh") == q.options_in("en") == ["a", "b"] and q.answer_in("zh") == "a"


@pytest.mark.parametrize("q,words", [
    (dict(options=[{"zh": "能"}, NO], answer=NO), "steps[0].question.options[0] is missing 'en'"),
    (dict(options=[{"zh": "能", "en": "yes", "fr": "oui"}, NO], answer=NO), "options[0] has unknown key(s) 'fr'"),
    (dict(options=[{"zh": "能", "en": 1}, NO], answer=NO), "options[0].en must be text, not a number"),
    (dict(options=[{"zh": "能", "en": " "}, NO], answer=NO), "options[0].en is empty"),
    (dict(options=[{"zh": "能", "en": "y" * 201}, NO], answer=NO), "options[0].en is 201 characters"),
    (dict(options=[YES, {"zh": "能", "en": "no"}], answer=YES), "the same option twice"),
    (dict(options=[YES, NO], answer={"zh": "能", "en": "no"}), "is not one of its options"),
    (dict(options=[YES, NO], answer="maybe"), "answer 'maybe' is not one of its options"),
    (dict(options=[YES, NO], answer=["no"]), "answer must be text, not a list"),
])
def test_bad_bilingual_options(q, words):
    e = error(lambda: lessons.loads(json.dumps(with_question(**q))))
    assert words in str(e), str(e)
    assert chinese_only(e.text("zh")), e.text("zh")


def test_the_shipped_lessons_ask_in_both_languages():
    """Issue: first-lesson showed "integer ids" on a Chinese page. A word option has its Chinese; only numbers and
    symbols (the same in both) stay plain, and so do the model's own tokens where the LM head step asks which token
    comes next (a token is what the model writes, in any language: tests/unit/test_lesson_steps.py checks them
    against the model)."""
    for path in lessons.shipped().values():
        for step in lessons.load(path).steps:
            if step.question and step.page != "lm_head":
                for o in step.question.options:
                    assert o["zh"] != o["en"] or not re.search(r"[A-Za-z]{2,}", o["en"]), (path.name, o)


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
