"""The same prompt through float32, bfloat16 and int8 weights: how far each drifts from float32, layer by layer.

One forward pass per weight set (Model.forward with weights="model" / "bf16" / "int8", eager attention for
all three, so only the weights differ), with a record callback that keeps only the residual stream
(embed.out, layers.{i}.resid_out) and the logits.
"""
from __future__ import annotations

import torch

from ..fast.quant import weight_bytes
from .steps import Plan, Step

SETS = {"float32": "model", "bfloat16": "bf16", "int8": "int8"}       # report name -> Model.weight_set name


def _run(model, ids: torch.Tensor, weights: str, on_layer=None) -> tuple[list[torch.Tensor], torch.Tensor]:
    """(residual states (L + 1) x (S, H) float32, logits (S, V) float32) of one pass on `weights`; on_layer(i)
    after layer i."""
    kept = {}

    def record(name, t):
        if name == "embed.out" or name.endswith(".resid_out"):
            kept[name] = t[0].float().cpu()
            if on_layer is not None and name != "embed.out":
                on_layer(int(name.split(".")[1]))
        return t

    S = ids.shape[1]
    logits = model.forward(ids, torch.arange(S)[None], torch.ones(1, S, dtype=torch.bool), record=record,
                           weights=weights, attention="eager")
    L = model.config.num_hidden_layers
    return [kept["embed.out"]] + [kept[f"layers.{i}.resid_out"] for i in range(L)], logits[0].float().cpu()


def precision_report(model, prompt: str, chat: bool = False, progress=None) -> dict:
    """float32 vs bfloat16 vs int8 weights on one prompt (int8 when it can be built here).

    resid_rel_err  {dtype: Tensor (L+1,)}  ‖x_d − x_32‖ / ‖x_32‖ over all positions, for embed.out then each
                                           layer's resid_out (zeros for float32 itself)
    top1_agree     {dtype: float}  share of positions whose top-1 next token equals float32's
    top5_agree     {dtype: float}  mean overlap of the top-5 sets with float32's, |A ∩ B| / 5, over positions
    kl             {dtype: float}  KL(p_32 ‖ p_d) of the next-token distribution at the last position (nats)
    weight_bytes   {dtype: int}    bytes each weight set holds (every distinct tensor once)
    The reference is the model's own weights, under the name "float32" (a model loaded in 16 bits is its own
    reference, and then "bfloat16" is left out: its copy is the model's weights).
    progress(done, total, step, fields): ops.lab.steps, per weight set its "weights" step (the copy made on first
    use, in shares of L units) then its "run" step, one unit per layer."""
    rows = model.encode_prompts(prompt, chat)[2]
    ids = torch.tensor([rows[0]])                                            # (1, S)
    sets = dict(SETS)
    if model.dtype != torch.float32:
        sets.pop("bfloat16")
    out = {k: {} for k in ("resid_rel_err", "top1_agree", "top5_agree", "kl", "weight_bytes")}
    ref_states, ref_logits = None, None
    L = model.config.num_hidden_layers
    plan = Plan([Step(k, L, {"dtype": name}) for name in sets for k in ("weights", "run")], progress)
    for j, (name, ws) in enumerate(sets.items()):
        try:
            W = model.weight_set(ws, plan.parts(2 * j))         # a copy made the first time: its share done so far
            plan.finish(2 * j)
        except (RuntimeError, NotImplementedError):                          # int8 where it cannot be built
            plan.at(2 * j + 1, L)
            continue
        states, logits = _run(model, ids, ws, plan.layers(2 * j + 1))
        if ref_states is None:
            ref_states, ref_logits = states, logits
            ref_top5 = ref_logits.topk(5, dim=-1).indices                     # (S, 5)
            ref_logp = torch.log_softmax(ref_logits[-1], -1)
        out["resid_rel_err"][name] = torch.stack([(x - r).norm() / r.norm().clamp_min(1e-30)
                                                  for x, r in zip(states, ref_states)])
        out["top1_agree"][name] = float((logits.argmax(-1) == ref_logits.argmax(-1)).float().mean())
        top5 = logits.topk(5, dim=-1).indices
        out["top5_agree"][name] = float((top5[:, :, None] == ref_top5[:, None, :]).any(-1).float().mean())
        logp = torch.log_softmax(logits[-1], -1)
        out["kl"][name] = float((ref_logp.exp() * (ref_logp - logp)).sum().clamp_min(0.0))
        out["weight_bytes"][name] = weight_bytes(W)
    return out
