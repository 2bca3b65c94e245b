"""Words as data: every text in assets/words exists in every language with the same placeholders, and every
literal key the product code asks say() / words.template() for exists (a typo fails here, not in front of a class)."""
import json
import re
from pathlib import Path

import pytest

from content import words

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("app.py", "app_pages", "ui", "content", "ops", "viz")
CALL = re.compile(r"""\b(?:say|words\.template)\(\s*["']([a-z0-9_]+\.[A-Za-z0-9_]+)["']""")


@pytest.mark.parametrize("topic", words.topics())
def test_every_language_has_every_key_with_the_same_placeholders(topic):
    cats = {lang: json.loads((words.WORDS_DIR / f"{topic}.{lang}.json").read_text("utf-8")) for lang in words.LANGS}
    zh, en = cats["zh"], cats["en"]
    assert set(zh) == set(en), f"{topic}: only zh {sorted(set(zh) - set(en))}, only en {sorted(set(en) - set(zh))}"
    for name in en:
        assert words.placeholders(zh[name]) == words.placeholders(en[name]), f"{topic}.{name}"
        assert zh[name].strip() and en[name].strip(), f"{topic}.{name} is empty"
        # say(key, lang, **fields) takes these two itself: a text that used them could never be filled
        assert not words.placeholders(en[name]) & {"key", "lang"}, f"{topic}.{name}: rename the placeholder"


def test_every_key_the_code_asks_for_exists():
    files = [ROOT / "app.py"] + [p for d in PRODUCT[1:] for p in (ROOT / d).rglob("*.py")]
    files = [p for p in files if p.name != "words.py"]   # its docstring's example is not a real key
    asked = {(p.relative_to(ROOT), k) for p in files for k in CALL.findall(p.read_text("utf-8"))}
    missing = []
    for path, key in asked:
        try:
            words.template(key, "zh"), words.template(key, "en")
        except (KeyError, FileNotFoundError):
            missing.append(f"{path}: {key}")
    assert not missing, missing


def test_say_fills_and_a_missing_key_names_itself(tmp_path, monkeypatch):
    (tmp_path / "demo.zh.json").write_text(json.dumps({"hi": "你好，{name}！{{x}}"}), "utf-8")
    (tmp_path / "demo.en.json").write_text(json.dumps({"hi": "Hello, {name}! {{x}}"}), "utf-8")
    monkeypatch.setattr(words, "WORDS_DIR", tmp_path)
    words.catalogue.cache_clear()
    try:
        assert words.say("demo.hi", "zh", name="同学") == "你好，同学！{x}"
        assert words.say("demo.hi", "en", name="Ada") == "Hello, Ada! {x}"
        with pytest.raises(KeyError, match="demo.nope"):
            words.say("demo.nope", "en")
    finally:
        words.catalogue.cache_clear()
