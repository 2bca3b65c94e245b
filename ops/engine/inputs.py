"""What a user may type, and how much a run may cost: prompt sanitising, limits, trace-size estimates.

Prompt text policy (sanitize: Model.encode_prompts applies it, and the app once per prompt text in ui.session.prompt;
what it changed is reported to the user):
  - lone surrogates (U+D800..U+DFFF; a Python str can carry them from JSON or a URL, UTF-8 cannot)
    become U+FFFD (the replacement character)
  - "\\r\\n" and "\\r" become "\\n"; "\\n" and "\\t" are kept
  - every other C0 control (U+0000..U+001F, NUL included), DEL (U+007F) and C1 control (U+0080..U+009F)
    is removed: they are invisible on screen, so a token made of them would surprise a learner
  - everything else is kept as typed: right-to-left text, bidi marks, zero-width joiners (emoji ZWJ
    sequences), combining marks. The tokenizer then normalises to NFC, as Qwen's does.
Limits: a Limits, handed in once by the app (ops.configure; settings.py reads them from the environment), the
defaults below otherwise. This module never reads the environment.
This module never imports streamlit.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import InputError, PromptTooLong
from ..models.tokenizer import MODEL_DEFAULT
from .trace import capture_filter, contract_shapes, recipe_inputs

MAX_BATCH = 8                  # prompts per batch, everywhere
MAX_CHARS = 100_000            # characters per prompt before tokenising (a bound a prompt tokenises well within)
DEFAULT_MAX_TOKENS = 2048


# ---- limits -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Limits:
    max_tokens: int = DEFAULT_MAX_TOKENS        # longest prompt in tokens (never past the model's context)
    max_new_tokens: int = DEFAULT_MAX_TOKENS    # most tokens one generation may make
    max_batch: int = MAX_BATCH                  # prompt lines per batch (never past MAX_BATCH)


LIMITS = Limits()


def set_limits(limits: Limits) -> None:
    """The limits every later call applies (ops.configure)."""
    global LIMITS
    LIMITS = limits


def token_limit(config=None) -> int:
    """Longest prompt in tokens: the server's limit, never past the context."""
    limit = LIMITS.max_tokens
    if config is not None:
        limit = min(limit, config.context_length)
    return max(1, limit)


def max_new_tokens_limit(config=None) -> int:
    """Most tokens one generation may produce: the token limit, and the generation limit."""
    return max(1, min(token_limit(config), LIMITS.max_new_tokens))


def batch_limit() -> int:
    return max(1, min(MAX_BATCH, LIMITS.max_batch))


# ---- sanitising -------------------------------------------------------------------------------
SURROGATE = re.compile("[\ud800-\udfff]")     # lone surrogates: a Python str may hold them, UTF-8 cannot
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")   # C0 but \t \n, DEL, C1 (\r handled first)


@dataclass
class Sanitized:
    text: str
    surrogates: int = 0          # lone surrogates replaced by U+FFFD
    controls: int = 0            # control characters removed
    control_names: tuple = ()    # e.g. ("U+0000", "U+001B")

    @property
    def changed(self) -> bool:
        return bool(self.surrogates or self.controls)

    @property
    def lines(self) -> tuple[str, ...]:
        """A prompt box's text -> one prompt per non-blank line."""
        return tuple(line for line in self.text.split("\n") if line.strip())

    def message(self, lang: str = "en") -> str:
        """What was changed, in words ('' when nothing was)."""
        parts = []
        if self.surrogates:
            parts.append(f"{self.surrogates} 个孤立代理字符（无法编码为 UTF-8）已替换为 U+FFFD �" if lang == "zh" else
                         f"{self.surrogates} lone surrogate(s) (not encodable as UTF-8) replaced by U+FFFD �")
        if self.controls:
            names = ", ".join(self.control_names[:6]) + (" ..." if len(self.control_names) > 6 else "")
            parts.append(f"{self.controls} 个不可见控制字符已删除（{names}；保留换行和制表符）" if lang == "zh" else
                         f"{self.controls} invisible control character(s) removed "
                         f"({names}; newlines and tabs are kept)")
        return ("；" if lang == "zh" else "; ").join(parts)


def sanitize(text: str) -> Sanitized:
    """Apply the prompt text policy above; report what changed."""
    if not isinstance(text, str):
        raise InputError(f"a prompt must be text, got {type(text).__name__}")
    surrogates = len(SURROGATE.findall(text))
    if surrogates:
        text = replace_surrogates(text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found = _CONTROL.findall(text)
    if found:
        text = _CONTROL.sub("", text)
    names = tuple(dict.fromkeys(f"U+{ord(c):04X}" for c in found))
    return Sanitized(text, surrogates, len(found), names)


def replace_surrogates(text: str) -> str:
    """Only the first rule of the policy: lone surrogates -> U+FFFD (what a text box may hold as typed)."""
    return SURROGATE.sub("\ufffd", text)


def truncate_text(tokenizer, text: str, n: int) -> str:
    """The longest prefix of `text` that is at most n tokens, cut on a whole character."""
    text = text[:MAX_CHARS]
    ids = tokenizer.encode(text)
    if len(ids) <= n:
        return text
    keep = ids[:max(n, 0)]
    while keep:
        out = tokenizer.decode(keep)
        # a cut inside a multi-byte character decodes to U+FFFD: step back to a whole character
        if not out.endswith("\ufffd") and len(tokenizer.encode(out)) <= n:
            return out
        keep = keep[:-1]
    return ""


# ---- prompts -> ids --------------------------------------------------------------------------
def encode_prompts(tokenizer, config, prompts, chat: bool = False, system: str | None = MODEL_DEFAULT,
                   truncate: bool = False, warn=None, sanitized: bool = False):
    """Sanitise (the policy above), validate and tokenise; returns (prompts, texts, ids per row).

    Over the token limit: PromptTooLong, or with truncate=True each prompt is cut to the first tokens
    that fit. warn(message) is called for every change made to a prompt (default: warnings.warn).
    sanitized: the caller has applied sanitize already (the app, which reports it itself): not again."""
    import warnings
    warn = warn or (lambda m: warnings.warn(m, UserWarning, stacklevel=4))
    if isinstance(prompts, str):
        prompts = [prompts]
    prompts = list(prompts)
    if not prompts:
        raise InputError("no prompt given: type at least one line of text")
    batch = batch_limit()
    if len(prompts) > batch:
        raise InputError(f"{len(prompts)} prompts given; a batch holds at most {batch}")
    limit = token_limit(config)
    overhead = tokenizer.chat_overhead(system) if chat else 0
    texts, rows, clean = [], [], []
    for j, prompt in enumerate(prompts):
        if not isinstance(prompt, str) or not prompt.strip():
            raise InputError(f"prompt {j + 1} is empty: type some text")
        if not sanitized:
            san = sanitize(prompt)
            if san.changed:
                warn(f"prompt {j + 1}: " + san.message())
            prompt = san.text
        if not prompt.strip():
            raise InputError(f"prompt {j + 1} is empty after removing control characters: type some text")
        if len(prompt) > MAX_CHARS and not truncate:
            raise PromptTooLong(f"prompt {j + 1} is {len(prompt):,} characters; at most {MAX_CHARS:,} are "
                                f"read. Shorten it, or truncate to the first {limit} tokens.", j, -1, limit)
        text = tokenizer.apply_chat_template(prompt, system=system) if chat else prompt
        ids = tokenizer.encode(text) if len(prompt) <= MAX_CHARS else None
        if ids is None or len(ids) > limit:
            if not truncate:
                raise PromptTooLong(f"prompt {j + 1} is {len(ids)} tokens; this server's limit is {limit} tokens "
                                    f"(OPERATOR_LAB_MAX_TOKENS). Shorten it, or truncate to the first {limit} "
                                    "tokens (truncate=True).", j, len(ids), limit)
            if limit - overhead < 1:
                raise InputError(f"the chat template alone is {overhead} tokens, over the limit of {limit}")
            prompt = truncate_text(tokenizer, prompt, limit - overhead)
            warn(f"prompt {j + 1} truncated to its first {limit - overhead} tokens (the limit is {limit})")
            text = tokenizer.apply_chat_template(prompt, system=system) if chat else prompt
            ids = tokenizer.encode(text)[:limit]
        clean.append(prompt)
        texts.append(text)
        rows.append(ids)
    return clean, texts, rows


# ---- trace size -------------------------------------------------------------------------------
def estimate_trace_bytes(config, B: int, S: int, capture=None, recompute: bool = True) -> int:
    """Bytes a float32 trace of a (B, S) batch will hold, from the shapes alone (before running).
    recompute: tensors the trace will hold as recipes (trace.RECOMPUTED, inputs kept) count nothing."""
    keep = capture_filter(capture)
    total, kept = 0, set()
    for name, (shape, size) in contract_shapes(config, B, S).items():
        if not keep(name):
            continue
        kept.add(name)
        inputs = recipe_inputs(name)
        if recompute and inputs and all(n in kept for n in inputs):
            continue                                       # held as a recipe
        total += math.prod(shape) * size
    return total


def mib(n: int) -> str:
    return f"{n / 2**20:,.2f} MiB"
