"""4-bit weights three ways, with one scale and zero point per group of g input columns (g = 32, 64, 128):

RTN   round to nearest: per group, scale = (max - min) / 15, zero = round(-min / scale), q = clamp(round(w / scale)
      + zero, 0, 15), w' = (q - zero) * scale.
AWQ   activation-aware (Lin et al. 2023, arXiv:2306.00978): input channel j is scaled by s_j = mean|x_j|^alpha before
      rounding and divided after, w' = Q(W diag(s)) diag(s)^-1 (in a kernel 1/s folds into the previous operator);
      alpha from a grid of 21, the one with the least output error on calibration inputs X.
GPTQ  error feedback (Frantar et al. 2022, arXiv:2210.17323): columns rounded one at a time, the rounding error of
      column j spread over the columns not yet rounded by the inverse Hessian of the layer's loss, H = 2 X^T X:
      W[:, j:] -= (w_j - q_j) / [H^-1]_jj * [H^-1]_j,j: , then j eliminated from H^-1. Run as the paper's lazy
      batches of 128 columns with the Cholesky factor of H^-1; gptq_plain() is the same algorithm written plainly.
Bytes: 4 bits a weight, a 16-bit scale and a 4-bit zero per group.
"""
from __future__ import annotations

import math

import torch

from ..engine.model import Model

LEVELS = 15                                         # 4 bits: codes 0..15
GROUPS = (32, 64, 128)
ALPHAS = tuple(i / 20 for i in range(21))
LINEARS = {"attn_norm.out": ("self_attn", ("q_proj", "k_proj", "v_proj")), "attn.context": ("self_attn", ("o_proj",)),
           "mlp_norm.out": ("mlp", ("gate_proj", "up_proj")), "mlp.act": ("mlp", ("down_proj",))}   # input -> outputs


def group_params(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Asymmetric min-max over the last dimension: (scale, zero) with a trailing dimension of 1; the range always
    holds 0, and a constant group gets scale 1."""
    lo, hi = w.amin(-1, keepdim=True).clamp(max=0), w.amax(-1, keepdim=True).clamp(min=0)
    scale = (hi - lo) / LEVELS
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return scale, torch.round(-lo / scale)


def quantize(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor) -> torch.Tensor:
    """Round to the 16 levels of (scale, zero) and back: (q - zero) * scale."""
    return (torch.clamp(torch.round(w / scale) + zero, 0, LEVELS) - zero) * scale


def rtn(W: torch.Tensor, g: int) -> torch.Tensor:
    """Round-to-nearest with one (scale, zero) per row and group of g columns (the last group may be shorter)."""
    if W.shape[1] % g == 0:                            # every group whole: all of them at once
        Wg = W.reshape(W.shape[0], -1, g)
        return quantize(Wg, *group_params(Wg)).reshape(W.shape)
    out = torch.empty_like(W)
    for a in range(0, W.shape[1], g):
        out[:, a:a + g] = quantize(W[:, a:a + g], *group_params(W[:, a:a + g]))
    return out


def out_error(X: torch.Tensor, W: torch.Tensor, Wq: torch.Tensor) -> float:
    """||X Wq^T - X W^T||^2: the layer's output error on inputs X (N, in)."""
    return float((X @ (Wq - W).T).pow(2).sum())


def awq(Ws: list[torch.Tensor], X: torch.Tensor, g: int, alphas=ALPHAS) -> tuple[list[torch.Tensor], float]:
    """The projections sharing input X, scaled by one s = mean|x|^alpha (normalised so max * min = 1) before RTN:
    (their dequantized weights at the best alpha, that alpha)."""
    mean = X.abs().mean(0).clamp(min=1e-8)
    best = None
    for alpha in alphas:
        s = mean.pow(alpha)
        s = s / (s.max() * s.min()).sqrt()
        qs = [rtn(W * s, g) / s for W in Ws]
        err = sum(out_error(X, W, q) for W, q in zip(Ws, qs))
        if best is None or err < best[0]:
            best = (err, qs, alpha)
    return best[1], best[2]


def _hinv_upper(X: torch.Tensor, damp: float) -> tuple[torch.Tensor, torch.Tensor]:
    """H = 2 X^T X in float64 with `damp` of its mean diagonal added (the paper's 1 %), and dead columns (never
    active) set to 1 on the diagonal: (H, the upper Cholesky factor of H^-1)."""
    H = 2 * X.double().T @ X.double()
    dead = torch.diag(H) == 0
    H[dead, dead] = 1
    H += damp * torch.diag(H).mean() * torch.eye(H.shape[0], dtype=H.dtype)
    return H, torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)


def gptq(W: torch.Tensor, X: torch.Tensor, g: int, block: int = 128, damp: float = 0.01,
         U: torch.Tensor | None = None) -> torch.Tensor:
    """GPTQ as the paper runs it: blocks of `block` columns, errors spread inside the block column by column and
    onto the later columns once per block. Groups take their (scale, zero) from the updated weights when their first
    column comes up; g must divide block. U: the upper Cholesky factor of H^-1 when already made from X (it does not
    depend on g: one factor serves every group size)."""
    if block % g:
        block = g * max(1, block // g)
    if U is None:
        _, U = _hinv_upper(X, damp)
    W = W.double().clone()
    Q = torch.zeros_like(W)
    cols = W.shape[1]
    for a in range(0, cols, block):
        b = min(a + block, cols)
        W1, E1, U1 = W[:, a:b].clone(), torch.zeros(W.shape[0], b - a, dtype=W.dtype), U[a:b, a:b]
        for i in range(b - a):
            if i % g == 0:
                scale, zero = group_params(W1[:, i:i + g])
            q = quantize(W1[:, i:i + 1], scale, zero)[:, 0]
            err = (W1[:, i] - q) / U1[i, i]
            W1[:, i:] -= err[:, None] * U1[i, i:][None]
            Q[:, a + i], E1[:, i] = q, err
        W[:, b:] -= E1 @ U[a:b, b:]
    return Q.to(torch.float32)


def gptq_plain(W: torch.Tensor, X: torch.Tensor, g: int, damp: float = 0.01) -> torch.Tensor:
    """The reference: Optimal Brain Quantization's step with the inverse Hessian itself, one column at a time, no
    Cholesky, no blocks: q_j = Q(w_j), W[:, j:] -= (w_j - q_j) / Hinv_jj * Hinv_j,j: ;
    Hinv -= Hinv_:j Hinv_j: / Hinv_jj."""
    H, _ = _hinv_upper(X, damp)
    Hinv = torch.linalg.inv(H)
    W = W.double().clone()
    Q = torch.zeros_like(W)
    for j in range(W.shape[1]):
        if j % g == 0:
            scale, zero = group_params(W[:, j:j + g])
        Q[:, j] = quantize(W[:, j:j + 1], scale, zero)[:, 0]
        err = (W[:, j] - Q[:, j]) / Hinv[j, j]
        W[:, j:] -= err[:, None] * Hinv[j, j:][None]
        Hinv = Hinv - Hinv[:, j:j + 1] @ Hinv[j:j + 1, :] / Hinv[j, j]
    return Q.to(torch.float32)


def packed_bytes(n_weights: int, rows: int, cols: int, g: int) -> int:
    """4 bits a weight + a 16-bit scale and a 4-bit zero per row and group."""
    return n_weights // 2 + rows * math.ceil(cols / g) * 5 // 2


def default_layers(n_layers: int, k: int = 6) -> list[int]:
    """The layers the comparison quantizes: k spread from the first (every layer when there are no more than k); the
    others stay float32. On 2 CPU cores GPTQ's inverse Hessians (4864 x 4864 for the 0.5B's down_proj) and its column
    loop over every layer take many minutes: a subset shows the methods apart in a fraction of the time."""
    return list(range(0, n_layers, max(1, n_layers // k)))[:k]


def quantized_weights(model, calib: dict, method: str, g: int, progress=None, layers=None,
                      factors: dict | None = None) -> tuple[dict, dict]:
    """The projections of `layers` (default every decoder layer) of `model` quantized by `method` with calibration
    inputs calib[(layer, input name)] (N, in): (name -> dequantized weight, name -> AWQ's alpha when method is
    "awq"). factors: a dict kept across calls that holds GPTQ's Cholesky factor per (layer, input), made once."""
    c, out, alphas = model.config, {}, {}
    layers = list(range(c.num_hidden_layers)) if layers is None else list(layers)
    factors = {} if factors is None else factors
    for k, i in enumerate(layers):
        if progress:
            progress(k, len(layers))
        for inp, (mod, projs) in LINEARS.items():
            if c.is_moe_layer(i) and mod == "mlp":
                continue
            names = [f"model.layers.{i}.{mod}.{p}.weight" for p in projs]
            Ws, X = [model.weights[n].float() for n in names], calib[(i, inp)]
            if method == "rtn":
                qs = [rtn(W, g) for W in Ws]
            elif method == "awq":
                qs, alphas[names[0]] = awq(Ws, X, g)
            else:                                         # rows are independent: the projections sharing X at once
                if (i, inp) not in factors:
                    factors[(i, inp)] = _hinv_upper(X, 0.01)[1]
                q = gptq(torch.cat(Ws), X, g, U=factors[(i, inp)])
                qs = list(q.split([W.shape[0] for W in Ws]))
            out.update(zip(names, qs))
    return out, alphas


def calibration(model, ids: list[int]) -> dict:
    """(layer, input name) -> the projection inputs (N, in) of one pass over ids, in float32."""
    tr = model.trace_ids([ids], recompute=False)
    return {(i, inp): tr.layer(i, inp)[0].float().reshape(len(ids), -1)
            for i in range(model.config.num_hidden_layers) for inp in LINEARS if f"layers.{i}.{inp}" in tr}


def text_eval(model, ids: list[int]) -> dict:
    """One pass over ids: next-token cross-entropy (nats) and the greedy token at every position."""
    logits = model.forward(torch.tensor([ids]), torch.arange(len(ids))[None], torch.ones(1, len(ids), dtype=torch.bool),
                           last_only=False)[0].float()
    loss = torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(ids[1:]))
    return dict(loss=float(loss), argmax=logits.argmax(-1))


def compare(model, calib_ids: list[int], live_ids: list[int], text_ids: list[int], methods=("rtn", "awq", "gptq"),
            groups=GROUPS, progress=None, layers=None) -> dict:
    """Each method and group size on the loaded model against float32, the projections of `layers` quantized (default
    default_layers(); the rest stay float32): the mean (and per-layer) relative output error of the projections on
    the live prompt's inputs, the loss on text_ids and how often the next token agrees, and the bytes of the
    quantized projections against bfloat16."""
    L = model.config.num_hidden_layers
    layers = default_layers(L) if layers is None else sorted(layers)
    calib, live = calibration(model, calib_ids), calibration(model, live_ids)
    base = text_eval(model, text_ids)
    rows, runs, factors = [], [(m, g) for m in methods for g in groups], {}
    for k, (method, g) in enumerate(runs):
        inner = (lambda d, t, k=k: progress(k * t + d, len(runs) * t)) if progress else None
        qw, alphas = quantized_weights(model, calib, method, g, inner, layers, factors)
        per_layer = [0.0] * L
        n_w = byts = 0
        for name, q in qw.items():
            i, W = int(name.split(".")[2]), model.weights[name].float()
            inp = next(x for x, (mod, ps) in LINEARS.items() if name.split(".")[3] == mod and name.split(".")[4] in ps)
            X = live[(i, inp)]
            ref = X @ W.T
            per_layer[i] = max(per_layer[i], float((X @ q.T - ref).norm() / ref.norm().clamp(min=1e-30)))
            n_w += W.numel()
            byts += packed_bytes(W.numel(), W.shape[0], W.shape[1], g)
        qm = Model(model.config, {**dict(model.weights), **qw}, model.tokenizer, device=model.device, dtype=model.dtype)
        ev = text_eval(qm, text_ids)
        errs = [per_layer[i] for i in layers]
        rows.append(dict(method=method, group=g, per_layer=per_layer, mean_error=sum(errs) / len(errs),
                         loss=ev["loss"], agree=float((ev["argmax"] == base["argmax"]).float().mean()),
                         bytes=byts, bf16_bytes=2 * n_w, alpha=sum(alphas.values()) / len(alphas) if alphas else None))
        del qm, qw
    return dict(rows=rows, float_loss=base["loss"], text_tokens=len(text_ids), live_tokens=len(live_ids),
                calib_tokens=len(calib_ids), layers=layers, n_layers=L)
