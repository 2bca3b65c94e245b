"""Trace: the named intermediate tensors of one forward pass, in pipeline order.

Names follow the trace contract, CONTRACT below (tokens.ids, embed.out, layers.{i}.attn.probs, ...).
Pages use the accessors below rather than building key strings themselves.
"""
from __future__ import annotations

import fnmatch
import itertools
from dataclasses import dataclass, field
from typing import Callable

import torch

from .config import ModelConfig
from .store import STORE

# ---- the trace contract: every name a forward pass records, in pipeline order -----------------------
# name -> (dims, meaning). Dims use the legend of ops/engine/functional.py; "{i}" is the layer index. Layer names
# under "mlp." exist on dense layers, those under "moe." on MoE layers (mlp.out on both).
CONTRACT = {
    "tokens.ids": ("B S", "token ids, right-padded with the pad id"),
    "embed.out": ("B S H", "the embedding rows the ids pick"),
    "rope.inv_freq_base": ("hp", "RoPE's unscaled frequencies theta^(-2j/hd), one per dimension pair"),
    "rope.inv_freq": ("hp", "the frequencies this pass rotated by, after the config's RoPE scaling"),
    "layers.{i}.attn_norm.out": ("B S H", "input_layernorm"),
    "layers.{i}.attn.q": ("B nh S hd", "after q_proj (+bias), before RoPE"),
    "layers.{i}.attn.k": ("B nkv S hd", "after k_proj (+bias), before RoPE"),
    "layers.{i}.attn.v": ("B nkv S hd", "after v_proj (+bias)"),
    "layers.{i}.attn.q_rope": ("B nh S hd", "q rotated by position"),
    "layers.{i}.attn.k_rope": ("B nkv S hd", "k rotated by position"),
    "layers.{i}.attn.scores": ("B nh S S", "q k^T / sqrt(hd) + mask, before softmax"),
    "layers.{i}.attn.probs": ("B nh S S", "softmax of the scores: each row sums to 1"),
    "layers.{i}.attn.context": ("B S nh*hd", "probs @ v, heads concatenated"),
    "layers.{i}.attn.out": ("B S H", "after o_proj"),
    "layers.{i}.resid_mid": ("B S H", "x + attn.out"),
    "layers.{i}.mlp_norm.out": ("B S H", "post_attention_layernorm"),
    "layers.{i}.mlp.gate": ("B S I", "x W_gate^T"),
    "layers.{i}.mlp.up": ("B S I", "x W_up^T"),
    "layers.{i}.mlp.act": ("B S I", "silu(gate) * up"),
    "layers.{i}.moe.router_probs": ("B S E", "softmax over the experts"),
    "layers.{i}.moe.topk_idx": ("B S k", "the experts each token runs"),
    "layers.{i}.moe.topk_weight": ("B S k", "their weights"),
    "layers.{i}.mlp.out": ("B S H", "after down_proj (or the experts' weighted sum)"),
    "layers.{i}.resid_out": ("B S H", "resid_mid + mlp.out"),
    "final_norm.out": ("B S H", "the final RMSNorm"),
    "logits": ("B S V", "one score per vocabulary row"),
}
INTEGER_NAMES = ("tokens.ids", "moe.topk_idx")      # int64 tensors; the rest are floating point
UNBATCHED = ("rope.inv_freq_base", "rope.inv_freq")  # one per pass, no batch dimension (hp = hd/2 pairs)


def dims(config: ModelConfig, B: int, S: int) -> dict[str, int]:
    """The legend's letters with their values for this config and batch."""
    c = config
    return dict(B=B, S=S, H=c.hidden_size, nh=c.num_attention_heads, nkv=c.num_key_value_heads, hd=c.head_dim,
                hp=c.head_dim // 2,
                I=c.intermediate_size, V=c.vocab_size, E=c.num_experts or 0, k=c.num_experts_per_tok or 0)


def shape_of(pattern: str, config: ModelConfig, B: int, S: int) -> tuple[int, ...]:
    """The contract's shape of a name ("layers.3.attn.q" or "layers.{i}.attn.q"), e.g. (B, nh, S, hd)."""
    d = dims(config, B, S)
    spec = CONTRACT[_pattern(pattern)][0]
    return tuple(eval_dim(part, d) for part in spec.split())


def eval_dim(part: str, d: dict) -> int:
    """"nh*hd" -> d["nh"] * d["hd"]."""
    out = 1
    for letter in part.split("*"):
        out *= d[letter]
    return out


def seq_axes(name: str) -> tuple[int, ...] | None:
    """The axes of a trace tensor that run over the positions (S in the contract's dims): (1,) for "embed.out",
    (2, 3) for an attention map; None for a name in UNBATCHED (one per pass, no batch axis)."""
    if name in UNBATCHED:
        return None
    return tuple(k for k, part in enumerate(CONTRACT[_pattern(name)][0].split()) if part == "S")


def _pattern(name: str) -> str:
    parts = name.split(".", 2)
    return f"layers.{{i}}.{parts[2]}" if parts[0] == "layers" and len(parts) == 3 else name


def contract_names(config: ModelConfig) -> list[str]:
    """Every name a full trace of this config records, in pipeline order (the golden list)."""
    out = []
    for pattern in CONTRACT:
        if not pattern.startswith("layers."):
            out.append(pattern)
            continue
        if pattern == "layers.{i}.attn_norm.out":       # the layers block, all of it, once
            for i in range(config.num_hidden_layers):
                moe = config.is_moe_layer(i)
                for p in CONTRACT:
                    part = p[len("layers.{i}."):]
                    if p.startswith("layers.") and not ((moe and part.startswith("mlp.") and part != "mlp.out")
                                                        or (not moe and part.startswith("moe."))):
                        out.append(f"layers.{i}.{part}")
    return out


def contract_shapes(config: ModelConfig, B: int, S: int) -> dict[str, tuple[tuple[int, ...], int]]:
    """name -> (shape, bytes per element) for a float32 trace of a (B, S) batch."""
    return {n: (shape_of(n, config, B, S), 8 if n.endswith(INTEGER_NAMES) else 4) for n in contract_names(config)}


# Tensors one operator away from other trace tensors: part -> the parts its operator reads (same layer).
# A trace holds these as recipes (Derived) and reruns the operator when a page asks for one (pages read one
# layer at a time), so a long trace keeps about a third of the bytes. The S x S attention maps and the MLP's
# S x I tensors are the big ones; the rest are S x H and cost more to recompute than to keep.
RECOMPUTED = {"attn.scores": ("attn.q_rope", "attn.k_rope"),      # q k^T / sqrt(hd) + mask
              "attn.probs": ("attn.scores",),                       # softmax(scores)
              "mlp.gate": ("mlp_norm.out",),                        # h W_gate^T
              "mlp.up": ("mlp_norm.out",),                          # h W_up^T
              "mlp.act": ("mlp.gate", "mlp.up")}                    # silu(gate) * up
# recomputed tensors, like the pages' memos (Trace.memo), live in the one store (ops.engine.store.STORE), under
# the trace's uid: bounded in bytes with everything else computed from a prompt, shared by every session

_UIDS = itertools.count()


def recipe_inputs(name: str) -> tuple[str, ...]:
    """"layers.3.mlp.act" -> ("layers.3.mlp.gate", "layers.3.mlp.up"); () for a name not in RECOMPUTED."""
    head, layer, part = (name.split(".", 2) + ["", ""])[:3]
    if head != "layers" or part not in RECOMPUTED:
        return ()
    return tuple(f"layers.{layer}.{p}" for p in RECOMPUTED[part])


@dataclass(frozen=True)
class Derived:
    """A recipe standing in for a trace tensor: fn(*tensors named in inputs) gives it back."""
    fn: Callable
    inputs: tuple
    shape: tuple
    dtype: torch.dtype

    @property
    def nbytes(self) -> int:
        return torch.Size(self.shape).numel() * torch.empty((), dtype=self.dtype).element_size()


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
    tensors: dict = field(default_factory=dict)   # name -> tensor or Derived, insertion order = pipeline order
    edits: tuple = ()                  # the names this run was edited at (ops/lab/edits.py), in pipeline order
    # its name in the store (ops.engine.store): what is computed from it is kept there under ("memo", uid, ...);
    # a changed copy (dataclasses.replace) gets a new uid, so it starts with nothing kept
    uid: int = field(default_factory=lambda: next(_UIDS), init=False, repr=False, compare=False)

    # ---- the dict-like surface ------------------------------------------
    def __getitem__(self, name: str) -> torch.Tensor:
        try:
            t = self.tensors[name]
        except KeyError:
            raise KeyError(f"'{name}' is not in this trace (captured: {len(self.tensors)} tensors)") from None
        return self._recompute(name, t) if isinstance(t, Derived) else t

    def _recompute(self, name: str, d: Derived) -> torch.Tensor:
        return STORE.get(("recomputed", self.uid, name), lambda: d.fn(*(self[n] for n in d.inputs)))

    def memo(self, key: tuple, compute: Callable):
        """compute() once per key for this trace, kept in the one store (ops.engine.store.STORE) with every
        session's other prompt data, least recently used dropped first. The key is a tuple that starts with the
        analysis' name (("logit_lens", b), a page's (page, language, ...)) and holds everything else the result
        depends on: an analysis of a trace (the lens, a page's checks, views and figures) is a pure function of it
        and the key, and sessions share a trace (ui.state.shared_trace), so a page visited again, by anyone, is not
        computed again; two sessions asking at once compute it once. A value is never changed once stored."""
        return STORE.get(("memo", self.uid) + tuple(key), compute)

    def memos(self) -> dict:
        """key -> value of what the store holds from this trace's memo (a test, a bench reads it)."""
        return {k[2:]: STORE.peek(k) for k in STORE.keys(("memo", self.uid))}

    def is_recomputed(self, name: str) -> bool:
        """True when the trace holds a recipe for `name` rather than the tensor itself."""
        return isinstance(self.tensors.get(name), Derived)

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def names(self) -> list[str]:
        return list(self.tensors)

    def shapes(self) -> dict[str, tuple]:
        return {n: tuple(t.shape) for n, t in self.tensors.items()}

    @property
    def nbytes(self) -> int:
        """Bytes the trace holds (recipes hold none)."""
        return sum(t.numel() * t.element_size() for t in self.tensors.values() if not isinstance(t, Derived))

    @property
    def full_nbytes(self) -> int:
        """Bytes it would hold with every tensor kept."""
        return sum(t.nbytes if isinstance(t, Derived) else t.numel() * t.element_size() for t in self.tensors.values())

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
        return self[self.layer_input_name(i)]

    @staticmethod
    def layer_input_name(i: int) -> str:
        """The trace's name of what layer i reads: "embed.out" for layer 0, else "layers.{i-1}.resid_out"."""
        return "embed.out" if i == 0 else f"layers.{i - 1}.resid_out"

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
