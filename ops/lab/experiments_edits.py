"""Edit helpers: each returns a dict name -> fn(tensor) -> tensor for Model.trace(..., edits=...).

An edit is applied where the forward pass records its trace-contract name, and everything downstream
reads the returned tensor (ops/engine/recording.py). These helpers build the usual experiments from that one
mechanism: ablating heads (their slices of attn.context, the input of o_proj), zeroing a layer's
attention or MLP output, patching a tensor from another run, steering the residual stream, and running
one layer without RoPE. Merge several with combine(). None of them edits in place.
"""
from __future__ import annotations

import torch

from ..engine.trace import Trace
from ..errors import InputError


def _check_layer(config, layer: int) -> int:
    L = config.num_hidden_layers
    if not isinstance(layer, int) or not 0 <= layer < L:
        raise InputError(f"layer {layer!r} is out of range: this model has {L} layers (0 to {L - 1})")
    return layer


def _check_heads(config, heads) -> list[int]:
    nh = config.num_attention_heads
    heads = [heads] if isinstance(heads, int) else list(heads)
    if not heads:
        raise InputError("no heads chosen: pick at least one head to ablate")
    bad = [h for h in heads if not isinstance(h, int) or not 0 <= h < nh]
    if bad:
        raise InputError(f"head {bad[0]!r} is out of range: this model has {nh} heads per layer (0 to {nh - 1})")
    return heads


def combine(*edit_dicts: dict) -> dict:
    """One edits dict from several; two edits of the same name run one after the other (left first)."""
    out: dict = {}
    for d in edit_dicts:
        for name, f in d.items():
            if name in out:
                first = out[name]
                out[name] = lambda t, a=first, b=f: b(a(t))
            else:
                out[name] = f
    return out


def ablate_heads(config, layer: int, heads, mode: str = "zero", reference: Trace | None = None) -> dict:
    """Heads' slices of layers.{layer}.attn.context (what o_proj reads) set to 0 ("zero") or to their mean
    ("mean": over the reference trace's real positions and rows; without a reference, over this run's own
    positions of each row)."""
    layer, heads = _check_layer(config, layer), _check_heads(config, heads)
    if mode not in ("zero", "mean"):
        raise InputError(f"ablation mode must be 'zero' or 'mean', got {mode!r}")
    hd = config.head_dim
    name = f"layers.{layer}.attn.context"
    mean = None
    if mode == "mean" and reference is not None:
        ctx = reference[name].float()                                   # (B, S, nh*hd)
        valid = reference.attention_mask[..., None].float()             # (B, S, 1)
        mean = (ctx * valid).sum((0, 1)) / valid.sum()                  # (nh*hd,)

    def ablate(t: torch.Tensor) -> torch.Tensor:
        t = t.clone()
        fill = None if mode == "zero" else (mean.to(t) if mean is not None else t.mean(1, keepdim=True))
        for h in heads:
            s = slice(h * hd, (h + 1) * hd)
            if fill is None:
                t[..., s] = 0
            else:
                t[..., s] = fill[..., s]
        return t
    return {name: ablate}


def zero_attention(config, layer: int) -> dict:
    """layers.{layer}.attn.out := 0 (the layer's attention adds nothing to the residual stream)."""
    return {f"layers.{_check_layer(config, layer)}.attn.out": torch.zeros_like}


def zero_mlp(config, layer: int, positions=None) -> dict:
    """layers.{layer}.mlp.out := 0 (the layer's MLP, or MoE, adds nothing); at the listed positions only when
    positions is given (the others keep what the MLP wrote)."""
    name = f"layers.{_check_layer(config, layer)}.mlp.out"
    if positions is None:
        return {name: torch.zeros_like}
    keep = list(positions)

    def zero_at(t):
        out = t.clone()
        out[:, keep] = 0
        return out
    return {name: zero_at}


def patch(source: Trace, name: str, positions=None) -> dict:
    """Replace the tensor at `name` with the source trace's (at every position, or only the chosen ones).
    Source and target must have the same token length (checked when the edit runs: InputError)."""
    if name not in source:
        raise InputError(f"'{name}' is not in the source trace, so it cannot be patched from it")
    src = source[name]
    pos = None if positions is None else ([positions] if isinstance(positions, int) else list(positions))
    n = source.S
    if pos is not None:
        bad = [p for p in pos if not isinstance(p, int) or not -n <= p < n]
        if bad:
            raise InputError(f"position {bad[0]!r} is out of range: the source has {n} tokens (0 to {n - 1})")
    seq_dim = 2 if src.dim() == 4 else 1             # (B, nh, S, .) attention tensors, else (B, S, .)

    def apply(t: torch.Tensor) -> torch.Tensor:
        if t.shape[seq_dim] != src.shape[seq_dim]:
            raise InputError(f"patching needs equal token lengths: the source run has {src.shape[seq_dim]} tokens, "
                             f"this run has {t.shape[seq_dim]} (at '{name}')")
        if src.shape[0] not in (1, t.shape[0]):
            raise InputError(f"patching '{name}': the source has {src.shape[0]} rows, this run {t.shape[0]}")
        s = src.to(t).expand_as(t)
        if pos is None:
            return s.clone()
        out = t.clone()
        idx = [slice(None)] * t.dim()
        idx[seq_dim] = pos
        out[tuple(idx)] = s[tuple(idx)]
        return out
    return {name: apply}


def steering_vector(trace_a: Trace, trace_b: Trace, layer: int, position: int = -1) -> torch.Tensor:
    """(H,): a's minus b's layers.{layer}.resid_out, row 0, at `position` (-1: each one's last real token)."""
    _check_layer(trace_a.config, layer)
    name = f"layers.{layer}.resid_out"

    def at(tr: Trace) -> torch.Tensor:
        if name not in tr:
            raise InputError(f"'{name}' is not in the trace, so no steering vector can be made from it")
        p = tr.lengths[0] - 1 if position == -1 else position
        if not 0 <= p < tr.lengths[0]:
            raise InputError(f"position {position} is out of range: the prompt has {tr.lengths[0]} tokens")
        return tr[name][0, p].float()
    return at(trace_a) - at(trace_b)


def steer(trace_a: Trace, trace_b: Trace, layer: int, scale: float, position: int = -1) -> dict:
    """Add scale * (a - b) of layers.{layer}.resid_out (at the last real position, or `position`) to every
    position of layers.{layer}.resid_out."""
    vec = float(scale) * steering_vector(trace_a, trace_b, layer, position)
    return {f"layers.{layer}.resid_out": lambda t: t + vec.to(t)}


def no_rope(config, layer: int) -> dict:
    """Layer `layer` attends with q and k unrotated: attn.q_rope := attn.q, attn.k_rope := attn.k (exactly:
    the unrotated tensors are held from where the pass records them, for this call)."""
    n = f"layers.{_check_layer(config, layer)}.attn."
    held = {}

    def hold(part):
        def f(t):
            held[part] = t
            return t
        return f
    return {n + "q": hold("q"), n + "k": hold("k"),
            n + "q_rope": lambda t: held.pop("q"), n + "k_rope": lambda t: held.pop("k")}


def describe(edits_spec) -> str:
    """A short line naming what an edits dict (or a trace's .edits) touches."""
    names = list(edits_spec)
    return "no edits" if not names else "edited: " + ", ".join(names)


def scale(name: str, factor: float) -> dict:
    """The tensor recorded at `name` times factor (0 = zeroed); the engine checks the name."""
    return {name: lambda x: x * factor}


def build(kind: str, config, layer: int, settings: dict, reference: Trace | None = None,
          runs: dict | None = None) -> dict:
    """The edit the Experiments page names by kind and settings, at `layer`:
    head (settings h, mode; mean over `reference`), attn, mlp, norope, patch (settings pos; runs["src"]),
    steer (settings scale; runs["a"], runs["b"]), name (settings name, pct: percent kept)."""
    runs = runs or {}
    if kind == "head":
        return ablate_heads(config, layer, [settings["h"]], settings["mode"], reference=reference)
    if kind in ("attn", "mlp", "norope"):
        return {"attn": zero_attention, "mlp": zero_mlp, "norope": no_rope}[kind](config, layer)
    if kind == "patch":
        return patch(runs["src"], f"layers.{layer}.resid_out", positions=[settings["pos"]])
    if kind == "steer":
        return steer(runs["a"], runs["b"], layer, settings["scale"])
    if kind == "name":
        return scale(settings["name"], settings["pct"] / 100)
    raise InputError(f"edit kind {kind!r}: use one of head, attn, mlp, norope, patch, steer, name")
