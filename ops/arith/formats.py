"""Quantisation, computed: the bundled GGUF file's own blocks and their sizes, group scales, KV-cache int8 / FP8,
and the float formats (the Serving page's quantisation section). Conventions are ops/arith/costs.py's."""
from __future__ import annotations

import json
import math
import threading
from functools import lru_cache

import torch

from ..engine.config import ModelConfig
from ..errors import InputError
from ..lab.checks import Check
from . import costs

# ---- (c) quantisation -----------------------------------------------------------------------------------------
# One block of each GGML type as llama.cpp's ggml-common.h lays it out: (field, bytes). Their sums are checked
# against gguf.constants.GGML_QUANT_SIZES (the spec's block bytes) by the tests; `sub` is the sub-block size
# that one scale covers.
GGUF_BLOCK_FIELDS = {
    "F32": dict(sub=1, fields=[("float32 value", 4)]),
    "F16": dict(sub=1, fields=[("float16 value", 2)]),
    "BF16": dict(sub=1, fields=[("bfloat16 value", 2)]),
    "Q8_0": dict(sub=32, fields=[("d: fp16 scale", 2), ("qs: 32 × int8", 32)]),
    "Q4_0": dict(sub=32, fields=[("d: fp16 scale", 2), ("qs: 32 × 4 bits", 16)]),
    "Q4_1": dict(sub=32, fields=[("d: fp16 scale", 2), ("m: fp16 min", 2), ("qs: 32 × 4 bits", 16)]),
    "Q5_0": dict(sub=32, fields=[("d: fp16 scale", 2), ("qh: 32 high bits", 4), ("qs: 32 × low 4 bits", 16)]),
    "Q5_1": dict(sub=32, fields=[("d: fp16 scale", 2), ("m: fp16 min", 2), ("qh: 32 high bits", 4),
                                 ("qs: 32 × low 4 bits", 16)]),
    "Q4_K": dict(sub=32, fields=[("d: fp16 super-scale", 2), ("dmin: fp16 super-min", 2),
                                 ("scales: 8 × (6-bit scale + 6-bit min)", 12), ("qs: 256 × 4 bits", 128)]),
    "Q5_K": dict(sub=32, fields=[("d: fp16 super-scale", 2), ("dmin: fp16 super-min", 2),
                                 ("scales: 8 × (6-bit scale + 6-bit min)", 12), ("qh: 256 high bits", 32),
                                 ("qs: 256 × low 4 bits", 128)]),
    "Q6_K": dict(sub=16, fields=[("ql: 256 × low 4 bits", 128), ("qh: 256 × high 2 bits", 64),
                                 ("scales: 16 × int8", 16), ("d: fp16 super-scale", 2)]),
}


def ggml_sizes(name: str) -> tuple[int, int]:
    """(weights per block, bytes per block) from the GGUF spec constants (gguf.constants.GGML_QUANT_SIZES)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    return GGML_QUANT_SIZES[GGMLQuantizationType[name]]


def _ggml_name(ggml_type: int) -> str:
    from gguf.constants import GGMLQuantizationType
    return GGMLQuantizationType(ggml_type).name


def gguf_quant_table(f) -> list[dict]:
    """Per tensor type in an open GGUF file (ops.models.gguf.open_gguf): tensors, weights and bytes (from the file's
    tensor table), block size and bytes per block (the spec constants), bits per weight, the block's fields."""
    by_type: dict[str, list] = {}
    for info in f.tensors.values():
        by_type.setdefault(_ggml_name(info.ggml_type), []).append(info)
    rows = []
    for name, infos in sorted(by_type.items(), key=lambda kv: -sum(i.nbytes for i in kv[1])):
        block, block_bytes = ggml_sizes(name)
        layout = GGUF_BLOCK_FIELDS.get(name)
        rows.append(dict(type=name, tensors=len(infos), weights=sum(math.prod(i.shape) for i in infos),
                         bytes=sum(i.nbytes for i in infos), block=block, block_bytes=block_bytes,
                         bits_per_weight=8 * block_bytes / block, sub_block=layout["sub"] if layout else None,
                         layout=" + ".join(f"{n} ({b} B)" for n, b in layout["fields"]) if layout else "",
                         examples=[i.name for i in infos[:3]]))
    return rows


def gguf_block_example(f, qtype: str = "Q8_0") -> dict | None:
    """The first block of the first `qtype` tensor in an open GGUF file, decoded by hand from its bytes (Q8_0:
    w = d·q; Q5_0: q = low 4 bits | high bit << 4, w = d·(q − 16)) and by the gguf package; both must agree.
    None when the file has no tensor of that type."""
    import numpy as np
    from gguf import GGMLQuantizationType, dequantize
    info = next((i for i in f.tensors.values() if _ggml_name(i.ggml_type) == qtype), None)
    if info is None:
        return None
    raw = bytes(f.blob[info.offset:info.offset + ggml_sizes(qtype)[1]])
    d = float(np.frombuffer(raw[:2], dtype=np.float16)[0])
    if qtype == "Q8_0":
        q = np.frombuffer(raw[2:34], dtype=np.int8).astype(np.int64)
    elif qtype == "Q5_0":
        qh = int.from_bytes(raw[2:6], "little")                        # bit j: the 5th bit of weight j
        qs = np.frombuffer(raw[6:22], dtype=np.uint8).astype(np.int64)  # weight j: low nibble, j + 16: high
        high = np.array([(qh >> j) & 1 for j in range(32)])
        q = (np.concatenate([qs & 0x0F, qs >> 4]) | (high << 4)) - 16
    else:
        raise InputError(f"no hand decoder for {qtype} (Q8_0 and Q5_0 are decoded here)")
    by_hand = d * q
    ref = dequantize(np.frombuffer(raw, dtype=np.uint8)[None], GGMLQuantizationType[qtype]).reshape(-1)
    return dict(tensor=info.name, type=qtype, d=d, q=q.tolist(), w=by_hand.tolist(),
                max_diff=float(np.abs(by_hand - ref).max()), nbytes=len(raw))


def gguf_report(path) -> dict:
    """The quantisation table of a GGUF file and a hand-decoded block of each simple type it holds."""
    from ..models.gguf import open_gguf
    f = open_gguf(path)
    return dict(path=str(path), tensors=len(f.tensors), file_bytes=len(f.blob), rows=gguf_quant_table(f),
                examples={q: e for q in ("Q8_0", "Q5_0") if (e := gguf_block_example(f, q)) is not None})


def gguf_checks(report: dict) -> list[Check]:
    """Each hand-decoded block against the gguf package's dequantize (llama.cpp's reference code): exact."""
    return [Check(f"{e['tensor']}, first {q} block: decoded by hand vs gguf.dequantize", e["max_diff"], 0.0,
                  f"{e['tensor']} 的第一个 {q} 块：手工解码 vs gguf.dequantize") for q, e in report["examples"].items()]


REPORT_FILE = "gguf_report.json"      # beside the bundled model's cache: the report, under the file's sha256
_report_lock = threading.Lock()       # the page and the load-time job may ask at once: one assembles, one waits


@lru_cache(maxsize=1)
def bundled_gguf_report() -> dict:
    """gguf_report of the bundled model's GGUF file, read once per process and made once per machine. The file is
    491 MB and the prepared cache does not keep it (ops/models/bundled.py), so the report is kept instead, beside the
    cache, under the file's sha256: the parts are assembled (and verified) for it at most once, and when the file
    was not on disk before, it is removed again afterwards."""
    from ..models import bundled
    with _report_lock:
        return _bundled_report(bundled)


def _bundled_report(bundled) -> dict:
    kept = bundled.bundled_dir() / REPORT_FILE
    try:
        saved = json.loads(kept.read_text())
        if saved.get("sha256") == bundled.BUNDLED_SHA256:
            return saved["report"]
    except (OSError, ValueError, KeyError):
        pass                                          # not made yet, or unreadable: make it again
    had_gguf = bundled.bundled_gguf_kept()
    report = gguf_report(bundled.bundled_gguf_path())
    bundled.write_atomic(kept, lambda p: p.write_text(json.dumps({"sha256": bundled.BUNDLED_SHA256, "report": report})))
    if not had_gguf:
        bundled.drop_bundled_gguf()
    return report


def group_quant(w: torch.Tensor, bits: int, group: int) -> torch.Tensor:
    """Symmetric weight-only quantisation with one scale per `group` consecutive weights of a row:
    s = max|w| / (2^(bits-1) - 1), q = round(w / s) clamped, returns q · s (what a kernel multiplies by)."""
    rows, cols = w.shape
    if cols % group:
        raise InputError(f"the row length {cols} is not a multiple of the group size {group}")
    g = w.float().reshape(rows, cols // group, group)
    qmax = 2 ** (bits - 1) - 1
    scale = g.abs().amax(-1, keepdim=True).clamp_min(1e-12) / qmax
    return ((g / scale).round().clamp(-qmax - 1, qmax) * scale).reshape(rows, cols)


def group_quant_rows(model, name: str = "model.layers.0.self_attn.q_proj.weight",
                     schemes=((8, None), (8, 128), (4, 128), (4, 32))) -> list[dict]:
    """One live weight matrix of the loaded model quantised by each (bits, group) scheme (group None: one scale
    per row): bits per weight with an fp16 scale per group, and the relative error ‖w − ŵ‖ / ‖w‖."""
    w = model.w(name).float().cpu()
    rows = []
    for bits, group in schemes:
        g = group or w.shape[1]
        if w.shape[1] % g:                                          # a small model's rows may be shorter
            continue
        err = (group_quant(w, bits, g) - w).norm() / w.norm()
        rows.append(dict(weight=name, shape=list(w.shape), bits=bits, group=g, per_row=group is None,
                         bits_per_weight=bits + 16 / g, rel_err=float(err)))
    return rows


def kv_quant_rows(c: ModelConfig, tokens: int = 4096, gpu: str = "H200 141GB") -> list[dict]:
    """KV cache in bf16, int8 / FP8 (1 byte) and int4 (half a byte, as 4-bit KV kernels pack it), weights in bf16:
    bytes per token and how many `tokens`-token requests fit."""
    out = []
    for name, nbytes in (("bf16", 2), ("int8 / fp8", 1), ("int4", 0.5)):
        per_tok = int(costs.kv_bytes_per_token(c, 1) * nbytes)
        free = costs.GPUS[gpu]["mem_gb"] * 1e9 - costs.weight_bytes(c, 16)
        out.append(dict(kv_dtype=name, bytes_per_token=per_tok, requests=max(0, int(free // (per_tok * tokens)))))
    return out


def float_formats() -> list[dict]:
    """bf16 and the two FP8 formats (E4M3 for weights/activations, E5M2 for gradients), from torch.finfo."""
    rows = []
    for name, dt in (("bfloat16", torch.bfloat16), ("float8_e4m3fn", torch.float8_e4m3fn),
                     ("float8_e5m2", torch.float8_e5m2)):
        fi = torch.finfo(dt)
        rows.append(dict(dtype=name, bits=fi.bits, mantissa_bits=round(-math.log2(fi.eps)), max=fi.max,
                         smallest_normal=fi.smallest_normal, rel_step=fi.eps))
    return rows


# ---- low-bit floats with block scales (FP8, MXFP4, NVFP4) ---------------------------------------------------------
def e2m1_values() -> list[float]:
    """The non-negative values of FP4 E2M1 from its bits: 2 exponent bits (bias 1, exponent 0 subnormal), 1
    mantissa bit; the sign bit mirrors them."""
    out = []
    for e in range(4):
        for m in range(2):
            out.append(m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1))
    return out


# element bits, elements per block scale, block scale bits, per-tensor scale bits
LOW_BIT = {"FP8 E4M3 / E5M2": (8, None, 0, 32), "MXFP8 (E4M3)": (8, 32, 8, 0), "MXFP4 (E2M1)": (4, 32, 8, 0),
           "NVFP4 (E2M1)": (4, 16, 8, 32)}


def low_bit_bits(elem: int, block: int | None, scale_bits: int) -> float:
    """Bits per weight of a block-scaled format: elem + scale_bits / block (a per-tensor scale adds 32 bits per
    tensor, nothing per weight worth counting)."""
    return elem + (scale_bits / block if block else 0)


def group_weight_bytes(c: ModelConfig, bits: int, group: int, scale_bits: int = 16) -> int:
    """Weights of `c` at `bits` per weight plus one `scale_bits` scale per `group` weights (zero points not
    counted): total_params · (bits + scale_bits / group) / 8, the same count low_bit_rows makes."""
    return int(costs.total_params(c) * low_bit_bits(bits, group, scale_bits) / 8)


def low_bit_rows(c: ModelConfig) -> list[dict]:
    """Each format's bits per weight and the weight bytes of `c` stored in it, beside bf16."""
    n = costs.total_params(c)
    rows = [dict(format="bf16", elem=16, block=None, scale_bits=0, tensor_bits=0, bits=16.0, bytes=n * 2)]
    for name, (elem, block, sb, tb) in LOW_BIT.items():
        b = low_bit_bits(elem, block, sb)
        rows.append(dict(format=name, elem=elem, block=block, scale_bits=sb, tensor_bits=tb, bits=b, bytes=n * b / 8))
    return rows
