"""The MLP / MoE page's sentences beside its figures, in both languages: str.format templates filled with live
numbers by `say`, and the MoE reference table's labels. Never imports streamlit."""
from __future__ import annotations

NOTES = {
    "strips_title": ("token “{tok}”（位置 {s}）穿过第 {i} 层的 MLP：{H} → {I} → {H}（红线 = |act| 最大的 3 个神经元）",
                     "Token “{tok}” (position {s}) through layer {i}'s MLP: {H} → {I} → {H} (red = the 3 largest "
                     "|act|)"),
    "strips": ("每条竖条是一个向量，高度按长度成比例，颜色是这个 token 的实时数值（橙 > 0 > 蓝，各条按自身范围）。",
               "Each strip is one vector, as tall as it is long, coloured by this token's live values "
               "(orange > 0 > blue, each strip on its own range)."),
    "moe_layer": ("第 {i} 层是 MoE 层：没有单一的 gate/up，而是路由到专家；见下方 MoE 部分。",
                  "Layer {i} is a MoE layer: there is no single gate/up, tokens are routed to experts; see the MoE "
                  "section below."),
    "silu_title": ("silu 曲线，点 = “{tok}” 的 {I} 个 gate 值", "silu, dots = the {I} gate values of “{tok}”"),
    "silu_some": ("（按大小均匀取 {dots} 个）", " ({dots}, evenly by rank)"),
    "silu": ("负的 gate 被压到接近 0（最小约 −0.28），正的几乎原样通过：这就是“门”。",
             "Negative gates are squashed towards 0 (minimum about −0.28), positive ones pass almost unchanged: "
             "the gate."),
    "dense_32b": ("纠正常见说法：**Qwen2.5-32B 是稠密（dense）模型，不是 MoE**，"
                  "没有“32 个专家、每次激活 2–3 个”这回事；所有开源 Qwen2.5 模型都是稠密的。",
                  "A correction: **Qwen2.5-32B is DENSE, not MoE**; there are no “32 experts with 2-3 active”. "
                  "All open Qwen2.5 models are dense."),
    "dense_loaded": ("当前加载的 {name} 也是稠密模型：每个 token 都走同一个 SwiGLU MLP。",
                     " The loaded {name} is dense too: every token runs the same SwiGLU MLP."),
    "moe_real": ("当前模型是 MoE：下面是真实路由（{E} 个专家，每个 token 选 {k} 个）。",
                 "The loaded model is MoE: below is its real routing ({E} experts, top-{k})."),
    "moe_random": ("⚠️ 以下是**随机权重**的微型 MoE（{E} 个专家，top-{k}，隐藏维度 {H}），只用来演示机制；"
                   "路由结果没有任何语义。输入是你的 token 编号对其词表取模。",
                   "⚠️ Below is a tiny MoE with **random weights, for showing the mechanism only** ({E} experts, "
                   "top-{k}, hidden {H}); its routing means nothing. Its input is your token ids modulo its "
                   "vocabulary."),
    "moe_cost": ("每个 token 只算 {k} 个专家：专家部分的计算量约为全部专家的 {k}/{E}；"
                 "但所有专家的权重都必须放在显存里。",
                 "Each token runs only {k} experts: about {k}/{E} of the experts' compute; but every expert's weights "
                 "must sit in memory."),
}


def say(key: str, lang: str, **numbers) -> str:
    """NOTES[key] in lang, filled with numbers."""
    zh, en = NOTES[key]
    return (zh if lang == "zh" else en).format(**numbers)


def dense_warning(config, lang: str) -> str:
    """The correction about Qwen2.5-32B, and, on a dense loaded model, that it is dense too."""
    name = config.name or config.model_type
    return say("dense_32b", lang) + ("" if config.is_moe else say("dense_loaded", lang, name=name))


def moe_table(rows: list[dict], lang: str) -> list[dict]:
    """The reference models' MoE facts (ops/lab/stage_data.moe_reference_rows) as the page's table rows."""
    zh = lang == "zh"
    dense, none = ("无（稠密）", "无") if zh else ("none (dense)", "none")
    head = (("模型", "专家数 E", "专家宽度", "共享专家", "总参数", "每 token 激活参数") if zh else
            ("model", "experts E", "expert width", "shared expert", "total params", "active per token"))
    return [{head[0]: r["model"], head[1]: str(r["experts"] or dense), "top-k": str(r["top_k"] or "—"),
             head[2]: str(r["width"]) + ("" if r["experts"] else " (MLP)"),
             head[3]: "—" if r["shared"] is None else str(r["shared"] or none),
             "norm_topk_prob": "—" if r["norm_topk_prob"] is None else str(r["norm_topk_prob"]),
             head[4]: r["total"], head[5]: r["active"]} for r in rows]
