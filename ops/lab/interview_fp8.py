"""FP8 (e4m3: 4 exponent bits, 3 mantissa bits, largest finite 448) with its scale chosen three ways, on the real
weights and the traced activations.

x' = fp8(x / s) * s with s = amax / 448 over the tensor, over each channel (a weight's output row; an activation's
token row, or its channel column) or over each 128 x 128 block (DeepSeek-V3's weight blocks). A finer scale follows
the local range, so small values keep their 3 mantissa bits instead of sinking into e4m3's subnormals next to an
outlier. torch.float8_e4m3fn does the rounding (round to nearest even, as the hardware casts do).
"""
from __future__ import annotations

import torch

E4M3 = torch.float8_e4m3fn
MAX = float(torch.finfo(E4M3).max)                  # 448
MODES = ("tensor", "row", "column", "block")


def fp8(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """Round x / scale to e4m3 and scale back (scale broadcasts against x)."""
    return (x / scale).clamp(-MAX, MAX).to(E4M3).float() * scale


def _safe(a: torch.Tensor) -> torch.Tensor:
    return torch.where(a > 0, a / MAX, torch.ones_like(a))


def scaled(x: torch.Tensor, mode: str, block: int = 128) -> torch.Tensor:
    """x (R, C) through FP8 with one scale per tensor, per row, per column or per block x block tile."""
    x = x.float()
    a = x.abs()
    if mode == "tensor":
        return fp8(x, _safe(a.amax()))
    if mode == "row":
        return fp8(x, _safe(a.amax(1, keepdim=True)))
    if mode == "column":
        return fp8(x, _safe(a.amax(0, keepdim=True)))
    if mode != "block":
        raise ValueError(f"mode must be one of {MODES}")
    out = torch.empty_like(x)
    for r in range(0, x.shape[0], block):
        for c in range(0, x.shape[1], block):
            t = x[r:r + block, c:c + block]
            out[r:r + block, c:c + block] = fp8(t, _safe(t.abs().amax()))
    return out


def errors(x: torch.Tensor, q: torch.Tensor) -> dict:
    """Relative error ||q - x|| / ||x||, the mean relative error of the entries, the share of nonzero entries that
    became 0."""
    x, d = x.float(), (q - x.float())
    nz = x != 0
    return dict(rel=float(d.norm() / x.norm().clamp(min=1e-30)),
                mean_rel=float((d.abs()[nz] / x.abs()[nz]).mean()) if bool(nz.any()) else 0.0,
                zeros=float(((q == 0) & nz).float().sum() / nz.sum().clamp(min=1)))


def weight_errors(model, modes=("tensor", "row", "block"), progress=None) -> list[dict]:
    """Every decoder-layer projection of the model, by projection kind: the error of each scaling mode over all
    layers (squared errors summed before the ratio) and the worst layer's."""
    c, acc = model.config, {}
    projs = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
             "mlp.up_proj", "mlp.down_proj")
    for i in range(c.num_hidden_layers):
        if progress:
            progress(i, c.num_hidden_layers)
        for p in projs:
            W = model.weights.get(f"model.layers.{i}.{p}.weight")
            if W is None:
                continue
            W = W.float()
            r = acc.setdefault(p, dict(name=p, norm2=0.0, **{m: 0.0 for m in modes}, worst={m: 0.0 for m in modes}))
            n2 = float(W.pow(2).sum())
            r["norm2"] += n2
            for m in modes:
                e2 = float((scaled(W, m) - W).pow(2).sum())
                r[m] += e2
                r["worst"][m] = max(r["worst"][m], (e2 / max(n2, 1e-30)) ** 0.5)
    return [dict(name=r["name"], **{m: (r[m] / max(r["norm2"], 1e-30)) ** 0.5 for m in modes}, worst=r["worst"])
            for r in acc.values()]


def activation_errors(trace, layer: int, names=("resid_out", "attn_norm.out", "mlp.act"), b: int = 0,
                      modes=MODES) -> list[dict]:
    """Row b's traced activations (tokens, channels) at layers.{layer}.{name}: each mode's errors, and max / median
    |x| (how far the outliers stand out)."""
    out = []
    for n in names:
        if f"layers.{layer}.{n}" not in trace:
            continue
        x = trace.layer(layer, n)[b, :trace.lengths[b]].float()
        med = float(x.abs().median())
        out.append(dict(name=f"layers.{layer}.{n}", ratio=float(x.abs().max()) / max(med, 1e-30),
                        **{m: errors(x, scaled(x, m)) for m in modes}))
    return out
