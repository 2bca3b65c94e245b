"""int8 weight-only: every projection stored as int8 rows with one scale per output row, read by the ONE
forward pass of ops/engine/model.py through Int8Weights.linear (a Weights whose projections dequantize as they go).

The scheme is gpt-fast's (quantize.py, dynamically_quantize_per_channel), symmetric per output channel:
    s_o = max_i |W_oi| / 127.5            (one scale per output row o, stored in the activation dtype)
    q_oi = clamp(round(W_oi / s_o), -128, 127)           W ≈ s[:, None] * q
    y = x W^T ≈ (x q^T) * s               (the scale multiplies the output, so the kernel reads int8 only)
Decoding reads every weight once per token, so int8 halves the bytes of the bfloat16 copy again. The activations
stay in the model's own dtype (float32 on the CPU), and so do the tensors that are not quantized, shared with the
model rather than copied: the embedding table (a gather reads S rows, not the table), norms and biases. So the
int8 path differs from float32 by the weight rounding alone, and a decode step on the CPU converts nothing
(bfloat16 activations measured slower there: SDPA for one query in bfloat16 is slower than in float32 on the
CPU, and every int8 product converted x and y; bench/RESULTS.md, "Figures once in code comments"). q|k|v and gate|up are
fused as in the bfloat16 copy: one product, then
split. A MoE model's experts are not quantized (the MoE operator takes its weight tensors directly): they, and so
the activations, stay in 16 bits (rest_dtype).

Kernels, CPU: "native" (ops/fast/native/int8_linear.c, AVX2 + FMA, built once at start: int8 rows stored in blocks
of 8 so that a thread reads one sequential stream, converted in registers, two rows of x per converted weight in a
prefill; 16 lanes wide, with the same bits, where the CPU has AVX-512F); where it cannot be built,
torch.ops.aten._weight_int8pack_mm (x (M, K) bf16, q (N, K) int8, s (N,) bf16 -> (M, N)); bench/int8.py
measures both against int8 -> bf16 dequantization + torch.mv / F.linear on the model's own shapes (the LM head
included). Other devices, or where neither runs: dequantize, then F.linear.
"""
from __future__ import annotations

import re

import torch
import torch.nn.functional as F

from ..engine.weights import FUSED, Weights
from . import native

QUANTIZED = re.compile(r"model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight|lm_head\.weight")
EMBED = "model.embed_tokens.weight"


def quantize(w, scale_dtype: torch.dtype = torch.bfloat16, block: int = 2048) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, in) float -> (q int8 (out, in), s (out,) in scale_dtype), symmetric per output row. The scale is
    rounded up to scale_dtype before dividing, so q is the best int8 row for the scale the kernel will use and
    no element lands past the clamp: |W - s q| <= s / 2 everywhere.
    w may be a list of (out_i, in) tensors: their rows are quantized one after another into one q, as if
    concatenated (q|k|v, gate|up), without the concatenated float copy. Rows go `block` at a time, so the float
    temporaries stay small (a few MB) and are not written over the whole matrix again and again."""
    parts = list(w) if isinstance(w, (list, tuple)) else [w]
    rows, cols = sum(p.shape[0] for p in parts), parts[0].shape[1]
    q = torch.empty(rows, cols, dtype=torch.int8, device=parts[0].device)
    s = torch.empty(rows, dtype=scale_dtype, device=parts[0].device)
    r = 0
    for part in parts:
        for x in part.split(block):
            x, n = x.float(), x.shape[0]
            exact = (x.abs().amax(dim=1) / 127.5).clamp(min=1e-10)          # gpt-fast: (max - min) / 2 of int8
            sb = exact.to(scale_dtype)
            sb = torch.where(sb.float() < exact, torch.nextafter(sb, torch.full_like(sb, float("inf"))), sb)
            s[r:r + n] = sb
            q[r:r + n] = (x / sb.float()[:, None]).round_().clamp_(-128, 127)   # whole numbers: exact in int8
            r += n
    return q, s


def dequantize(q: torch.Tensor, s: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """s[:, None] * q in `dtype`: the weights the int8 path effectively multiplies by."""
    return q.to(dtype) * s.to(dtype)[:, None]


# ---- kernels: y (.., N) = (x (.., K) q^T) * s ---------------------------------------------------------------
def int8pack_mm(x: torch.Tensor, q: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """ATen's int8 weight-only kernel: it reads int8 rows and converts in registers (no bf16 copy of W). Its float32
    path is not vectorized on the CPU (a prefill product is many times slower than in bfloat16; bench/RESULTS.md,
    "Figures once in code comments"), so
    float32 activations go through bfloat16 here, and y comes back in x's dtype."""
    dtype = torch.bfloat16 if x.dtype == torch.float32 and x.device.type == "cpu" else x.dtype
    y = torch.ops.aten._weight_int8pack_mm(x.reshape(-1, x.shape[-1]).to(dtype).contiguous(), q, s.to(dtype))
    return y.to(x.dtype).view(*x.shape[:-1], q.shape[0])                                  # (.., N)


def dequant_linear(x: torch.Tensor, q: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """int8 -> x's dtype, one product, scale the output: writes a full-width copy of W on every call."""
    return F.linear(x, q.to(x.dtype)) * s.to(x.dtype)


def dequant_mv(x: torch.Tensor, q: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """As dequant_linear, with torch.mv for one row (the 16-bit fast path's GEMV kernel)."""
    if x.numel() != x.shape[-1]:
        return dequant_linear(x, q, s)
    return (torch.mv(q.to(x.dtype), x.reshape(-1)) * s.to(x.dtype)).view(*x.shape[:-1], q.shape[0])


def native_mm(x: torch.Tensor, q: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """ops/fast/native/int8_linear.c: one row (decoding) or many (a prefill, two rows per converted weight), in float32.
    q in the kernel's layout: native.pack(rows)."""
    return native.int8_linear(x, q, s if s.dtype is torch.float32 else s.float())


KERNELS = {"native": native_mm, "int8pack_mm": int8pack_mm, "dequant+mv": dequant_mv,
           "dequant+F.linear": dequant_linear}
LAYOUTS = {"native": (native.pack, native.unpack)}     # kernel -> (rows -> its layout, back); the rest read rows


def pack(kernel: str, q: torch.Tensor) -> torch.Tensor:
    """int8 rows (N, K) -> the layout `kernel` reads (the same bytes; only the native kernel reorders them)."""
    return LAYOUTS[kernel][0](q) if kernel in LAYOUTS else q


def unpack(kernel: str, q: torch.Tensor) -> torch.Tensor:
    """pack's inverse: the rows of W's int8 image, in order."""
    return LAYOUTS[kernel][1](q) if kernel in LAYOUTS else q


def pick_kernel(device, dtype: torch.dtype) -> str:
    """On the CPU: the native kernel where it builds (fastest there, bench/int8.py), else int8pack_mm where it
    runs; elsewhere dequant+F.linear."""
    if torch.device(device).type == "cpu" and native.load() is not None:
        return "native"
    try:
        x, q = torch.ones(1, 64, device=device, dtype=dtype), torch.ones(8, 64, device=device, dtype=torch.int8)
        y = int8pack_mm(x, q, torch.ones(8, device=device, dtype=dtype))
        if bool((y == 64).all()):
            return "int8pack_mm"
    except (RuntimeError, NotImplementedError):
        pass
    return "dequant+F.linear"


class Int8Weights(Weights):
    """A Weights whose projections (those matching QUANTIZED, fused or not) are int8 rows q with scales s:
    tensors[name + ".weight"] is q (out, in) int8 in the kernel's layout (pack) and tensors[name + ".scales"] is
    s (out,); rows(name) gives q in row order."""

    def __init__(self, tensors: dict, splits: dict | None = None, kernel: str = "int8pack_mm"):
        super().__init__(tensors, splits)
        self.kernel = kernel
        self._mm = KERNELS[kernel]

    weight_dtype = "int8"

    def rows(self, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        """(q (out, in) int8 in row order, s (out,)) of projection `name`: dequantize(*rows) is what it multiplies
        by."""
        return unpack(self.kernel, self._tensors[name + ".weight"]), self._tensors[name + ".scales"]

    def linear(self, x: torch.Tensor, name: str) -> torch.Tensor:
        s = self._tensors.get(name + ".scales")
        if s is None:                                       # a projection left in 16 bits
            return super().linear(x, name)
        y = self._mm(x, self._tensors[name + ".weight"], s)
        b = self._tensors.get(name + ".bias")
        return y if b is None else y + b


def rest_dtype(model) -> torch.dtype:
    """The int8 set's activations, scales and unquantized tensors: the model's own dtype, or 16 bits for a MoE model,
    whose experts would otherwise be read in float32."""
    c = model.config
    moe = any(c.is_moe_layer(i) for i in range(c.num_hidden_layers))
    return model.fast_dtype() if moe else model.dtype


def int8_copy(model, kernel: str | None = None, on_part=None) -> Int8Weights:
    """The int8 weight set of `model` (built once by Model.fast_weights("int8"), under its lock). Quantized from
    the model's own weights (not from the bfloat16 copy: one rounding, not two). The rest, and the scales, in
    rest_dtype(model): the model's own tensors, shared, not copied, unless it has experts. on_part(done, total):
    called after each layer's weights (total = the layers, then one for the rest)."""
    dtype = rest_dtype(model)
    kernel = kernel or pick_kernel(model.device, dtype)
    src = model.weights
    by_ptr, W = {}, {}
    for name, t in src.items():
        if QUANTIZED.fullmatch(name):
            continue
        if t.data_ptr() not in by_ptr:                      # tied or shared tensors stay shared
            by_ptr[t.data_ptr()] = t.to(dtype).contiguous()
        W[name] = by_ptr[t.data_ptr()]
    splits, done, L = {}, set(), model.config.num_hidden_layers
    layer_of = {n: int(n.split(".")[2]) for n in src if n.startswith("model.layers.")}
    for i in range(L):
        for prefix, parts in ((f"model.layers.{i}.self_attn.", ("q", "k", "v")), (f"model.layers.{i}.mlp.", ("gate",
                                                                                                             "up"))):
            names = [f"{prefix}{x}_proj" for x in parts]
            if not all(n + ".weight" in src for n in names):
                continue                                    # a MoE layer: no gate|up
            fused = prefix + FUSED[parts] + "_proj"
            q, s = quantize([src[n + ".weight"] for n in names], dtype)
            W[fused + ".weight"], W[fused + ".scales"] = pack(kernel, q), s
            splits[fused] = [src[n + ".weight"].shape[0] for n in names]
            if all(n + ".bias" in W for n in names):
                W[fused + ".bias"] = torch.cat([W.pop(n + ".bias") for n in names])
            done.update(n + ".weight" for n in names)
        for name, t in src.items():                        # the layer's other matrices (o_proj, down_proj, ...)
            if layer_of.get(name) == i and name not in done:
                done.add(_quantize_into(W, name, t, dtype, kernel))
        if on_part is not None:
            on_part(i + 1, L + 1)
    for name, t in src.items():                            # outside the layers (an untied lm_head)
        if name not in done:
            _quantize_into(W, name, t, dtype, kernel)
    if on_part is not None:
        on_part(L + 1, L + 1)
    return Int8Weights(W, splits, kernel)


def _quantize_into(W: dict, name: str, t: torch.Tensor, dtype, kernel: str) -> str | None:
    """W[name] = the int8 matrix and W[<name less .weight>.scales] its scales, when name is one QUANTIZED names;
    returns name then, else None."""
    if not QUANTIZED.fullmatch(name):
        return None
    q, W[name[:-len(".weight")] + ".scales"] = quantize(t, dtype)
    W[name] = pack(kernel, q)
    return name


# ---- bytes ------------------------------------------------------------------------------------------------
def weight_bytes(W: Weights) -> int:
    """Bytes held by a weight set: every distinct tensor once."""
    return sum({t.data_ptr(): t.numel() * t.element_size() for t in W.values()}.values())


def decode_bytes(W: Weights) -> int:
    """Bytes one decode step reads from a weight set: every distinct tensor once, except the embedding table,
    of which a step gathers one row (unless the LM head reads the same tensor)."""
    emb = W[EMBED]
    seen = {t.data_ptr(): t.numel() * t.element_size() for n, t in W.items() if n != EMBED}
    if emb.data_ptr() not in seen:
        seen[emb.data_ptr()] = emb.shape[1] * emb.element_size()
    return sum(seen.values())


def path_bytes(model) -> dict[str, int]:
    """Decode-step bytes of each decoding path ("eager", "bf16", "int8"), from the model's weights' shapes,
    without building any copy (decode_bytes of the built set gives the same number; tests/unit/test_int8.py)."""
    fast, own = model.fast_dtype().itemsize, rest_dtype(model).itemsize      # the bf16 copy's, the int8 set's rest
    out = {"eager": decode_bytes(model.weights), "bf16": 0, "int8": 0}
    seen, tied = set(), model.weights[EMBED].data_ptr() == model.weights["lm_head.weight"].data_ptr()
    for name, t in model.weights.items():
        if name == EMBED:
            row = t.shape[1] * fast
            out["int8"] += t.shape[1] * own
            out["bf16"] += 0 if tied else row
            continue
        if QUANTIZED.fullmatch(name):
            out["int8"] += t.numel() + t.shape[0] * own
        elif t.data_ptr() not in seen:
            out["int8"] += t.numel() * own
        if t.data_ptr() not in seen:
            out["bf16"] += t.numel() * fast
            seen.add(t.data_ptr())
    return out
