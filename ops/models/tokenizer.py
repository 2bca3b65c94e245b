"""Tokenizer: a thin wrapper around a Hugging Face `tokenizers.Tokenizer` (byte-level BPE).

What the app needs beyond ids: readable pieces per token (byte-level spellings mapped back to
bytes), the BPE merge steps of one word, the special tokens, and the ChatML chat format.

Pieces: a token's bytes are decoded as UTF-8. A token holding only part of a multi-byte
character (common in Chinese: "你" is 3 bytes and can be split over tokens) shows the bytes it
cannot decode as hex, e.g. "<0xE4 0xBD>", and is marked partial=True in piece_info().
"""
from __future__ import annotations

import json
import re
from functools import cached_property, lru_cache

from tokenizers import AddedToken, Regex, Tokenizer as _HFTokenizer, decoders, normalizers, pre_tokenizers
from tokenizers.models import BPE

DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."

# Qwen2's pre-tokenizer regex (transformers' tokenization_qwen2.py); digits are split one by one
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
               r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# tokenizer.ggml.pre -> split regex; names as llama.cpp's converter writes them
SPLIT_BY_PRE = {"qwen2": QWEN2_SPLIT, "deepseek-r1-qwen": QWEN2_SPLIT,
                "llama3": LLAMA3_SPLIT, "llama-v3": LLAMA3_SPLIT, "llama-bpe": LLAMA3_SPLIT,
                "smaug-bpe": LLAMA3_SPLIT, "dbrx": LLAMA3_SPLIT}
# pre-tokenizers that are GPT-2's regex with digits split first (llama.cpp's SMOLLM, STARCODER, ...)
DIGITS_THEN_GPT2 = ("smollm", "starcoder", "refact", "codeshell", "minerva", "exaone", "command-r")

TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED = 1, 3, 4   # GGUF tokenizer.ggml.token_type values


@lru_cache(maxsize=1)
def byte_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table: how byte-level BPE spells raw bytes."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


@lru_cache(maxsize=1)
def unicode_to_byte() -> dict[str, int]:
    return {c: b for b, c in byte_to_unicode().items()}


def raw_to_bytes(raw: str) -> bytes:
    """A byte-level vocab spelling ('Ġsh', 'ä½ł') back to the bytes it stands for."""
    table = unicode_to_byte()
    return b"".join(bytes([table[c]]) if c in table else c.encode("utf-8") for c in raw)


def bytes_to_raw(b: bytes) -> str:
    table = byte_to_unicode()
    return "".join(table[x] for x in b)


def readable(b: bytes) -> tuple[str, bool]:
    """Decode bytes as UTF-8; bytes that are not a whole character become '<0xE4 0xBD>'.

    Returns (text, partial) where partial says whether any byte could not be decoded."""
    try:
        return b.decode("utf-8"), False
    except UnicodeDecodeError:
        pass
    out, bad, i = [], [], 0
    while i < len(b):
        for n in (1, 2, 3, 4):
            try:
                ch = b[i:i + n].decode("utf-8")
                break
            except UnicodeDecodeError:
                ch = None
        if ch is None:
            bad.append(f"0x{b[i]:02X}")
            i += 1
            continue
        if bad:
            out.append("<" + " ".join(bad) + ">")
            bad = []
        out.append(ch)
        i += n
    if bad:
        out.append("<" + " ".join(bad) + ">")
    return "".join(out), True


def _default_system_from_template(template: str | None) -> str | None:
    """The system prompt a ChatML template inserts when the user gives none (Qwen, SmolLM2)."""
    if not template:
        return None
    m = re.search(r"<\|im_start\|>system(?:\\n|\n)([^'\"{}<]+)<\|im_end\|>", template)
    if m:
        return m.group(1)
    m = re.search(r"\{\{-?\s*'(You are [^']+)'\s*-?\}\}", template)
    return m.group(1) if m else None


MODEL_DEFAULT = "__model_default__"   # system= this: the model's own default system prompt


class Tokenizer:
    """Byte-level BPE tokenizer: encode/decode, readable pieces, BPE merge steps, ChatML."""

    def __init__(self, backend: _HFTokenizer, chat_template: str | None = None,
                 eos_token_ids=None, pad_token_id: int | None = None, bos_token_id: int | None = None):
        self.backend = backend
        self.chat_template = chat_template
        specials = self.special_tokens
        if eos_token_ids is None:
            eos_token_ids = [specials[t] for t in ("<|im_end|>", "<|endoftext|>") if t in specials]
        elif isinstance(eos_token_ids, int):
            eos_token_ids = [eos_token_ids]
        self.eos_token_ids = tuple(dict.fromkeys(int(i) for i in eos_token_ids))
        if pad_token_id is None:
            pad_token_id = specials.get("<|endoftext|>", self.eos_token_ids[0] if self.eos_token_ids else None)
        self.pad_token_id = pad_token_id
        self.bos_token_id = bos_token_id
        self.default_system = _default_system_from_template(chat_template) or DEFAULT_SYSTEM

    # ---- constructors ---------------------------------------------------
    @classmethod
    def from_file(cls, tokenizer_json_path, chat_template=None, eos_token_ids=None, **kw) -> "Tokenizer":
        """Load a tokenizer.json (a Hugging Face folder's, or our cache's)."""
        return cls(_HFTokenizer.from_file(str(tokenizer_json_path)), chat_template, eos_token_ids, **kw)

    @classmethod
    def from_gguf_fields(cls, tokens: list[str], merges: list[str], token_types: list[int] | None = None,
                         pre: str = "qwen2", eos_token_id: int | None = None, bos_token_id: int | None = None,
                         pad_token_id: int | None = None, chat_template: str | None = None) -> "Tokenizer":
        """Build the byte-level BPE a GGUF file describes (tokenizer.ggml.* metadata).

        Normal tokens form the BPE vocabulary; control tokens (type 3) become special tokens and
        user-defined ones (type 4, e.g. <tool_call>) added tokens, both matched whole in text.
        Unused entries (type 5, Qwen's 271 '[PADn]' rows) are left out: the tokenizer never
        produces them, and leaving them out gives the real tokenizer's 151,665 tokens."""
        types = list(token_types) if token_types is not None else [TOKEN_NORMAL] * len(tokens)
        keep = (TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED)
        vocab = {t: i for i, (t, ty) in enumerate(zip(tokens, types)) if ty in keep}
        pairs = [tuple(m.split(" ", 1)) for m in merges]
        backend = _HFTokenizer(BPE(vocab=vocab, merges=pairs, dropout=None, continuing_subword_prefix="",
                                   end_of_word_suffix="", fuse_unk=False))
        backend.decoder = decoders.ByteLevel()
        if pre in DIGITS_THEN_GPT2:
            backend.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Digits(individual_digits=True),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
        elif pre in SPLIT_BY_PRE:
            backend.normalizer = normalizers.NFC()   # the real Qwen2 tokenizer.json normalises to NFC
            backend.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(SPLIT_BY_PRE[pre]), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        else:  # plain GPT-2 regex (transformers' default for an unknown pre name)
            backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        # added in id order so each keeps its id from the file
        added = sorted((i, t, ty) for t, i in vocab.items() for ty in [types[i]] if ty != TOKEN_NORMAL)
        for i, t, ty in added:
            if ty == TOKEN_CONTROL:
                backend.add_special_tokens([AddedToken(t, normalized=False, special=True)])
            else:
                backend.add_tokens([AddedToken(t, normalized=False, special=False)])
        if eos_token_id is not None:
            eos = [eos_token_id] + [vocab[t] for t in ("<|im_end|>", "<|endoftext|>")
                                    if t in vocab and types[vocab[t]] == TOKEN_CONTROL]
        else:
            eos = None
        return cls(backend, chat_template, eos, pad_token_id=pad_token_id, bos_token_id=bos_token_id)

    def to_json_file(self, path) -> None:
        """Write the tokenizer.json (what from_file reads back)."""
        self.backend.save(str(path))

    # ---- encode / decode ------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids of raw text; special tokens written in the text are matched whole. No BOS."""
        return self.backend.encode(text, add_special_tokens=False).ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return self.backend.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)

    @property
    def vocab_size(self) -> int:
        """How many different tokens this tokenizer can produce (BPE + added/special)."""
        return self.backend.get_vocab_size(with_added_tokens=True)

    @cached_property
    def special_tokens(self) -> dict[str, int]:
        """Special (control) tokens: content -> id."""
        return {t.content: i for i, t in sorted(self.backend.get_added_tokens_decoder().items()) if t.special}

    @cached_property
    def added_tokens(self) -> dict[str, int]:
        """All added tokens, special or not (e.g. <tool_call>): content -> id."""
        return {t.content: i for i, t in sorted(self.backend.get_added_tokens_decoder().items())}

    def id_to_raw(self, i: int) -> str:
        """The vocabulary spelling of one id ('Ġlike')."""
        return self.backend.id_to_token(int(i))

    # ---- readable pieces ------------------------------------------------
    def piece_info(self, ids) -> list[dict]:
        """Per token: id, piece (readable text), raw (vocab spelling), bytes, partial, special."""
        added = {i for i in self.added_tokens.values()}
        specials = set(self.special_tokens.values())
        out = []
        for i in ids:
            i = int(i)
            raw = self.id_to_raw(i)
            if raw is None:
                raw = ""
            if i in added:  # added tokens are stored as their text, not byte-level spelled
                b = raw.encode("utf-8")
                piece, partial = raw, False
            else:
                b = raw_to_bytes(raw)
                piece, partial = readable(b)
            out.append(dict(id=i, piece=piece, raw=raw, bytes=b, partial=partial, special=i in specials))
        return out

    def pieces(self, ids) -> list[str]:
        """Readable text per token; partial UTF-8 characters shown as '<0xE4 0xBD>'."""
        return [p["piece"] for p in self.piece_info(ids)]

    # ---- BPE ------------------------------------------------------------
    @cached_property
    def merges(self) -> dict[tuple[str, str], int]:
        """Merge rank lookup: (left, right) -> rank (0 merges first)."""
        model = json.loads(self.backend.to_str())["model"]
        pairs = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges", [])]
        return {p: r for r, p in enumerate(pairs)}

    def merge_rank(self, left: str, right: str) -> int | None:
        return self.merges.get((left, right))

    def pre_tokenize(self, text: str) -> list[str]:
        """The pre-tokens (byte-level spelled) that BPE then works on one by one."""
        if self.backend.normalizer is not None:
            text = self.backend.normalizer.normalize_str(text)
        return [p for p, _ in self.backend.pre_tokenizer.pre_tokenize_str(text)]

    def bpe_merges(self, word: str) -> list[list[str]]:
        """The BPE merge steps of one pre-token, from single bytes to the final tokens.

        `word` is plain text (e.g. "unbelievable", " shanghai", "你好"); each step applies the
        lowest-ranked merge among adjacent pairs (all its occurrences), as GPT-2's BPE does.
        Returns successive segmentations, spelled in the byte-level alphabet ('Ġ' is a space)."""
        parts = list(bytes_to_raw(word.encode("utf-8")))
        steps = [parts[:]]
        ranks = self.merges
        while len(parts) > 1:
            cand = [(ranks[p], p) for p in zip(parts, parts[1:]) if p in ranks]
            if not cand:
                break
            _, best = min(cand)
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                    merged.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
            steps.append(parts[:])
        return steps

    # ---- chat -----------------------------------------------------------
    def apply_chat_template(self, user: str, system: str | None = MODEL_DEFAULT) -> str:
        """ChatML prompt for one user turn, ending with the assistant header.

        system: the model's default system prompt when not given (Qwen: DEFAULT_SYSTEM);
        None leaves the system turn out."""
        if system == MODEL_DEFAULT:
            system = self.default_system
        head = f"<|im_start|>system\n{system}<|im_end|>\n" if system is not None else ""
        return head + f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"

    def chat_overhead(self, system: str | None = MODEL_DEFAULT) -> int:
        """Tokens the chat template adds around a user message (what a token limit must leave room for)."""
        return len(self.encode(self.apply_chat_template("", system=system)))

    def __repr__(self):
        return f"Tokenizer(vocab_size={self.vocab_size}, eos={self.eos_token_ids})"

