"""The words around ops/arith/costs.py's numbers, in both languages: operator names, FLOPs formulas, the notes of
each page's "At scale" section and the GPUs' sources. ops/ stays free of translations; the pages ask here.
Never imports streamlit."""
from __future__ import annotations

# operator rows of costs.param_table / costs.flops: English as ops/arith/costs.py names them -> Chinese
OPERATORS_ZH = {
    "embedding": "嵌入",
    "rmsnorm (2 per layer + final)": "RMSNorm（每层 2 个 + 最终 1 个）",
    "attention q_proj": "注意力 q_proj",
    "attention k_proj": "注意力 k_proj",
    "attention v_proj": "注意力 v_proj",
    "attention o_proj": "注意力 o_proj",
    "attention q_norm/k_norm": "注意力 q_norm/k_norm",
    "attention k_proj + v_proj": "注意力 k_proj + v_proj",
    "attention RoPE": "注意力 RoPE",
    "attention scores QK^T": "注意力分数 QKᵀ",
    "attention softmax": "注意力 softmax",
    "attention context PV": "注意力加权求和 PV",
    "residual adds": "残差相加",
    "mlp (SwiGLU)": "MLP（SwiGLU）",
    "mlp gate+up+down": "MLP：gate_proj、up_proj、down_proj 三次矩阵乘",
    "mlp SiLU·up": "MLP：SiLU(gate)·up",
    "moe router": "MoE 路由器",
    "moe experts": "MoE 专家",
    "moe experts (active only)": "MoE 专家（只算激活的）",
    "moe shared expert": "MoE 共享专家",
}

# the formula column of costs.flops: a formula made only of symbols needs no translation and is not listed
FORMULAS_ZH = {
    "~4·T·H each: square, mean, rsqrt-scale, weight": "每个约 4·T·H：平方、求均值、乘 rsqrt、乘权重",
    "~3 per element of q and k": "q、k 每个元素约 3 次",
    "~5 per score (max, sub, exp, sum, div)": "每个分数约 5 次（求最大、相减、exp、求和、相除）",
    "2 adds of T·H per layer": "每层 2 次加法，各 T·H 个元素",
    "~5 per element": "每个元素约 5 次",
    "2·T·H·V (all positions in prefill)": "2·T·H·V（预填充时每个位置都算）",
    "3 × 2·T·H·Is + gate 2·T·H": "3 × 2·T·H·Is + 门控 2·T·H",
}

# the note under each stage's "At scale" numbers: (中文, English) str.format templates
AT_SCALE = {
    "embedding": ("按编号取行（gather）：只读出 T = B·S 行、每行 H 个数（不是整张 [V, H] 表），没有乘法。",
                  "A gather: T = B·S rows of H numbers read and copied (not the whole [V, H] table), "
                  "no multiplications."),
    "rmsnorm": ("每层 2 个 + 最终 1 个；FLOPs 按全部 {layers} 个计。",
                "2 per layer + 1 final; FLOPs for all {layers} of them."),
    "attention": ("分数 [B, nh, S, S] = {scores}；FLOPs 计入完整的 S×S（eager 注意力）；字节不含分数矩阵"
                  "（FlashAttention 不把它写进显存），含写入缓存的新 K、V。",
                  "Scores [B, nh, S, S] = {scores}; FLOPs count the full S×S (eager attention); bytes leave the "
                  "scores out (FlashAttention never stores them) and include the new K and V written to the cache."),
    "residual": ("每层两次逐元素相加，每次读两个张量、写一个。",
                 "Two element-wise adds per layer, each reading two tensors and writing one."),
    "mlp": ("gate 和 up 为 [B, S, I]，down_proj 再压回 H。",
            "gate and up are [B, S, I]; down_proj brings it back to H."),
    "moe": ("FLOPs 只算激活的 k 个专家；参数量算全部 E 个。",
            "FLOPs: only the k active experts; parameters: all E experts."),
    "lm_head": ("它自己的一张 [V, H] 矩阵。", "Its own [V, H] matrix."),
    "lm_head_tied": ("与嵌入共用同一张矩阵。", "Tied to the embedding: the same matrix."),
    "sampling": ("在 V 个分数上做 softmax：每个分数约 5 次运算；top-k、top-p 再对 V 个分数排序"
                 "（比较，不算 FLOPs），都很少。",
                 "softmax over V scores: about 5 operations per score; top-k and top-p add a sort of V scores "
                 "(comparisons, not FLOPs). Tiny."),
}

# where each GPU's figures come from (ops.arith.costs.GPUS[...]["note"] is the English): source, a remark on the
# peak, memory, and "约 " where the bandwidth is approximate
GPU_SOURCES_ZH = {
    "H200 141GB": ("NVIDIA H200 SXM 规格表", "", "HBM3e", ""),
    "A100 80GB": ("NVIDIA A100 80GB SXM 规格表", "", "HBM2e", "约 "),
    "RTX 4090 24GB": ("Ada 架构白皮书", "（fp32 累加）", "GDDR6X", ""),
}


def operator(name: str, lang: str) -> str:
    return OPERATORS_ZH.get(name, name) if lang == "zh" else name


def formula(text: str, lang: str) -> str:
    return FORMULAS_ZH.get(text, text) if lang == "zh" else text


def at_scale_note(stage: str, lang: str, **fields) -> str:
    zh, en = AT_SCALE[stage]
    return (zh if lang == "zh" else en).format(**fields)


def gpu_note(gpu: str, spec: dict, lang: str) -> str:
    """Where a GPU's figures come from; spec is ops.arith.costs.GPUS[gpu] (its numbers and English note)."""
    if lang != "zh" or gpu not in GPU_SOURCES_ZH:
        return spec["note"]
    source, remark, memory, approx = GPU_SOURCES_ZH[gpu]
    return f"{source}：稠密 bf16{remark} {spec['tflops_bf16']:g} TFLOP/s，{memory} {approx}{spec['tb_per_s']} TB/s"
