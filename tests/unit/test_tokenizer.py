"""Tokenizer: ids, pieces, BPE steps, chat format; parity with transformers' GGUF tokenizer."""
import unicodedata

import pytest
from conftest import tiny_tokenizer

from ops.models.tokenizer import DEFAULT_SYSTEM, Tokenizer, raw_to_bytes, readable

PARITY_TEXTS = [
    "I like shanghai",
    "Hello, world! How are you doing today?",
    "The quick brown fox jumps over the lazy dog.",
    "你好世界",
    "我喜欢上海，上海是一个美丽的城市。",
    "日本語のテキストも試す",
    "def add(a, b):\n    return a + b\n",
    "for (int i = 0; i < n; ++i) { sum += x[i]; }",
    "import torch.nn.functional as F\n\n\nclass A:\n\tpass",
    "12345",
    "3.14159 and 2,718,281 and 1e-6",
    "   leading spaces and trailing   ",
    "tabs\tand\t\tmore\ttabs",
    "line one\nline two\r\nline three\n\n\n",
    "          ",
    "\n",
    "emoji 😀🎉👍🏽 and flags 🇨🇳",
    "mixed 中文 English 123 😀 code_x = y**2",
    "don't I'LL we've they're she'd",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    "text<|endoftext|>more <tool_call>x</tool_call>",
    "Ünïcödé çàfé naïve résumé",
    "a" * 50,
    "http://example.com/path?q=1&r=2#frag",
    "",
]


def test_tiny_tokenizer_basics():
    tok = tiny_tokenizer()
    assert tok.vocab_size == 256 + 10 + 3
    ids = tok.encode("the cat<|im_end|>")
    assert ids[-1] == tok.special_tokens["<|im_end|>"]
    assert tok.decode(ids) == "the cat<|im_end|>"
    assert tok.decode(ids, skip_special_tokens=True) == "the cat"
    assert tok.eos_token_ids[0] == tok.special_tokens["<|im_end|>"]
    assert tok.apply_chat_template("hi") == \
        "<|im_start|>system\nYou are tiny.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert tok.apply_chat_template("hi", system=None) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_tiny_tokenizer_json_round_trip(tmp_path):
    tok = tiny_tokenizer()
    tok.to_json_file(tmp_path / "tokenizer.json")
    again = Tokenizer.from_file(tmp_path / "tokenizer.json")
    for text in PARITY_TEXTS:
        assert again.encode(text) == tok.encode(text)
    assert again.special_tokens == tok.special_tokens


def test_readable_marks_partial_bytes():
    assert readable("你".encode()) == ("你", False)
    assert readable(b"\xe4\xbd") == ("<0xE4 0xBD>", True)
    assert readable(b" \xe4\xbd\xa0\xe5") == (" 你<0xE5>", True)
    assert raw_to_bytes("Ġsh") == b" sh"


def test_bpe_merges_tiny():
    tok = tiny_tokenizer()
    steps = tok.bpe_merges(" the")
    assert steps[0] == ["Ġ", "t", "h", "e"]
    assert steps[-1] == ["Ġthe"]
    assert [len(s) for s in steps] == sorted((len(s) for s in steps), reverse=True)


# ---- the real Qwen2.5 tokenizer -------------------------------------------------
@pytest.mark.real
def test_i_like_shanghai(bundled_tokenizer):
    tok = bundled_tokenizer
    ids = tok.encode("I like shanghai")
    assert ids == [40, 1075, 557, 30070]
    assert tok.pieces(ids) == ["I", " like", " sh", "anghai"]


@pytest.mark.real
def test_vocab_and_specials(bundled_tokenizer):
    tok = bundled_tokenizer
    assert tok.vocab_size == 151_665
    sp = tok.special_tokens
    assert sp["<|endoftext|>"] == 151643 and sp["<|im_start|>"] == 151644 and sp["<|im_end|>"] == 151645
    assert len(sp) == 20 and len(tok.added_tokens) == 22
    assert tok.eos_token_ids == (151645, 151643)
    assert tok.pad_token_id == 151643


@pytest.mark.real
def test_chat_template_exact(bundled_tokenizer):
    tok = bundled_tokenizer
    assert tok.default_system == DEFAULT_SYSTEM
    assert tok.apply_chat_template("What is the capital of France?") == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n")
    ids = tok.encode(tok.apply_chat_template("hi"))
    assert ids[0] == 151644 and ids.count(151645) == 2


@pytest.mark.real
def test_chat_template_matches_transformers(bundled_tokenizer, hf_gguf_tokenizer):
    for system in ("You are a pirate.", None):
        msgs = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": "你好"}]
        ref = hf_gguf_tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        mine = bundled_tokenizer.apply_chat_template("你好", system=system or DEFAULT_SYSTEM)
        assert mine == ref


@pytest.mark.real
def test_parity_with_transformers(bundled_tokenizer, hf_gguf_tokenizer):
    mismatches = []
    for text in PARITY_TEXTS:
        ref = hf_gguf_tokenizer(text, add_special_tokens=False)["input_ids"]
        if bundled_tokenizer.encode(text) != ref:
            mismatches.append((text, bundled_tokenizer.encode(text), ref))
    assert not mismatches, mismatches
    assert len(PARITY_TEXTS) >= 25


@pytest.mark.real
def test_decode_round_trip(bundled_tokenizer):
    tok = bundled_tokenizer
    for text in PARITY_TEXTS + ["e\u0301 combining accent -> NFC", "Å vs A\u030a"]:
        assert tok.decode(tok.encode(text)) == unicodedata.normalize("NFC", text)


@pytest.mark.real
def test_chinese_pieces_readable(bundled_tokenizer):
    tok = bundled_tokenizer
    ids = tok.encode("你好世界")
    assert "".join(tok.pieces(ids)) == "你好世界"
    assert all(not p["partial"] for p in tok.piece_info(ids))
    # a rare character split over byte tokens: pieces show hex, bytes still add up
    ids = tok.encode("𠜎")
    info = tok.piece_info(ids)
    assert b"".join(p["bytes"] for p in info) == "𠜎".encode()
    if len(ids) > 1:
        assert any(p["partial"] and p["piece"].startswith("<0x") for p in info)


@pytest.mark.real
def test_piece_info_fields(bundled_tokenizer):
    info = bundled_tokenizer.piece_info([151644, 1075])
    assert info[0] == dict(id=151644, piece="<|im_start|>", raw="<|im_start|>", bytes=b"<|im_start|>",
                           partial=False, special=True)
    assert info[1]["raw"] == "Ġlike" and info[1]["piece"] == " like" and not info[1]["special"]


@pytest.mark.real
@pytest.mark.parametrize("word", ["unbelievable", " shanghai", "你好", " tokenization"])
def test_bpe_merges_end_at_encode(bundled_tokenizer, word):
    tok = bundled_tokenizer
    steps = tok.bpe_merges(word)
    assert "".join(steps[0]) == "".join(steps[-1])
    assert len(steps[0]) == len(word.encode())
    final_ids = [tok.backend.token_to_id(t) for t in steps[-1]]
    assert final_ids == tok.encode(word)
    for a, b in zip(steps, steps[1:]):
        assert len(b) < len(a)
    assert tok.merge_rank("Ġ", "Ġ") == 0
