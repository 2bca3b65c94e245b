"""Shapes, parameters, FLOPs and bytes of a Qwen2-family model, from its config alone.

Dimension legend (as in the trace contract):
    B batch, S sequence (prompt length), T = tokens processed in this step
    H hidden, L layers, nh query heads, nkv KV heads, hd head dim, I dense MLP width
    V embedding rows, E routed experts, k experts per token, Im expert width, Is shared-expert width

Counting conventions (what the "At scale" sections show):
- A matmul [m, k] @ [k, n] costs 2*m*n*k FLOPs (one multiply + one add per term).
  Biases, norms, softmax, SiLU and residual adds are counted as small element-wise terms.
- Attention scores and the context matmul are counted over the FULL S x S score matrix of the
  prefill, because the eager path (and Operator Lab's trace) computes every score and then masks
  the upper triangle with -inf. A causal kernel (FlashAttention) skips about half of that work;
  `flops(..., causal_half=True)` gives that count instead.
- Prefill computes logits for all S positions, as the trace does (logits [B, S, V]); a server
  usually keeps only the last position's row.
- MoE: FLOPs count only the k active experts per token (+ router + shared expert). Bytes count
  the weights of every expert a step may touch: min(E, T*k) experts, an upper bound.
- Bytes are a simple roofline model: every weight read once per forward pass, each matmul's input
  and output activations read/written once, the KV cache written (prefill) or read (decode).
- GPU memory and the weights that must fit in it are decimal GB (1 GB = 1e9 bytes, gb()); KV caches and tensors
  are shown in binary units (1 GiB = 2**30 bytes, human(n, "B")). One quantity, one convention, one function.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

from ..engine.config import ModelConfig

ASSETS = Path(__file__).resolve().parents[2] / "assets"
CONFIG_DIR = ASSETS / "configs"
REF_LABEL = "Qwen2.5-32B-Instruct"

# Published spec-sheet figures (vendor data sheets), dense (no sparsity) bf16 tensor-core peak.
GPUS = {
    "H200 141GB": dict(mem_gb=141, tflops_bf16=989.0, tb_per_s=4.8,
                       note="NVIDIA H200 SXM data sheet: 989 TFLOP/s dense bf16, 4.8 TB/s HBM3e"),
    "A100 80GB": dict(mem_gb=80, tflops_bf16=312.0, tb_per_s=2.0,
                      note="NVIDIA A100 80GB SXM data sheet: 312 TFLOP/s dense bf16, ~2.0 TB/s HBM2e"),
    "RTX 4090 24GB": dict(mem_gb=24, tflops_bf16=165.2, tb_per_s=1.008,
                          note="Ada whitepaper: 165.2 TFLOP/s dense bf16 with fp32 accumulate, 1.008 TB/s GDDR6X"),
}
BITS = {"bf16": 16, "fp16": 16, "fp32": 32, "int8": 8, "int4": 4}


# ---- reference configs ---------------------------------------------------------------------
def load_config(path) -> ModelConfig:
    """One assets/configs/*.json (HF config.json field names + a "name" label) -> ModelConfig."""
    return ModelConfig.from_dict(json.loads(Path(path).read_text("utf-8")))


def reference_configs() -> dict[str, ModelConfig]:
    """Every bundled reference config, keyed by its label (e.g. "Qwen2.5-32B-Instruct")."""
    return {c.name: c for c in _reference_configs(CONFIG_DIR)}


@functools.cache
def _reference_configs(folder: Path) -> tuple[ModelConfig, ...]:
    """The files are read once per process: pages ask on every run (configs are frozen, so sharing them is safe)."""
    return tuple(load_config(p) for p in sorted(folder.glob("*.json")))


def reference_config(label: str = REF_LABEL) -> ModelConfig:
    return reference_configs()[label]


# ---- parameters ----------------------------------------------------------------------------
def _row(operator, tensors, layers=1, note=""):
    """tensors: [(hf_name, shape)]; params = layers * sum(prod(shape))."""
    per = sum(math.prod(s) for _, s in tensors)
    return dict(operator=operator, tensors=[n for n, _ in tensors], shapes=[list(s) for _, s in tensors],
                per_layer=per, layers=layers, params=per * layers, note=note)


def _layer_counts(c: ModelConfig) -> tuple[int, int]:
    """(number of MoE layers, number of dense-MLP layers)."""
    n_moe = sum(c.is_moe_layer(i) for i in range(c.num_hidden_layers))
    return n_moe, c.num_hidden_layers - n_moe


def _o_bias(c: ModelConfig) -> bool:
    # Qwen2 hard-codes bias on q/k/v only; llama/Qwen3's attention_bias covers o_proj as well
    return c.attention_bias and not c.model_type.startswith("qwen2")


def param_table(c: ModelConfig) -> list[dict]:
    """One row per operator: HF tensor names ({i} = layer, {e} = expert), shapes, params.

    Shapes are PyTorch Linear weights [out, in]. lm_head counts 0 when tied to embed_tokens.
    """
    H, L, hd, nh, nkv = c.hidden_size, c.num_hidden_layers, c.head_dim, c.num_attention_heads, c.num_key_value_heads
    p = "model.layers.{i}."
    b = c.attention_bias
    rows = [_row("embedding", [("model.embed_tokens.weight", (c.vocab_size, H))])]
    rows.append(_row("attn_norm", [(p + "input_layernorm.weight", (H,))], L))
    for name, out in (("q_proj", nh * hd), ("k_proj", nkv * hd), ("v_proj", nkv * hd)):
        t = [(p + f"self_attn.{name}.weight", (out, H))] + ([(p + f"self_attn.{name}.bias", (out,))] if b else [])
        rows.append(_row(f"attention {name}", t, L))
    o = [(p + "self_attn.o_proj.weight", (H, nh * hd))] + ([(p + "self_attn.o_proj.bias", (H,))] if _o_bias(c) else [])
    rows.append(_row("attention o_proj", o, L))
    if c.has_qk_norm:
        rows.append(_row("attention q_norm/k_norm", [(p + "self_attn.q_norm.weight", (hd,)),
                                                     (p + "self_attn.k_norm.weight", (hd,))], L))
    rows.append(_row("mlp_norm", [(p + "post_attention_layernorm.weight", (H,))], L))
    n_moe, n_dense = _layer_counts(c)
    if n_dense:
        I = c.intermediate_size
        rows.append(_row("mlp (SwiGLU)", [(p + "mlp.gate_proj.weight", (I, H)), (p + "mlp.up_proj.weight", (I, H)),
                                          (p + "mlp.down_proj.weight", (H, I))], n_dense))
    if n_moe:
        E, Im, Is = c.num_experts, c.moe_intermediate_size, c.shared_expert_intermediate_size
        rows.append(_row("moe router", [(p + "mlp.gate.weight", (E, H))], n_moe))
        rows.append(_row("moe experts", [(p + "mlp.experts.{e}.gate_proj.weight", (E, Im, H)),
                                         (p + "mlp.experts.{e}.up_proj.weight", (E, Im, H)),
                                         (p + "mlp.experts.{e}.down_proj.weight", (E, H, Im))], n_moe,
                         note=f"{E} experts per layer, shapes shown with a leading expert axis"))
        if Is:
            rows.append(_row("moe shared expert", [(p + "mlp.shared_expert.gate_proj.weight", (Is, H)),
                                                   (p + "mlp.shared_expert.up_proj.weight", (Is, H)),
                                                   (p + "mlp.shared_expert.down_proj.weight", (H, Is)),
                                                   (p + "mlp.shared_expert_gate.weight", (1, H))], n_moe))
    rows.append(_row("final_norm", [("model.norm.weight", (H,))]))
    head = _row("lm_head", [("lm_head.weight", (c.vocab_size, H))])
    if c.tie_word_embeddings:
        head.update(per_layer=0, params=0, note="tied: reuses model.embed_tokens.weight, no extra parameters")
    rows.append(head)
    return rows


def total_params(c: ModelConfig) -> int:
    """Sum of numel over every weight tensor, a tied lm_head counted once."""
    return sum(r["params"] for r in param_table(c))


def active_params(c: ModelConfig) -> int:
    """Parameters one token actually uses: routed experts count k of E. Equals total for dense models."""
    total = total_params(c)
    if not c.is_moe:
        return total
    n_moe, _ = _layer_counts(c)
    unused = (c.num_experts - c.num_experts_per_tok) * 3 * c.hidden_size * c.moe_intermediate_size
    return total - n_moe * unused


# ---- FLOPs ---------------------------------------------------------------------------------
def matmul_flops(m: int, n: int, k: int) -> int:
    """[m, k] @ [k, n]: m*n dot products of length k, each k multiplies + k adds = 2*m*n*k."""
    return 2 * m * n * k


def _tokens(B, S, phase, context):
    """(T query tokens this step, Skv keys each query may see)."""
    if phase == "prefill":
        return B * S, S
    if phase == "decode":
        return B, (context if context is not None else S) + 1
    raise ValueError(f"phase must be 'prefill' or 'decode', got {phase!r}")


def _f(operator, flops, formula, layers=1):
    return dict(operator=operator, per_layer=flops, layers=layers, flops=flops * layers, formula=formula)


def flops(c: ModelConfig, B: int, S: int, phase: str = "prefill", context: int | None = None,
          causal_half: bool = False) -> list[dict]:
    """FLOPs per operator for one forward step.

    prefill: T = B*S tokens, each query sees Skv = S keys (full S x S counted, see module doc).
    decode:  T = B new tokens, each sees Skv = context + 1 keys (context defaults to S, the cached tokens).
    """
    T, Skv = _tokens(B, S, phase, context)
    H, L, hd, nh, nkv, V = (c.hidden_size, c.num_hidden_layers, c.head_dim, c.num_attention_heads,
                            c.num_key_value_heads, c.vocab_size)
    pairs = T * Skv
    if causal_half and phase == "prefill":
        pairs = B * S * (S + 1) // 2
    n_moe, n_dense = _layer_counts(c)
    rows = [
        _f("rmsnorm (2 per layer + final)", 4 * T * H * (2 * L + 1), "~4·T·H each: square, mean, rsqrt-scale, weight"),
        _f("attention q_proj", matmul_flops(T, nh * hd, H), "2·T·H·(nh·hd)", L),
        _f("attention k_proj + v_proj", 2 * matmul_flops(T, nkv * hd, H), "2 × 2·T·H·(nkv·hd)", L),
        _f("attention RoPE", 3 * T * (nh + nkv) * hd, "~3 per element of q and k", L),
        _f("attention scores QK^T", 2 * B * nh * hd * (pairs // B), "2·B·nh·Sq·Skv·hd", L),
        _f("attention softmax", 5 * nh * pairs, "~5 per score (max, sub, exp, sum, div)", L),
        _f("attention context PV", 2 * B * nh * hd * (pairs // B), "2·B·nh·Sq·Skv·hd", L),
        _f("attention o_proj", matmul_flops(T, H, nh * hd), "2·T·(nh·hd)·H", L),
        _f("residual adds", 2 * T * H, "2 adds of T·H per layer", L),
    ]
    if n_dense:
        I = c.intermediate_size
        rows.append(_f("mlp gate+up+down", 3 * matmul_flops(T, I, H), "3 × 2·T·H·I", n_dense))
        rows.append(_f("mlp SiLU·up", 5 * T * I, "~5 per element", n_dense))
    if n_moe:
        E, k, Im, Is = c.num_experts, c.num_experts_per_tok, c.moe_intermediate_size, c.shared_expert_intermediate_size
        rows.append(_f("moe router", matmul_flops(T, E, H), "2·T·H·E", n_moe))
        rows.append(_f("moe experts (active only)", k * 3 * matmul_flops(T, Im, H), "k × 3 × 2·T·H·Im", n_moe))
        if Is:
            rows.append(_f("moe shared expert", 3 * matmul_flops(T, Is, H) + matmul_flops(T, 1, H),
                           "3 × 2·T·H·Is + gate 2·T·H", n_moe))
    rows.append(_f("lm_head", matmul_flops(T, V, H), "2·T·H·V (all positions in prefill)"))
    return rows


def total_flops(c: ModelConfig, B: int, S: int, phase: str = "prefill", context: int | None = None) -> int:
    return sum(r["flops"] for r in flops(c, B, S, phase, context))


# ---- bytes ---------------------------------------------------------------------------------
def _bits(bits) -> int:
    return BITS[bits] if isinstance(bits, str) else int(bits)


def kv_bytes_per_token(c: ModelConfig, dtype_bytes: int = 2) -> int:
    """K and V for every layer, one token: 2 · L · nkv · hd · dtype_bytes (the KV cache's only formula)."""
    return 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * dtype_bytes


def kv_cache_bytes(c: ModelConfig, tokens: int, dtype_bytes: int = 2) -> int:
    """kv_bytes_per_token times tokens (all sequences together); ops.engine.model.KVCache.nbytes counts with it."""
    return kv_bytes_per_token(c, dtype_bytes) * tokens


def gqa_saving(c: ModelConfig, context: int = 32768) -> dict:
    """The bf16 KV cache per token of `c` as it is (GQA) and as it would be with one KV head per query head
    (MHA), and the same for the reference model per token and over `context` tokens (the Attention page)."""
    ref = reference_config()
    ref_ctx = kv_cache_bytes(ref, context, 2)
    return dict(tok=kv_cache_bytes(c, 1, 2), tok_mha=kv_cache_bytes(c, 1, 2) * c.n_rep, ref=ref,
                ref_tok=kv_cache_bytes(ref, 1, 2), ref_ctx=ref_ctx, ref_ctx_mha=ref_ctx * ref.n_rep)


def weight_bytes(c: ModelConfig, bits=16) -> int:
    """total_params · bits / 8 (bits 16/8/4 or 'bf16'/'int8'/'int4'); quantisation scales not counted."""
    return total_params(c) * _bits(bits) // 8


def _touched_weight_params(c: ModelConfig, T: int) -> int:
    """Weights one forward step reads: all dense weights + min(E, T·k) experts per MoE layer."""
    total = total_params(c)
    if not c.is_moe:
        return total
    n_moe, _ = _layer_counts(c)
    idle = max(0, c.num_experts - T * c.num_experts_per_tok)
    return total - n_moe * idle * 3 * c.hidden_size * c.moe_intermediate_size


def step_bytes(c: ModelConfig, B: int, S: int, phase: str = "prefill", context: int | None = None,
               bits=16, act_bytes: int = 2) -> dict:
    """Bytes moved by one forward step: weights read + KV cache traffic + activations (roofline model)."""
    T, Skv = _tokens(B, S, phase, context)
    w = _touched_weight_params(c, T) * _bits(bits) // 8
    kv_new = kv_cache_bytes(c, T, act_bytes)
    kv_read = kv_cache_bytes(c, B * (Skv - 1), act_bytes) if phase == "decode" else 0
    H, I = c.hidden_size, (c.moe_intermediate_size * c.num_experts_per_tok if c.is_moe else c.intermediate_size)
    per_layer_act = T * (12 * H + 3 * I) * act_bytes  # in/out of every projection, roughly
    act = c.num_hidden_layers * per_layer_act + T * c.vocab_size * act_bytes
    return dict(weights=w, kv_write=kv_new, kv_read=kv_read, activations=act, total=w + kv_new + kv_read + act)


def activation_peak_bytes(c: ModelConfig, B: int, S: int) -> int:
    """Largest eager-prefill temporaries: one layer's fp32 scores [B, nh, S, S] + fp32 logits [B, S, V]."""
    return 4 * B * c.num_attention_heads * S * S + 4 * B * S * c.vocab_size


def fits(c: ModelConfig, B: int, S: int, gpu_gb: float, bits=16, kv_dtype_bytes: int = 2,
         eager_attention: bool = False) -> dict:
    """Does weights + KV cache for B·S tokens (+ eager temporaries if asked) fit in gpu_gb (1e9 bytes)?"""
    need = dict(weights=weight_bytes(c, bits), kv_cache=kv_cache_bytes(c, B * S, kv_dtype_bytes))
    if eager_attention:
        need["activations"] = activation_peak_bytes(c, B, S)
    total = sum(need.values())
    return dict(need, total=total, gpu_bytes=int(gpu_gb * 1e9), fits=total <= gpu_gb * 1e9,
                headroom=int(gpu_gb * 1e9) - total)


def max_tokens_in_cache(c: ModelConfig, gpu_gb: float, bits=16, kv_dtype_bytes: int = 2) -> int:
    """How many tokens of KV cache fit beside the weights (0 if the weights alone do not fit)."""
    free = gpu_gb * 1e9 - weight_bytes(c, bits)
    return max(0, int(free // kv_cache_bytes(c, 1, kv_dtype_bytes)))


# ---- roofline ------------------------------------------------------------------------------
def arithmetic_intensity(c: ModelConfig, B: int, S: int, phase: str = "prefill",
                         context: int | None = None, bits=16) -> float:
    """FLOPs per byte moved for one step: total_flops / step_bytes['total']."""
    return total_flops(c, B, S, phase, context) / step_bytes(c, B, S, phase, context, bits)["total"]


def roofline(c: ModelConfig, B: int, S: int, phase: str = "prefill", gpu: str = "H200 141GB",
             context: int | None = None, bits=16) -> dict:
    """Lower-bound time of one step on a GPU: max(FLOPs / peak, bytes / bandwidth).

    ridge = peak / bandwidth (FLOP/byte); below it a step is memory-bound, above compute-bound.
    """
    g = GPUS[gpu]
    fl = total_flops(c, B, S, phase, context)
    by = step_bytes(c, B, S, phase, context, bits)["total"]
    peak, bw = g["tflops_bf16"] * 1e12, g["tb_per_s"] * 1e12
    t_compute, t_memory = fl / peak, by / bw
    return dict(gpu=gpu, flops=fl, bytes=by, intensity=fl / by, ridge=peak / bw,
                bound="compute" if t_compute >= t_memory else "memory",
                t_compute_s=t_compute, t_memory_s=t_memory, time_s=max(t_compute, t_memory),
                spec=g["note"] + " (published spec figures, not measured here)")


def prefill_crossover(c: ModelConfig, B: int, gpu: str = "H200 141GB", max_log2: int = 17) -> int | None:
    """The smallest power-of-two S at which a batch of B prefills is compute-bound on gpu (None: none up to
    2**max_log2)."""
    return next((S for S in (2 ** k for k in range(max_log2 + 1)) if roofline(c, B, S, "prefill", gpu=gpu)["bound"]
                 == "compute"), None)


# ---- one stage, for a page's "At scale" section --------------------------------------------
def _shape(*dims):
    return list(dims)


def operator_costs(c: ModelConfig, stage: str, B: int, S: int, bits=16) -> dict:
    """Shapes, parameters, FLOPs and bytes of one stage at (B, S), prefill (T = B·S tokens).

    Per-layer stages report one layer (`layers` says how many) and `total_*` across all of them.
    Bytes: the weights the stage reads (a gather reads only its T rows of H, never the whole [V, H] table) + its
    input read and output written once, bf16 (token ids as int64); a residual add reads two tensors and writes one;
    attention also writes the new tokens' K and V to the cache. A stage the model does not have comes back with
    applies=False. tests/unit/test_costs_by_hand.py counts every stage by hand.
    """
    H, V, L = c.hidden_size, c.vocab_size, c.num_hidden_layers
    T, by = B * S, _bits(bits) // 8
    table = {r["operator"]: r for r in param_table(c)}
    fl = {r["operator"]: r for r in flops(c, B, S, "prefill")}
    n_moe, n_dense = _layer_counts(c)

    def pick(prefix, src):
        return [r for k, r in src.items() if k.startswith(prefix)]

    norms = pick("attn_norm", table) + pick("mlp_norm", table) + pick("final_norm", table)
    spec = {   # stage: (input shape, output shape, parameter rows, FLOP rows, times per forward pass)
        "embedding": (_shape(B, S), _shape(B, S, H), pick("embedding", table), [], 1),
        "rmsnorm": (_shape(B, S, H), _shape(B, S, H), norms, pick("rmsnorm", fl), 2 * L + 1),
        "attention": (_shape(B, S, H), _shape(B, S, H), pick("attention", table), pick("attention", fl), L),
        "residual": (_shape(B, S, H), _shape(B, S, H), [], pick("residual", fl), L),
        "mlp": (_shape(B, S, H), _shape(B, S, H), pick("mlp (", table), pick("mlp ", fl), n_dense),
        "moe": (_shape(B, S, H), _shape(B, S, H), pick("moe", table), pick("moe", fl), n_moe),
        "lm_head": (_shape(B, S, H), _shape(B, S, V), pick("lm_head", table), pick("lm_head", fl), 1),
        "sampling": (_shape(B, V), _shape(B, 1), [], [], 1),
    }
    if stage not in spec:
        raise KeyError(f"unknown stage {stage!r}; one of {', '.join(spec)}")
    in_s, out_s, prow, frow, layers = spec[stage]
    params = sum(r["params"] for r in prow)
    f_total = 5 * B * V if stage == "sampling" else sum(r["flops"] for r in frow)   # softmax: ~5 per logit
    wbytes = params * by
    act_bytes = 2 * (math.prod(in_s) + math.prod(out_s)) * layers
    if stage == "embedding":                 # the gather reads T rows, and the ids are int64
        wbytes, act_bytes = T * H * by, 8 * T + 2 * T * H
    elif stage == "residual":                # x + f(x): two tensors read, one written, twice per layer
        act_bytes = 2 * 3 * T * H * 2 * layers
    elif stage == "attention":
        act_bytes += kv_cache_bytes(c, T, 2)
    elif stage == "moe" and n_moe:
        wbytes = (params - n_moe * max(0, c.num_experts - T * c.num_experts_per_tok) * 3 * H
                  * c.moe_intermediate_size) * by
    return dict(stage=stage, applies=layers > 0, input_shape=in_s, output_shape=out_s, layers=layers,
                params=params, params_per_layer=params // layers if layers else 0,
                tensors=[(n, s) for r in prow for n, s in zip(r["tensors"], r["shapes"])],
                flops=f_total, flops_per_layer=f_total // layers if layers else 0,
                weight_bytes=wbytes, activation_bytes=act_bytes, bytes=wbytes + act_bytes)


# ---- formatting ----------------------------------------------------------------------------
def gb(n: float) -> str:
    """Decimal gigabytes, as GPU memory is quoted (141 GB = 141e9 bytes): weights and what must fit beside them.
    Sizes of caches and tensors go through human(n, "B") in binary units (GiB = 2**30 bytes)."""
    return f"{n / 1e9:.1f} GB"


def human(n: float, unit: str = "") -> str:
    """12_345_678_901 -> '12.35 B'; bytes (unit='B') in binary units: 1073741824 -> '1.00 GiB'."""
    if unit == "B":
        for u, d in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
            if abs(n) >= d:
                return f"{n / d:.2f} {u}"
        return f"{int(n)} B"
    for u, d in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(n) >= d:
            return f"{n / d:.2f} {u}{unit}"
    return f"{n:g} {unit}".rstrip()
