"""The scale page's notes, in both languages: what each table counts and leaves out. str.format templates
filled with live numbers by `say`. Never imports streamlit."""
from __future__ import annotations

NOTES = {
    "intro": ("同一套算子，换一个 config 就是另一个模型：本页只用 config 计算（ops/arith/costs.py），对已加载的模型还与"
              "真实权重逐个计数对照。"
              "{start}参考配置来自各模型官方 config.json（assets/configs/）；GPU 数字是厂商公开的规格表数值，不是本机实"
              "测。",
              "The same operators with a different config make a different model: this page computes everything from "
              "the "
              "config alone (ops/arith/costs.py); for the loaded model it also counts the real weights and "
              "compares. {start}"
              "Reference configs are the models' published config.json files (assets/configs/); GPU figures are "
              "vendors' published spec-sheet numbers, not measured here."),
    "too_big": ("注意：bf16 下这个配置在 B = {B}, S = {S} 时放不进一张 {gpu}；上面的时间假设放得下（或多卡均摊）。",
                "Note: in bf16 this config at B = {B}, S = {S} does not fit one {gpu}; the times above assume it does "
                "(or that several GPUs share the work)."),
    "start": ("B、S 的初值取自当前提示词的 trace（B = {B}, S = {S}）。",
              "B and S start from your prompts' trace (B = {B}, S = {S}). "),
    "bars": ("注意力与 MLP 按所有层求和；RMSNorm 的参数极少，几乎看不见。",
             "Attention and MLP rows are summed over all layers; the RMSNorm weights are too few to see."),
    "dense": ("Qwen2.5-32B 是**稠密**模型：每个 token 都走同一个 SwiGLU MLP，32.8B 参数全部参与（激活 = 总数）。"
              "所有开源 Qwen2.5 都是稠密的；MoE 的是 Qwen1.5-MoE-A2.7B、Qwen2-57B-A14B、Qwen3-30B-A3B——它们的名字里就写"
              "着激活参数量。",
              "Qwen2.5-32B is **dense**: every token runs the same SwiGLU MLP, so all 32.8B parameters are active. "
              "Every open Qwen2.5 model is dense; the MoE Qwen models are Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B and "
              "Qwen3-30B-A3B, whose names carry their active parameter count."),
    "flops": ("预填充的注意力按完整 S×S 分数矩阵计数（与本实验室的 eager 实现一致，上三角被掩码）；FlashAttention 一类"
              "因果内核约省一半。"
              "预填充对全部 S 个位置算 logits（与 trace 一致），服务端通常只算最后一个位置。经验公式 2·N·T 忽略了注意力"
              "的 S² 项。",
              "Prefill attention is counted over the full S×S score matrix, as this lab's eager path computes it (the "
              "upper "
              "triangle is masked); a causal kernel such as FlashAttention skips about half. Prefill computes logits "
              "for all "
              "S positions, as the trace does; a server usually keeps only the last. The 2·N·T rule of thumb leaves "
              "out attention's S² terms."),
    "fit": ("每格：✓/✗ 与 所需总量 = 权重 + B·S 个 token 的 KV cache（KV 按 bf16）/ 显存（1 GB = 10⁹ 字节）。"
            "不含激活、CUDA 上下文与碎片，实际还要留出几 GB；int8/int4 的量化缩放系数未计入。",
            "Each cell: ✓/✗ and total needed = weights + KV cache for B·S tokens (KV in bf16) / GPU memory (1 GB = 10⁹ "
            "bytes). "
            "Activations, the CUDA context and fragmentation are not counted, so leave a few GB; int8/int4 scales are "
            "not counted."),
    "time": ("时间 = max(FLOPs / 峰值算力, 字节 / 带宽)，是理想下界；解码每一步都要把全部权重从显存读一遍，所以批越大越"
             "划算。"
             "数据来源：{note}（厂商公开规格，非实测）。",
             "Time = max(FLOPs / peak, bytes / bandwidth), an ideal lower bound; every decode step reads all the "
             "weights "
             "from memory once, which is why bigger batches pay off. Source: {note} (published spec figures, not "
             "measured)."),
}


def say(key: str, lang: str, **numbers) -> str:
    """NOTES[key] in lang, filled with numbers."""
    zh, en = NOTES[key]
    return (zh if lang == "zh" else en).format(**numbers)
