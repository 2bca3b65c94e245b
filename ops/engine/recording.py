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
from dataclasses import dataclass, field
from functools import partial

import torch

from ..errors import InputError
from . import functional as fn
from .trace import Derived, Trace, capture_filter, contract_names, recipe_inputs, seq_axes

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
    return build_traces(model, [(prompts, texts, rows)], capture, recompute, edits, on_layer)[0]


@dataclass
class Part:
    """One group's share of a pass: its rows a:b, cut to its own longest row S, and what its trace keeps."""
    a: int
    b: int
    S: int
    made: dict                       # its recipes (recipes(), on its own mask)
    tensors: dict = field(default_factory=dict)

    def cut(self, name: str, t: torch.Tensor, whole: bool) -> torch.Tensor:
        """Its rows of a recorded tensor, on the CPU; a copy of its own (the padded tensor is freed after the pass),
        unless it is the whole tensor (one group) or one per pass (trace.UNBATCHED)."""
        axes = seq_axes(name)
        if whole or axes is None:
            return t.detach().to("cpu")
        t = t[self.a:self.b]
        for ax in axes:
            t = t.narrow(ax, 0, self.S)
        return t.detach().to("cpu").clone(memory_format=torch.contiguous_format)

    def shape(self, name: str, shape: torch.Size, whole: bool) -> tuple:
        if whole:
            return tuple(shape)
        out = [self.b - self.a] + list(shape[1:])
        for ax in seq_axes(name) or ():
            out[ax] = self.S
        return tuple(out)


def build_traces(model, groups: list[tuple], capture=None, recompute: bool = True, edits: dict | None = None,
                 on_layer=None) -> list[Trace]:
    """One pass for several groups of rows, [(prompts, texts, rows), ...] (ops.engine.batch.trace_together): every
    row right-padded into one batch, and each group's trace cut from it, holding its own rows up to its own longest
    row, as build_trace of its rows alone would (right padding under a causal mask: a position sees only positions
    before it, so the longer padding changes nothing but the rounding of the wider products). Edits: one group only."""
    edits = check_edits(model.config, edits)
    if edits and len(groups) > 1:
        raise InputError("edits apply to one trace: trace the groups one by one")
    rows = [r for g in groups for r in g[2]]
    B, S = len(rows), max(len(r) for r in rows)
    ids = torch.full((B, S), model.pad_id(), dtype=torch.long)
    for b, r in enumerate(rows):
        ids[b, :len(r)] = torch.tensor(r, dtype=torch.long)
    lengths = [len(r) for r in rows]
    valid = torch.arange(S)[None] < torch.tensor(lengths)[:, None]       # (B, S) real tokens
    positions = torch.arange(S)[None].expand(B, S)                       # right padding: 0..S-1 per row
    keep, parts, a = capture_filter(capture), [], 0
    for _, _, g_rows in groups:
        b, s = a + len(g_rows), max(len(r) for r in g_rows)
        mask = fn.attention_mask(valid[a:b, :s], positions[a:b, :s], positions[a:b, :s])   # (b - a, 1, s, s)
        parts.append(Part(a, b, s, recipes(model, mask) if recompute else {}))
        a = b
    whole = len(groups) == 1

    def record(name, t):
        if on_layer is not None and name.endswith(".resid_out"):
            on_layer(int(name.split(".")[1]))
        if not keep(name):
            return
        needs = recipe_inputs(name)
        for p in parts:
            if p.made and needs and name not in edits and all(n in p.tensors for n in needs):   # held as a recipe
                _, layer, part = name.split(".", 2)
                p.tensors[name] = Derived(partial(p.made[part], int(layer)), needs, p.shape(name, t.shape, whole),
                                          t.dtype)
            else:
                p.tensors[name] = p.cut(name, t, whole)

    model.forward(ids, positions, valid, record=record, edits=edits)
    order = {n: k for k, n in enumerate(contract_names(model.config))}
    traces = []
    for p, (prompts, texts, _) in zip(parts, groups):
        texts = texts or [""] * (p.b - p.a)
        traces.append(Trace(model.config, prompts or texts, texts, ids[p.a:p.b, :p.S].clone(), lengths[p.a:p.b],
                            p.tensors, edits=tuple(sorted(edits, key=lambda n: order[n]))))
    return traces


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
