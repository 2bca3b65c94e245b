"""Trace: the named intermediate tensors of one forward pass, in pipeline order.

Names follow the trace contract in DESIGN.md (tokens.ids, embed.out, layers.{i}.attn.probs, ...).
Pages use the accessors below rather than building key strings themselves.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

import torch

from .config import ModelConfig


def capture_filter(capture):
    """None -> keep everything; a list of glob patterns ("layers.0.*", "logits") -> keep matches;
    a callable name -> bool is used as is."""
    if capture is None:
        return lambda name: True
    if callable(capture):
        return capture
    patterns = [capture] if isinstance(capture, str) else list(capture)
    return lambda name: any(fnmatch.fnmatchcase(name, p) for p in patterns)


@dataclass
class Trace:
    config: ModelConfig
    prompts: list[str]                 # the prompts as given
    texts: list[str]                   # what was tokenised (after the chat template, if any)
    token_ids: torch.Tensor            # (B, S) right-padded with the pad id
    lengths: list[int]                 # real tokens per row
    tensors: dict = field(default_factory=dict)   # name -> tensor, insertion order = pipeline order

    # ---- the dict-like surface ------------------------------------------
    def __getitem__(self, name: str) -> torch.Tensor:
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"'{name}' is not in this trace (captured: {len(self.tensors)} tensors)") from None

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def names(self) -> list[str]:
        return list(self.tensors)

    def shapes(self) -> dict[str, tuple]:
        return {n: tuple(t.shape) for n, t in self.tensors.items()}

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.tensors.values())

    # ---- sizes ------------------------------------------------------------
    @property
    def B(self) -> int:
        return self.token_ids.shape[0]

    @property
    def S(self) -> int:
        return self.token_ids.shape[1]

    @property
    def attention_mask(self) -> torch.Tensor:
        """(B, S) bool: True for real tokens, False for padding."""
        return torch.arange(self.S)[None, :] < torch.tensor(self.lengths)[:, None]

    # ---- named accessors --------------------------------------------------
    @property
    def logits(self) -> torch.Tensor:
        return self["logits"]

    @property
    def embeddings(self) -> torch.Tensor:
        return self["embed.out"]

    def layer(self, i: int, part: str) -> torch.Tensor:
        """A per-layer tensor, e.g. trace.layer(3, "attn.probs")."""
        return self[f"layers.{i}.{part}"]

    def layer_input(self, i: int) -> torch.Tensor:
        """What layer i reads: the embedding for layer 0, else the previous layer's resid_out."""
        return self["embed.out"] if i == 0 else self.layer(i - 1, "resid_out")

    def attention_probs(self, i: int) -> torch.Tensor:
        return self.layer(i, "attn.probs")

    def attention_scores(self, i: int) -> torch.Tensor:
        return self.layer(i, "attn.scores")

    def residual_stream(self) -> list[torch.Tensor]:
        """embed.out then every layer's resid_out: the L + 1 states of the residual stream."""
        return [self["embed.out"]] + [self.layer(i, "resid_out") for i in range(self.config.num_hidden_layers)
                                      if f"layers.{i}.resid_out" in self]

    def final_hidden(self) -> torch.Tensor:
        return self["final_norm.out"]

    def has_moe(self, i: int) -> bool:
        return f"layers.{i}.moe.router_probs" in self
