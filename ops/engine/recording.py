"""Building a Trace from one forward pass: the recorder (with edits), the recipes for recomputed tensors.

Kept apart from ops/engine/model.py so the runner stays one short forward pass. The pass calls
`x = rec(name, x)` at every trace-contract name; `recorder()` makes that function: it applies the edit
for `name` if there is one (checking the shape), hands the tensor to the trace's record callback, and
returns what the pass goes on with. With no edits and no record it is the identity, so a plain pass
costs one function call per name.
"""
from __future__ import annotations

import difflib
import re
from functools import partial

import torch

from ..errors import InputError
from . import functional as fn
from .trace import Derived, Trace, capture_filter, contract_names, recipe_inputs

NOT_EDITABLE = ("moe.router_probs", "moe.topk_idx", "moe.topk_weight")   # recorded after the experts ran


def _keep(name, t):
    return t


def recorder(record=None, edits: dict | None = None):
    """The pass's rec(name, t) -> tensor: record(name, t) (its return value is ignored) after edits[name]."""
    if not edits:
        if record is None:
            return _keep

        def rec(name, t):
            record(name, t)
            return t
        return rec

    def rec_edited(name, t):
        f = edits.get(name)
        if f is not None:
            t = checked_edit(name, t, f(t))
        if record is not None:
            record(name, t)
        return t
    return rec_edited


def checked_edit(name: str, before: torch.Tensor, after) -> torch.Tensor:
    """An edit's result, on the tensor's device and dtype; InputError if it is not a tensor of the same shape."""
    if not isinstance(after, torch.Tensor):
        raise InputError(f"the edit of '{name}' returned {type(after).__name__}, not a tensor: an edit is "
                         "fn(tensor) -> tensor of the same shape")
    if tuple(after.shape) != tuple(before.shape):
        raise InputError(f"the edit of '{name}' changed its shape from {tuple(before.shape)} to {tuple(after.shape)}: "
                         "an edit must return a tensor of the same shape")
    return after.to(before.device, before.dtype)


def check_edits(config, edits) -> dict:
    """edits as a dict of valid, editable trace-contract names of this config -> callables; InputError naming
    the first problem (unknown name, layer out of range, a name this model does not record, not callable)."""
    if not edits:
        return {}
    if not isinstance(edits, dict):
        raise InputError(f"edits must be a dict name -> fn(tensor) -> tensor, got {type(edits).__name__}")
    names = set(contract_names(config))
    L = config.num_hidden_layers
    for name, f in edits.items():
        if not isinstance(name, str):
            raise InputError(f"edit names are trace-contract names (strings), got {name!r}")
        m = re.fullmatch(r"layers\.(-?\d+)\.(.+)", name)
        if m and not 0 <= int(m.group(1)) < L:
            raise InputError(f"layer {m.group(1)} is out of range in edit '{name}': this model has {L} layers "
                             f"(0 to {L - 1})")
        if name not in names:
            kind = "MoE" if m and config.is_moe_layer(int(m.group(1))) else "dense"
            near = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            where = f" (layer {m.group(1)} is a {kind} layer)" if m else ""
            raise InputError(f"unknown trace name '{name}'{where}{hint}: an edit takes a trace-contract name "
                             "such as 'layers.7.attn.out' or 'layers.3.resid_out'")
        if name.endswith(NOT_EDITABLE):
            raise InputError(f"'{name}' cannot be edited: it is recorded after the experts ran; edit "
                             f"'{name.rsplit('.', 2)[0]}.mlp.out' instead")
        if not callable(f):
            raise InputError(f"the edit of '{name}' is {type(f).__name__}, not a function tensor -> tensor")
    return dict(edits)


def build_trace(model, rows: list[list[int]], capture=None, prompts=None, texts=None, recompute: bool = True,
                edits: dict | None = None, on_layer=None) -> Trace:
    """Model.trace_ids: run right-padded rows once, keeping every tensor `capture` allows. A tensor in
    trace.RECOMPUTED is held as a recipe when its inputs are kept, unless an edit replaced it (a recipe would
    give the unedited value; an edited input is fine: the recipe reads the recorded, edited, input).
    on_layer(i): called as layer i's output is recorded (the progress a page shows: ops.lab.steps)."""
    edits = check_edits(model.config, edits)
    B, S = len(rows), max(len(r) for r in rows)
    ids = torch.full((B, S), model.pad_id(), dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, :len(r)] = torch.tensor(r, dtype=torch.long)
    lengths = [len(r) for r in rows]
    valid = torch.arange(S)[None] < torch.tensor(lengths)[:, None]       # (B, S) real tokens
    positions = torch.arange(S)[None].expand(B, S)                       # right padding: 0..S-1 per row
    keep, tensors = capture_filter(capture), {}
    made = recipes(model, fn.attention_mask(valid, positions, positions)) if recompute else {}

    def record(name, t):
        if on_layer is not None and name.endswith(".resid_out"):
            on_layer(int(name.split(".")[1]))
        if not keep(name):
            return
        needs = recipe_inputs(name)
        if made and needs and name not in edits and all(n in tensors for n in needs):   # held as a recipe
            _, layer, part = name.split(".", 2)
            tensors[name] = Derived(partial(made[part], int(layer)), needs, tuple(t.shape), t.dtype)
        else:
            tensors[name] = t.detach().to("cpu")

    model.forward(ids, positions, valid, record=record, edits=edits)
    texts = texts or [""] * B
    order = {n: k for k, n in enumerate(contract_names(model.config))}
    return Trace(model.config, prompts or texts, texts, ids, lengths, tensors,
                 edits=tuple(sorted(edits, key=lambda n: order[n])))


def attention_scores(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """attn.scores from q_rope (B, nh, S, hd) and k_rope (B, nkv, T, hd): eager attention (ops/engine/model.py) and a
    trace's recipe both call this, so a recomputed map is bitwise the recorded one."""
    return fn.attention_scores(q, fn.repeat_kv(k, q.shape[1] // k.shape[1]), mask)      # (B, nh, S, T)


def recipes(model, mask: torch.Tensor) -> dict:
    """part -> fn(layer, *inputs) for each part in trace.RECOMPUTED: the functions the layer code calls,
    on the same weights, so a recomputed tensor is bitwise the recorded one. mask: the trace's (B, 1, S, S),
    kept on the CPU with the trace."""
    W, device = model.weights, model.device

    def on_device(f):          # run where the weights are; the trace lives on the CPU
        return lambda i, *xs: f(i, *(x.to(device) for x in xs)).to("cpu")

    return {"attn.scores": on_device(lambda i, q, k: attention_scores(q, k, mask.to(device))),
            "attn.probs": on_device(lambda i, scores: fn.softmax(scores)),
            "mlp.gate": on_device(lambda i, h: W.linear(h, f"model.layers.{i}.mlp.gate_proj")),
            "mlp.up": on_device(lambda i, h: W.linear(h, f"model.layers.{i}.mlp.up_proj")),
            "mlp.act": on_device(lambda i, g, u: fn.swiglu_act(g, u))}
