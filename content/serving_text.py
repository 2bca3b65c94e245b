"""The serving chapter's tables and captions: rows with column names in either language, and (zh, en) caption
templates filled with texts.numbers() and the page's own live values. The examples and placeholders are
content/serving_numbers.py's. Never imports streamlit.
"""
from __future__ import annotations

from content.template import fill
from ops.arith import costs, formats, serving_math as ops_sv
from ops.engine.config import ModelConfig
from ops.lab import online_softmax, phases

from .serving_numbers import (
    DECODE_CONTEXT,
    DRAFT_LABEL,
    EXAMPLE,
    PHASE_LENGTHS,
    PREFIX,
    REQUEST_TOKENS,
    SIM,
    SWA_WINDOW,
    TRAFFIC_LENGTHS,
    _b,
    _flops,
    _gb,
    _pct,
)


# ---- the page's tables: rows with column names in the page's language --------------------------------------
def t_(lang: str, zh: str, en: str) -> str:
    return zh if lang == "zh" else en


def _row(lang: str, *cols) -> dict:
    """cols: (zh name, en name, value) -> {name in lang: value as text} (a table column holds one type)."""
    return {(zh if lang == "zh" else en): str(v) for zh, en, v in cols}


def _bound(lang: str, bound: str) -> str:
    return {"memory": "显存带宽", "compute": "算力"}[bound] if lang == "zh" else bound


def online_table(view: dict, lang: str) -> list[dict]:
    return [_row(lang, ("块", "block", r["block"]), ("键", "keys", r["keys"]), ("块内最大", "block max",
                                                                              f"{r['block_max']:.3f}"),
                 ("m", "m", f"{r['m']:.3f}"), ("α", "α", f"{r['alpha']:.3f}"), ("l", "l", f"{r['l']:.3f}"),
                 ("离最终结果", "to final", f"{r['dist']:.1e}")) for r in view["rows"]]


def small_table(rows: list[dict], lang: str) -> list[dict]:
    return [_row(lang, ("块", "block", r["block"]), ("这一块的分数", "scores in block", r["keys"]),
                 ("块内最大", "block max", f"{r['block_max']:g}"), ("m", "m", f"{r['m']:g}"),
                 ("α = e^(m旧−m新)", "α = e^(m_old−m_new)", f"{r['alpha']:.4f}"), ("l", "l", f"{r['l']:.4f}"),
                 ("目前的概率", "probabilities so far", ", ".join(f"{p:.3f}" for p in r["probs"]))) for r in rows]


def traffic_table(ref: ModelConfig, lang: str, lengths=TRAFFIC_LENGTHS) -> list[dict]:
    out = []
    for S in lengths:
        r = online_softmax.score_traffic(ref, S)
        out.append(_row(lang, ("S", "S", f"{S:,}"), ("一个头的 S×S (bf16)", "one head's S×S (bf16)", _b(r["matrix"])),
                        ("朴素实现读写 S×S（全部头和层）", "eager S×S traffic (all heads, layers)",
                         _b(r["eager_matrix"])),
                        ("q/k/v/输出读写", "q/k/v/out traffic", _b(r["qkvo"])),
                        ("朴素 (H200, ms)", "eager (H200, ms)", f"{r['eager_ms']:,.1f}"),
                        ("FlashAttention (H200, ms)", "FlashAttention (H200, ms)", f"{r['flash_ms']:,.1f}")))
    return out


def kv_table(ref: ModelConfig, lang: str, tokens: int = REQUEST_TOKENS) -> list[dict]:
    out = []
    for g in ops_sv.SERVING_GPUS:
        r = ops_sv.concurrent_requests(ref, g, tokens)
        out.append(_row(lang, ("GPU", "GPU", g), ("bf16 权重", "bf16 weights", _gb(r["weights"])), ("剩余", "left",
                                                                                                  _gb(r["free"])),
                        (f"每个 {tokens:,} token 请求的 KV", f"KV per {tokens:,}-token request", _b(r["per_request"])),
                        ("能放下的 KV token", "KV tokens that fit", f"{r['cache_tokens']:,}"),
                        ("并发请求数（上限）", "concurrent requests (bound)", r["requests"])))
    return out


def paged_table(ref: ModelConfig, lang: str, lengths=(37, 1000, 4096, 4100)) -> list[dict]:
    p = ops_sv.paged_blocks(ref, list(lengths))
    return [_row(lang, ("请求 token 数", "request tokens", f"{r['tokens']:,}"), ("块数", "blocks", r["blocks"]),
                 ("分页占用", "paged", _b(r["paged"])), ("分页浪费 token", "paged waste (tokens)", r["paged_waste"]),
                 (f"按 {p['reserve']:,} 预留", f"reserved for {p['reserve']:,}", _b(r["reserved"])),
                 ("预留浪费 token", "reserved waste (tokens)", f"{r['reserved_waste']:,}")) for r in p["rows"]]


def batching_table(lang: str, slots=(4, 8, 16)) -> list[dict]:
    lengths = ops_sv.output_lengths(SIM["n"], 0, SIM["lo"], SIM["hi"])
    out = []
    for s in slots:
        r = ops_sv.batching(lengths, s)
        out.append(_row(lang, ("槽位", "slots", s), ("静态批：步数", "static: steps", f"{r['static_steps']:,}"),
                        ("静态批：利用率", "static: busy", f"{_pct(r['static_util'])}%"),
                        ("连续批：步数", "continuous: steps", f"{r['continuous_steps']:,}"),
                        ("连续批：利用率", "continuous: busy", f"{_pct(r['continuous_util'])}%")))
    return out


def prefix_table(ref: ModelConfig, lang: str, system_tokens: int, requests: int = PREFIX["requests"]) -> list[dict]:
    out = []
    for label_zh, label_en, n in (("本模型的默认系统提示", "this model's default system prompt", system_tokens),
                                  ("长系统提示", "a long system prompt", PREFIX["tokens"])):
        r = ops_sv.prefix_caching(ref, n, requests)
        out.append(_row(lang, ("共享前缀", "shared prefix", t_(lang, label_zh, label_en)), ("token 数", "tokens",
                                                                                        f"{n:,}"),
                        ("可共享（整块）", "shareable (whole blocks)", f"{r['shared']:,}"),
                        (f"{requests} 个请求省下的 KV", f"KV saved over {requests} requests", _b(r["kv_saved"])),
                        ("省下的预填充 FLOPs", "prefill FLOPs saved",
                         _flops(r["flops_saved"]))))
    return out


# The block fields of ops.arith.formats.GGUF_BLOCK_FIELDS in Chinese (without the C struct's field names).
FIELDS_ZH = {"float32 value": "float32 数值", "float16 value": "float16 数值", "bfloat16 value": "bfloat16 数值",
             "d: fp16 scale": "fp16 缩放 d", "m: fp16 min": "fp16 最小值 m", "qs: 32 × int8": "32 × int8",
             "qs: 32 × 4 bits": "32 × 4 位", "qh: 32 high bits": "32 个第 5 位", "qs: 32 × low 4 bits": "32 × 低 4 位",
             "d: fp16 super-scale": "fp16 超块缩放 d", "dmin: fp16 super-min": "fp16 超块最小值",
             "scales: 8 × (6-bit scale + 6-bit min)": "8 × (6 位缩放 + 6 位最小值)", "qs: 256 × 4 bits": "256 × 4 位",
             "qh: 256 high bits": "256 个第 5 位", "qs: 256 × low 4 bits": "256 × 低 4 位",
             "ql: 256 × low 4 bits": "256 × 低 4 位", "qh: 256 × high 2 bits": "256 × 高 2 位",
             "scales: 16 × int8": "16 × int8 缩放"}


def block_layout(qtype: str, lang: str) -> str:
    """One block's fields and their bytes: 'd: fp16 scale (2 B) + ...' in the page's language."""
    layout = formats.GGUF_BLOCK_FIELDS.get(qtype)
    if layout is None:
        return ""
    return " + ".join(f"{FIELDS_ZH.get(n, n) if lang == 'zh' else n} ({b} B)" for n, b in layout["fields"])


def gguf_table(report: dict, lang: str) -> list[dict]:
    return [_row(lang, ("类型", "type", r["type"]), ("张量数", "tensors", r["tensors"]), ("权重数", "weights",
                                                                                     f"{r['weights']:,}"),
                 ("字节", "bytes", _b(r["bytes"])), ("块大小", "block", r["block"]), ("每块字节", "bytes/block",
                                                                                 r["block_bytes"]),
                 ("每权重位数", "bits/weight", f"{r['bits_per_weight']:g}"), ("一个缩放管几个数", "weights per scale",
                                                                         r["sub_block"]),
                 ("块的布局", "block layout", block_layout(r["type"], lang))) for r in report["rows"]]


def block_table(example: dict, lang: str) -> list[dict]:
    return [_row(lang, ("j", "j", j), ("整数 q", "integer q", q), ("d·q", "d·q", f"{w:.6f}"))
            for j, (q, w) in enumerate(zip(example["q"], example["w"]))]


def group_table(rows: list[dict], lang: str) -> list[dict]:
    return [_row(lang, ("位数", "bits", r["bits"]), ("每组", "group", t_(lang, f"整行 {r['group']}",
                                                                     f"whole row ({r['group']})")
                                                    if r["per_row"] else r["group"]),
                 ("每权重位数（含 fp16 缩放）", "bits/weight (with fp16 scales)", f"{r['bits_per_weight']:.3f}"),
                 ("相对误差 ‖w−ŵ‖/‖w‖", "relative error ‖w−ŵ‖/‖w‖", f"{r['rel_err']:.4f}")) for r in rows]


def kv_quant_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("KV 格式", "KV format", r["kv_dtype"]), ("每 token 字节", "bytes per token",
                                                               f"{r['bytes_per_token']:,}"),
                 ("141 GB 上的 4k 请求", "4k requests on 141 GB", r["requests"])) for r in formats.kv_quant_rows(ref)]


def float_table(lang: str) -> list[dict]:
    return [_row(lang, ("格式", "format", r["dtype"]), ("位", "bits", r["bits"]), ("尾数位", "mantissa bits",
                                                                                r["mantissa_bits"]),
                 ("最大值", "max", f"{r['max']:.4g}"), ("最小正规数", "smallest normal", f"{r['smallest_normal']:.3g}"),
                 ("ε（1 之后的间隔）", "ε (gap above 1)", f"{r['rel_step']:g}")) for r in formats.float_formats()]


def spec_rows(ref: ModelConfig, lang: str) -> list[dict]:
    c = ops_sv.draft_cost_ratio(costs.reference_config(DRAFT_LABEL), ref)
    return [_row(lang, ("接受率 a", "acceptance a", f"{r['a']:g}"), ("草稿长度 k", "draft length k", r["k"]),
                 ("每次验证得到的 token E", "tokens per verification E", f"{r['expected']:.2f}"),
                 ("加速比", "speed-up", f"{r['speedup']:.2f}×")) for r in ops_sv.spec_table(c)]


def swa_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("上下文", "context", f"{r['context']:,}"), ("完整注意力 KV", "full attention KV",
                                                                 _b(r["full"])),
                 (f"窗口 {r['window']:,} 的 KV", f"window {r['window']:,} KV", _b(r["windowed"])))
            for r in ops_sv.sliding_window(ref, window=SWA_WINDOW)]


def variants_table(ref: ModelConfig, lang: str) -> list[dict]:
    mla = ops_sv.MLA_DEEPSEEK_V3
    names = dict(MHA=("每个查询头一组 K/V", "one K/V per query head"),
                 GQA=("一组查询头共享一组 K/V", "a group of query heads shares one K/V"),
                 MQA=("所有头共享一组 K/V", "every head shares one K/V"),
                 MLA=("DeepSeek-V3 的潜向量 {kv_lora_rank} + RoPE 键 {qk_rope_head_dim}".format(**mla),
                      "DeepSeek-V3's latent {kv_lora_rank} + RoPE key {qk_rope_head_dim}".format(**mla)))
    return [_row(lang, ("方案", "design", r["variant"]), ("说明", "what is cached", t_(lang, *names[r["variant"]])),
                 ("KV 头", "KV heads", r["kv_heads"] if r["kv_heads"] else "-"),
                 ("每 token 字节", "bytes per token", f"{r['bytes_per_token']:,}"), ("相对 MHA", "vs MHA",
                                                                                  f"{r['vs_mha']:.3f}"))
            for r in ops_sv.attention_variants(ref)]


def tp_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("TP 度", "TP degree", r["tp"]), ("可行", "works", "✓" if r["valid"] else "✗"),
                 ("每卡查询头", "query heads per GPU", f"{r['q_heads']:g}"), ("每卡 KV 头", "KV heads per GPU",
                                                                         r["kv_heads"]),
                 ("KV 头副本", "copies of each KV head", r["kv_copies"]), ("每卡权重", "weights per GPU",
                                                                        _gb(r["weights_per_gpu"])),
                 ("每卡每 token KV", "KV per token per GPU", _b(r["kv_per_token_per_gpu"])),
                 ("每卡能放的 KV token", "KV tokens per GPU", f"{r['tokens_per_gpu']:,}" if r["valid"] else "-"))
            for r in ops_sv.tensor_parallel(ref)]


def h200_table(ref: ModelConfig, lang: str) -> list[dict]:
    return [_row(lang, ("阶段", "phase", r["phase"]), ("S", "S", f"{r['S']:,}"),
                 ("算术强度 FLOP/B", "intensity FLOP/B", f"{r['intensity']:.1f}"), ("H200 拐点", "H200 ridge",
                                                                                f"{r['ridge']:.0f}"),
                 ("受限于", "bound by", _bound(lang, r["bound"])),
                 ("每 token 下限 (ms)", "bound per token (ms)", f"{r['ms_per_token']:.3f}"))
            for r in phases.h200_phases(ref, PHASE_LENGTHS, DECODE_CONTEXT)]


def measured_table(result: dict, lang: str) -> list[dict]:
    return [_row(lang, ("阶段", "phase", r["phase"]), ("S / 上下文", "S / context", r["S"]),
                 ("测得 ms/token", "measured ms/token", f"{r['ms_per_token']:.2f}"),
                 ("屋顶线预测 ms/token", "roofline ms/token", f"{r['predicted_ms_per_token']:.2f}"),
                 ("预测受限于", "predicted bound", _bound(lang, r["bound"]))) for r in result["rows"]]


def roofline_points(ref: ModelConfig) -> list[dict]:
    """The H200 phases of h200_table with a label each, for the roofline figure."""
    return [dict(r, label=f"{r['phase']} S={r['S']:,}") for r in phases.h200_phases(ref, PHASE_LENGTHS, DECODE_CONTEXT)]


# ---- the page's captions: (zh, en) templates filled with texts.numbers() and the page's own live values ----
MEASURE = dict(prefill=(8, 128), context=128, steps=8)     # what the "measure" button runs on the loaded model
CAPTIONS = {
    "online": ("第 {i} 层、第 {h} 个头、位置 {s} 的这一行查询：方块是它对每个键的分数，颜色区分块；红线是每块之后的累计"
               "最大值 m，"
               "绿点是累计和 l。某块带来更大的分数时，α < 1 会把之前的和缩小。最后一块得到的结果与朴素的 softmax·V 一致"
               "：最大 |差| = {max_diff}。",
               "The query of layer {i}, head {h}, position {s}: the squares are its scores for every key, coloured by "
               "block; the red "
               "line is the running max m after each block, the green dots the running sum l. When a block brings a "
               "larger "
               "score, α < 1 shrinks what was summed so far. After the last block the answer equals eager softmax·V: "
               "max |diff| = {max_diff}."),
    "traffic": ("Qwen2.5-32B 在 bf16 下的一次预填充，B = 1，按朴素实现计算完整的 S×S；时间按 H200 的 {sv_bw_h200} TB/s"
                "（公开规格）。"
                "FlashAttention 还会为每个查询块重读一次 k 和 v，这个下限没有算进去。",
                "One prefill of Qwen2.5-32B in bf16, B = 1, the full S×S as the eager path computes it; times at the "
                "H200's "
                "{sv_bw_h200} TB/s (published figure). FlashAttention also re-reads k and v once per query block, "
                "which this lower bound leaves out."),
    "kv": ("权重：Qwen2.5-32B 全部参数的 bf16（{weights_bf16_gb_32b} GB）；KV cache 用 bf16，每 "
           "token {kv_bytes_per_token_32b} 字节。"
           "显存按十进制 GB。没算激活和框架开销：实际能放的更少。",
           "Weights: every parameter of Qwen2.5-32B in bf16 ({weights_bf16_gb_32b} GB); KV cache in bf16, "
           "{kv_bytes_per_token_32b} bytes per token. GPU memory in decimal GB. Activations and framework overhead are "
           "not "
           "counted: a real server fits fewer."),
    "paged": ("每块 {sv_block} 个 token；请求的最后一块没装满（浪费少于 {sv_block} 个 token）。若为每个请求预留模型的整"
              "个上下文"
              "（{sv_reserve_tokens} 个 token），剩下的全是浪费。",
              "Blocks of {sv_block} tokens; a request's last block is partly empty (fewer than {sv_block} tokens "
              "wasted). "
              "Reserving the model's whole context ({sv_reserve_tokens} tokens) per request wastes all the rest."),
    "batching": ("{sv_sim_n} 个回答，长度分布在 {sv_sim_lo} 到 {sv_sim_hi} 个 token 之间（固定随机种子）。静态批：每批"
                 "跑到其中最长的回答结束；"
                 "连续批：回答一结束，下一步就有新请求补上它的槽位。忙碌 = 有用的 token 步数 /（步数 × 槽位）。",
                 "{sv_sim_n} answers with lengths spread between {sv_sim_lo} and {sv_sim_hi} tokens (fixed seed). "
                 "Static: each "
                 "batch runs until its longest answer ends. Continuous: a finished answer's slot is refilled at the "
                 "next step. "
                 "Busy = useful token-steps / (steps × slots)."),
    "prefix": ("已加载模型自己的默认系统提示（{sys} 个 token，用它的分词器数出）对比一段长系统提示；只有满 {sv_block} "
               "个 token 的整块才能共享，"
               "所以短提示能共享的很少。FLOPs：共享部分的预填充只算一次，而不是每个请求一次（按 Qwen2.5-32B，只算各层："
               "前缀上不需要 LM head）。",
               "The loaded model's own default system prompt ({sys} tokens, counted with its tokenizer) against a long "
               "one; only "
               "whole blocks of {sv_block} tokens are shared, so a short prompt shares little. FLOPs: the prefill of "
               "the shared "
               "part, done once instead of once per request (Qwen2.5-32B, the layers only: no LM head runs on a "
               "prefix)."),
    "gguf": ("从内置文件读出（{tensors} 个张量，{file}）：类型和数量来自它的张量表，块大小和每块字节来自 GGUF 规范常量"
             "（gguf.constants.GGML_QUANT_SIZES），每权重位数 = 8 × 每块字节 / 块大小。",
             "Read from the bundled file ({tensors} tensors, {file}): types and counts from its tensor table, block "
             "size and "
             "bytes per block from the GGUF spec constants (gguf.constants.GGML_QUANT_SIZES), bits per weight = "
             "8 × bytes per block / block size."),
    "block": ("{tensor} 的第一个 {type} 块，{nbytes} 字节，手工解码：fp16 缩放 d = {d}，整数 q，权重 d·q（页面底部的检"
              "查把它和 gguf.dequantize 对照）。",
              "The first {type} block of {tensor}, {nbytes} bytes, decoded by hand: the fp16 scale d = {d}, the "
              "integers q and "
              "the weights d·q (the check at the bottom compares them with gguf.dequantize)."),
    "group": ("已加载模型的一个真实权重（{weight}，{shape}）按对称量化，每组一个 fp16 缩放；误差相对于加载进来的权重。",
              "One live weight of the loaded model ({weight}, {shape}), quantised symmetrically with one fp16 scale "
              "per "
              "group; the error is relative to the weights as loaded."),
    "fp8": ("上表：Qwen2.5-32B 的 KV cache 格式，权重为 bf16，放在一张 H200 上（每个请求 {sv_req_tokens} 个 token）。下"
            "表：各格式的参数，取自 torch.finfo。",
            "Top: KV-cache formats for Qwen2.5-32B next to bf16 weights on an H200 ({sv_req_tokens}-token requests). "
            "Bottom: "
            "the formats' figures from torch.finfo."),
    "spec": ("c = 草稿模型权重字节 / 目标模型权重字节（{sv_draft} / Qwen2.5-32B-Instruct，bf16）：两者的解码步都受带宽"
             "限制。"
             "曲线有峰值：草稿太长时，多出的代价超过多接受的 token。",
             "c = draft weight bytes / target weight bytes ({sv_draft} / Qwen2.5-32B-Instruct in bf16): both models' "
             "decode "
             "steps are memory-bound. The curves peak: past some length a longer draft costs more than its extra "
             "accepted tokens bring."),
    "rope": ("Qwen2.5-32B：θ = {theta_32b}，d_h = {hd_32b}；虚线是 {sv_yarn_orig} 和 {sv_yarn_ext} 个 token。YaRN（因子"
             " "
             "{sv_yarn_factor}）不动左边转得快的对，把右边转得慢的对拉长为原来的 {sv_yarn_factor} 倍。",
             "Qwen2.5-32B: θ = {theta_32b}, d_h = {hd_32b}; dashed lines at {sv_yarn_orig} and {sv_yarn_ext} tokens. "
             "YaRN "
             "(factor {sv_yarn_factor}) leaves the fast pairs on the left alone and stretches the slow pairs on the "
             "right {sv_yarn_factor}×."),
    "swa": ("Qwen2.5-32B 一条序列的 bf16 KV cache：完整注意力，对比 {sv_swa_window} 个 token 的滑动窗口。",
            "KV cache of one Qwen2.5-32B sequence in bf16: full attention against a sliding window of {sv_swa_window} "
            "tokens."),
    "variants": ("按 Qwen2.5-32B 的形状（{L_32b} 层，头维度 {hd_32b}，bf16）；MLA 用 DeepSeek-V3 的潜向量尺寸"
                 "（{sv_mla_rank} + {sv_mla_rope}），按 32B 的层数计算。",
                 "At Qwen2.5-32B's shape ({L_32b} layers, head dim {hd_32b}, bf16); MLA with DeepSeek-V3's latent "
                 "sizes "
                 "({sv_mla_rank} + {sv_mla_rope}) at 32B's depth."),
    "tp": ("Qwen2.5-32B，bf16，H200：投影切分到各卡，RMSNorm 的权重每卡一份；一个 KV 头不能再切，所以 TP 超过"
           " {nkv_32b} 时每张卡各存一份副本。"
           "并行度还必须整除 {nh_32b} 个查询头（不能整除的标 ✗）。",
           "Qwen2.5-32B in bf16 on H200s: projections split over the GPUs, norms copied; a KV head cannot be split, so "
           "past "
           "TP = {nkv_32b} every GPU keeps a copy. A degree must also divide the {nh_32b} query heads (✗ where it does "
           "not)."),
    "h200": ("Qwen2.5-32B，B = 1，bf16，按 roofline 模型，用 H200 的公开规格；预填充按 trace 的做法对全部"
             " S 个位置算 LM head。",
             "Qwen2.5-32B, B = 1, bf16, the roofline model with the H200's published figures; prefill "
             "computes the LM "
             "head for all S positions, as the trace does."),
    "measure": ("在已加载的模型上运行：预填充 {p} 个 token、在 {ctx} 个 token 的上下文上解码 {steps} 步（CPU 上要几秒到"
                "几十秒）。",
                "Runs the loaded model: prefills of {p} tokens, then {steps} decode steps at a {ctx}-token context "
                "(seconds to "
                "tens of seconds on a CPU)."),
    "measured": ("在本机测得（{dtype}）：矩阵乘峰值 {flops} FLOP/s，矩阵向量带宽 {bw}/s，拐点 {ridge} FLOP/字节。屋顶线"
                 "预测 = "
                 "max(FLOPs / 峰值, 字节 / 带宽)；机器上有别的任务时测量会波动。",
                 "Measured on this machine ({dtype}): matmul peak {flops} FLOP/s, matrix-vector bandwidth {bw}/s, "
                 "ridge {ridge} "
                 "FLOP/byte. The roofline predicts max(FLOPs / peak, bytes / bandwidth); measurements move with other "
                 "work on the machine."),
}


def caption(key: str, lang: str, numbers: dict, **live) -> str:
    """A page caption in `lang`, filled from texts.numbers() and the page's live values."""
    return fill(CAPTIONS[key][0 if lang == "zh" else 1], {**numbers, **{k: str(v) for k, v in live.items()}})


def measured_live(result: dict) -> dict:
    """The live values of the 'measured' caption."""
    p = result["peaks"]
    return dict(dtype=p["dtype"], flops=costs.human(p["flops_per_s"]), bw=costs.human(p["bytes_per_s"], "B"),
                ridge=f"{p['ridge']:.1f}")


def caption_example() -> str:
    """The small example's scores as the text box starts with them."""
    return ", ".join(f"{x:g}" for x in EXAMPLE["scores"])


def draft_cost(ref: ModelConfig) -> float:
    """c of the speculative-decoding example: the draft's weight bytes over the target's."""
    return ops_sv.draft_cost_ratio(costs.reference_config(DRAFT_LABEL), ref)


def measure_live() -> dict:
    """The live values of the 'measure' caption (what the button will run)."""
    return dict(p=" / ".join(str(n) for n in MEASURE["prefill"]), ctx=MEASURE["context"], steps=MEASURE["steps"])
