"""The curated prompts (content/prompts.py): in the bundled Qwen2.5 tokenizer the word each lesson asks about is
a token of its own, the pronoun is the last token, and the repeated name appears twice."""
from __future__ import annotations

import pytest

from content.prompts import CURATED, get


@pytest.fixture(scope="module")
def tok():
    from tokenizers import Tokenizer

    from ops.models import bundled as loading

    path = loading.bundled_dir() / "tokenizer.json"
    if not path.exists():
        pytest.skip("the bundled tokenizer.json is not prepared")
    return Tokenizer.from_file(str(path))


def pieces(tok, text):
    return [tok.decode([i]) for i in tok.encode(text).ids]


@pytest.mark.real
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_word_asked_about_is_its_own_token(tok, lang):
    for c in CURATED:
        assert c.focus(lang) in pieces(tok, c.prompt(lang)), (c.key, pieces(tok, c.prompt(lang)))
    assert pieces(tok, get("pronoun").prompt(lang))[-1] == get("pronoun").focus(lang)    # the pronoun's own row
    assert pieces(tok, get("induction").prompt(lang)).count(get("induction").focus(lang)) == 2


@pytest.mark.real
def test_known_tokenizations(tok):
    # hand-checked against the tokenizer: 哥哥 / 把 / 苹果 / 给了 / 妹妹 / ， / 她 ; France and Paris one token each
    assert pieces(tok, "哥哥把苹果给了妹妹，她") == ["哥哥", "把", "苹果", "给了", "妹妹", "，", "她"]
    assert pieces(tok, "The capital of France is Paris")[-3:] == [" France", " is", " Paris"]
