"""Sweeps: many edited runs of one prompt, batched, each starting where its edit starts.

An edit at layer l leaves layers 0..l-1 untouched, so a variant starts from the clean trace's residual
stream at layer l (Model.forward(start=l, hidden=...), the same layer code) and only layers l..L-1 are run.
Variants that start at the same layer go as one batch (e.g. the nh heads of a layer as nh rows, each row
with its own head ablated). Causal attention means positions after the target position cannot change
its logit, so only positions 0..position are run, and only the target position goes through the LM head.
progress(done, total) is called after each batch; cancel() -> True stops the sweep (ops.errors.Cancelled),
checked at every layer.
"""
from __future__ import annotations

import torch

from ..engine.trace import Trace
from ..errors import Cancelled, InputError
from .experiments_attribution import resolve_position


def _recorder(cancel):
    """A record callback that only checks cancel() once per layer."""
    if cancel is None:
        return None

    def record(name, t):
        if name.endswith("resid_out") and cancel():
            raise Cancelled("the sweep was stopped")
    return record




def _token(trace: Trace, token_id: int) -> int:
    V = trace.config.vocab_size
    if not 0 <= int(token_id) < V:
        raise InputError(f"token id {token_id} is out of range: the vocabulary has {V} rows (0 to {V - 1})")
    return int(token_id)


def _run(model, start: int, x: torch.Tensor, edits: dict | None, record) -> torch.Tensor:
    """Rows x (nb, n, H) from layer `start` to the logits at the last position: (nb, V) float32."""
    nb, n, _ = x.shape
    positions = torch.arange(n)[None].expand(nb, n)
    logits = model.forward(None, positions, torch.ones(nb, n, dtype=torch.bool), record=record, last_only=True,
                           edits=edits or None, start=start, hidden=x)
    return logits[:, 0].float().cpu()


def head_sweep(model, trace: Trace, row: int, position: int, token_id: int, mode: str = "zero",
               progress=None, cancel=None) -> dict:
    """Ablate every head one at a time, and every layer's attention and MLP, and measure the target token's
    logit and probability at (row, position). Returns "heads" (L, nh) and "heads_prob" (L, nh): ablated minus
    base; "attn", "mlp", "attn_prob", "mlp_prob" (L,) likewise; "base_logit", "base_prob".
    mode "zero" sets the part to 0, "mean" to its mean over the row's real positions."""
    if mode not in ("zero", "mean"):
        raise InputError(f"ablation mode must be 'zero' or 'mean', got {mode!r}")
    p, tok = resolve_position(trace, row, position), _token(trace, token_id)
    c = model.config
    L, nh, hd = c.num_hidden_layers, c.num_attention_heads, c.head_dim
    n, length = p + 1, trace.lengths[row]
    record = _recorder(cancel)
    base = trace.logits[row, p].float()
    base_logit, base_prob = float(base[tok]), float(torch.softmax(base, -1)[tok])

    def fill(name: str) -> torch.Tensor | float:
        return 0.0 if mode == "zero" else trace[name][row, :length].float().mean(0)

    heads, attn, mlp = torch.zeros(L, nh, 2), torch.zeros(L, 2), torch.zeros(L, 2)
    total, done = L * (nh + 2), 0
    for layer in range(L + 1):
        if cancel is not None and cancel():
            raise Cancelled("the sweep was stopped")
        rows, edits = [], {}
        if layer < L:                       # nh head variants + the whole attention of this layer
            rows += [trace.layer_input(layer)[row:row + 1, :n]] * (nh + 1)
            ctx_fill, out_fill = fill(f"layers.{layer}.attn.context"), fill(f"layers.{layer}.attn.out")

            def ablate_each_head(t, f=ctx_fill):
                t = t.clone()
                for h in range(nh):
                    t[h, :, h * hd:(h + 1) * hd] = f if isinstance(f, float) else f[h * hd:(h + 1) * hd].to(t)
                return t

            def ablate_attention(t, f=out_fill):
                t = t.clone()
                t[nh] = f if isinstance(f, float) else f.to(t)
                return t
            edits = {f"layers.{layer}.attn.context": ablate_each_head, f"layers.{layer}.attn.out": ablate_attention}
        if layer > 0:                       # the previous layer's MLP ablated: its resid_mid goes on as its output
            f = fill(f"layers.{layer - 1}.mlp.out")
            rows.append(trace.layer(layer - 1, "resid_mid")[row:row + 1, :n] + (f if isinstance(f,
                                                                                                float) else f.to(base)))
        z = _run(model, layer, torch.cat(rows), edits, record)
        logit, prob = z[:, tok], torch.softmax(z, -1)[:, tok]
        if layer < L:
            heads[layer] = torch.stack([logit[:nh], prob[:nh]], -1)
            attn[layer] = torch.stack([logit[nh], prob[nh]])
            done += nh + 1
        if layer > 0:
            mlp[layer - 1] = torch.stack([logit[-1], prob[-1]])
            done += 1
        if progress is not None:
            progress(done, total)
    return {"heads": heads[..., 0] - base_logit, "heads_prob": heads[..., 1] - base_prob,
            "attn": attn[:, 0] - base_logit, "attn_prob": attn[:, 1] - base_prob,
            "mlp": mlp[:, 0] - base_logit, "mlp_prob": mlp[:, 1] - base_prob,
            "base_logit": base_logit, "base_prob": base_prob, "position": p, "token_id": tok, "mode": mode}


def patch_sweep(model, clean: Trace, corrupted: Trace, token_id: int, progress=None, cancel=None) -> dict:
    """Activation patching over layer x position: clean's layers.{l}.resid_out at position s put into the
    corrupted run (row 0 of each). "restored" (L, S): (patched - corrupted) / (clean - corrupted) of the target
    token's logit at the last position: 1 = the clean answer fully restored, 0 = no effect."""
    tok = _token(clean, token_id)
    n = clean.lengths[0]
    if corrupted.lengths[0] != n:
        raise InputError(f"patching needs equal token lengths: the clean prompt has {n} tokens, the corrupted one "
                         f"{corrupted.lengths[0]}; reword one of them so both have the same number of tokens")
    L = model.config.num_hidden_layers
    clean_logit, corrupted_logit = float(clean.logits[0, n - 1, tok]), float(corrupted.logits[0, n - 1, tok])
    diff = clean_logit - corrupted_logit
    if abs(diff) < 1e-6:
        raise InputError("the clean and the corrupted prompt give this token the same logit: there is nothing "
                         "to restore; pick another target token or another pair")
    record = _recorder(cancel)
    restored = torch.zeros(L, n)
    for layer in range(L):
        if cancel is not None and cancel():
            raise Cancelled("the sweep was stopped")
        name = f"layers.{layer}.resid_out"
        x = corrupted[name][0:1, :n].expand(n, n, -1).clone()               # (n variants, n, H)
        src = clean[name][0, :n]
        x[torch.arange(n), torch.arange(n)] = src                           # variant s: position s patched
        z = _run(model, layer + 1, x, None, record)[:, tok]
        restored[layer] = (z - corrupted_logit) / diff
        if progress is not None:
            progress(layer + 1, L)
    return {"restored": restored, "clean_logit": clean_logit, "corrupted_logit": corrupted_logit,
            "token_id": tok}
