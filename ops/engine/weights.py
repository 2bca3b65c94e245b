"""What a forward pass reads: HF name -> tensor, and how a projection reads its weights.

ops/engine/model.py runs the pass; a weight set decides how each projection multiplies: the model's own tensors and
the fused 16-bit copy through fn.linear (this class), int8 rows with scales through ops/fast/quant.Int8Weights.
"""
from __future__ import annotations

from collections.abc import Mapping

import torch

from . import functional as fn

FUSED = {("q", "k", "v"): "qkv", ("gate", "up"): "gate_up"}     # projections a copy may run as one product


class Weights(Mapping):
    """HF name -> tensor, read-only once built: one model serves every session and thread. How a projection
    reads its weights lives here, so a fused copy (and later int8 rows with scales) runs the same layers."""

    def __init__(self, tensors: dict, splits: dict | None = None):
        self._tensors = dict(tensors)
        self.splits = dict(splits or {})          # fused projection -> rows of each part, e.g. [q, k, v]

    def __getitem__(self, name: str) -> torch.Tensor:
        return self._tensors[name]

    def __iter__(self):
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)

    @property
    def dtype(self) -> torch.dtype:
        return self._tensors["model.embed_tokens.weight"].dtype

    def linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        """x through projection `name` ("model.layers.0.mlp.up_proj"): x W^T (+ b)."""
        return fn.linear(x, self._tensors[name + ".weight"], self._tensors.get(name + ".bias"))

    def project(self, x: torch.Tensor, prefix: str, parts: tuple) -> tuple:
        """x through prefix + "{part}_proj" for each part; one product, then split, when the copy fused them."""
        fused = prefix + FUSED[parts] + "_proj"
        if fused in self.splits:
            return self.linear(x, fused).split(self.splits[fused], dim=-1)
        return tuple(self.linear(x, f"{prefix}{p}_proj") for p in parts)
