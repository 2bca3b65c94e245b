"""The error types every layer of ops/ raises, each with the reason in words a user can act on.

They live here, apart from the modules that raise them, so any module may import any of them without
importing the others (loading.py and gguf.py both raise LoadError). Import them from here (the ops package
re-exports the user-facing ones as its API); the modules that raise them are not their homes.
"""
from __future__ import annotations


class InputError(ValueError):
    """A prompt or setting the model cannot take, explained in words."""


class PromptTooLong(InputError):
    """A prompt over the token (or character) limit; carries what a 'truncate' offer needs."""

    def __init__(self, message: str, row: int, n_tokens: int, limit: int):
        super().__init__(message)
        self.row, self.n_tokens, self.limit = row, n_tokens, limit


class TraceTooBig(InputError):
    """A trace whose estimated size is over the memory budget (refused before running)."""

    def __init__(self, message: str, needed: int, budget: int):
        super().__init__(message)
        self.needed, self.budget = needed, budget


class SamplingError(ValueError):
    """A sampling parameter out of range, with the allowed range in the message."""


class ConfigError(ValueError):
    """A config that Operator Lab cannot run, with the reason in words."""


class Refused(ConfigError):
    """A config field whose value changes the arithmetic in a way Operator Lab does not compute, refused when the
    model loads (docs/models.md lists every such field). field and value name what the config says; reason is the
    name of the app's sentence about it in both languages (assets/words/models.<lang>.json, key refused_<reason>)."""

    def __init__(self, field: str, value, reason: str):
        super().__init__(f"config field {field} = {value!r} is refused: Operator Lab does not compute it "
                         f"({reason.replace('_', ' ')}; see docs/models.md)")
        self.field, self.value, self.reason = field, value, reason


class LoadError(Exception):
    """A model source that cannot be loaded, with the file/tensor and the reason in words."""


class GGUFError(Exception):
    """A GGUF file that cannot be read or mapped (read_gguf wraps it as LoadError)."""


class Cancelled(Exception):
    """A long analysis (a sweep) stopped because its cancel() callback said so; nothing partial is returned."""
