"""The scale page's words, in both languages: what each table counts and leaves out (str.format templates filled
with live numbers by `say`), its headline sentences, and its tables' rows built from ops/arith/scale_data.view.
Never imports streamlit."""
from __future__ import annotations

from ops.arith import costs
from ops.arith.costs import human

from . import costs_text

NOTES = {
    "intro": ("同一套算子，换一个 config 就是另一个模型：本页只用 config 计算，对已加载的模型还与"
              "真实权重逐个计数对照。"
              "{start}参考配置来自各模型官方 config.json；GPU 数字是厂商公开的规格表数值，不是本机实"
              "测。",
              "The same operators with a different config make a different model: this page computes everything from "
              "the "
              "config alone; for the loaded model it also counts the real weights and "
              "compares. {start}"
              "Reference configs are the models' published config.json files; GPU figures are "
              "vendors' published spec-sheet numbers, not measured here."),
    "too_big": ("注意：bf16 下这个配置在 B = {B}, S = {S} 时放不进一张 {gpu}；上面的时间假设放得下（或多卡均摊）。",
                "Note: in bf16 this config at B = {B}, S = {S} does not fit one {gpu}; the times above assume it does "
                "(or that several GPUs share the work)."),
    "start": ("B、S 的初值取自当前提示词的 trace（B = {B}, S = {S}）。",
              "B and S start from your prompts' trace (B = {B}, S = {S}). "),
    "bars": ("注意力与 MLP 按所有层求和；RMSNorm 的参数极少，几乎看不见。",
             "Attention and MLP rows are summed over all layers; the RMSNorm weights are too few to see."),
    "dense": ("Qwen2.5-32B 是**稠密**模型：每个 token 都走同一个 SwiGLU MLP，{total} 参数全部参与（激活 = 总数）。"
              "所有开源 Qwen2.5 都是稠密的；MoE 的 Qwen 型号例如 Qwen1.5-MoE-A2.7B、Qwen2-57B-A14B、Qwen3-30B-A3B、"
              "Qwen3-235B-A22B、Qwen3-Coder-480B-A35B、Qwen3-Next-80B-A3B——它们的名字里就写着激活参数量。",
              "Qwen2.5-32B is **dense**: every token runs the same SwiGLU MLP, so all {total} parameters are active. "
              "Every open Qwen2.5 model is dense; MoE Qwen models include, for example, Qwen1.5-MoE-A2.7B, "
              "Qwen2-57B-A14B, Qwen3-30B-A3B, Qwen3-235B-A22B, Qwen3-Coder-480B-A35B and Qwen3-Next-80B-A3B, whose "
              "names carry their active parameter count."),
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


def _t(lang: str):
    return (lambda zh, en: zh) if lang == "zh" else (lambda zh, en: en)


def dense_note(lang: str) -> str:
    """The note under the dense-vs-MoE table, with Qwen2.5-32B's parameter count computed from its config."""
    return say("dense", lang, total=f"{costs.total_params(costs.reference_config()) / 1e9:.1f}B")


# ---- the roofline headline ---------------------------------------------------------------------------------------
def phase_names(lang: str) -> dict:
    t = _t(lang)
    return {"prefill": t("预填充", "prefill"), "decode": t("解码一步", "decode step")}


def bound_word(bound: str, lang: str) -> str:
    t = _t(lang)
    return {"compute": t("算力受限（compute-bound）", "compute-bound"), "memory": t("带宽受限（memory-bound）",
                                                                                   "memory-bound")}[bound]


def roofline_title(name: str, gpu: str, B: int, S: int, lang: str) -> str:
    return _t(lang)(f"{name} 在 {gpu} 上（B = {B}, S = {S:,}）", f"{name} on {gpu} (B = {B}, S = {S:,})")


def headline(v: dict, lang: str) -> str:
    """Where prefill and one decode step sit against the ridge, and their lower-bound times."""
    p, d, ridge = v["roofline"]["prefill"], v["roofline"]["decode"], v["ridge"]
    bp, bd = bound_word(p["bound"], lang), bound_word(d["bound"], lang)
    tp, td, rate = p["time_s"] * 1e3, d["time_s"] * 1e3, 1 / d["time_s"]
    if lang == "zh":
        return (f"#### 预填充的强度是 {p['intensity']:,.1f} FLOP/字节，{'高于' if v['above_ridge'] else '低于'}拐点 "
                f"{ridge:,.0f}，是 **{bp}**：约 {tp:,.2f} ms。解码一步只有 {d['intensity']:,.1f} FLOP/字节，是 "
                f"**{bd}**：约 {td:,.2f} ms / 步（每行每秒约 {rate:,.0f} 个 token）。")
    return (f"#### Prefill runs at {p['intensity']:,.1f} FLOP/byte, {'above' if v['above_ridge'] else 'below'} the "
            f"ridge at {ridge:,.0f}: **{bp}**, about {tp:,.2f} ms. One decode step runs at only "
            f"{d['intensity']:,.1f} FLOP/byte: **{bd}**, about {td:,.2f} ms per step (≈ {rate:,.0f} tokens/s per row).")


def crossover_hint(B: int, cross: int, lang: str) -> str:
    return _t(lang)(f"提示：S 这么短时预填充也受带宽限制；B = {B} 时 S ≥ {cross:,} 左右预填充就越过拐点，变成算力受限。"
                    "把上面的 S 调大试试。",
                    f"Hint: with S this short even prefill is memory-bound; at B = {B} it crosses the ridge and "
                    f"becomes compute-bound from about S = {cross:,}. Raise S above to see it.")


def top_metrics(v: dict, lang: str) -> list[tuple[str, str]]:
    t, T = _t(lang), v["T"]
    return [(t("总参数", "total parameters"), human(v["total"])),
            (t("每个 token 激活的参数", "active per token"), human(v["active"])),
            (t("权重 (bf16)", "weights (bf16)"), f"{v['weights']['bf16'] / 1e9:.1f} GB"),
            ("KV cache / token", human(v["kv_tok"], "B")),
            (t(f"KV cache（B·S = {T:,}）", f"KV cache (B·S = {T:,})"), human(v["kv_all"], "B"))]


# ---- parameters --------------------------------------------------------------------------------------------------
def live_check(chk: dict, lang: str) -> str:
    """costs.total_params(config) against the loaded weights counted one by one (scale_data.param_check)."""
    eq, mark = ("=", "✓") if chk["same"] else ("≠", "✗")
    total, counted = f"{chk['total']:,}", f"{chk['counted']:,}"
    return _t(lang)(f"实时核对：costs.total_params(config) = {total} {eq} model.num_parameters（逐个数真实权重）= "
                    f"{counted} {mark}",
                    f"Live check: costs.total_params(config) = {total} {eq} model.num_parameters (counting the real "
                    f"weight tensors) = {counted} {mark}")


def param_rows(v: dict, lang: str) -> list[dict]:
    t = _t(lang)
    return [{t("算子", "operator"): costs_text.operator(r["operator"], lang),
             t("权重张量", "tensors"): ", ".join(n.replace("model.layers.{i}.", "") for n in r["tensors"]),
             t("形状", "shapes"): " · ".join(str(s) for s in r["shapes"]),
             t("每层", "per layer"): f"{r['per_layer']:,}", t("层数", "layers"): r["layers"],
             t("参数", "params"): f"{r['params']:,}", t("占比", "share"): f"{r['share']:.1%}"} for r in v["params"]]


def param_total(v: dict, lang: str) -> str:
    n = v["total"]
    return _t(lang)(f"### 合计 {n:,} 个参数（{human(n)}）", f"### Total: {n:,} parameters ({human(n)})")


def param_bar_rows(v: dict, lang: str) -> list[dict]:
    """The parameter rows with their operators named as in the table above (注意力 q_proj, 嵌入 in Chinese)."""
    return [dict(r, operator=costs_text.operator(r["operator"], lang)) for r in v["params"]]


def param_bars_words(name: str, lang: str) -> tuple[str, str, str]:
    """(title, x label, y label) of the parameter bars."""
    t = _t(lang)
    return (t(f"{name}：各算子参数量（百万）", f"{name}: parameters per operator (millions)"),
            t("参数量（百万）", "parameters (millions)"), t("算子", "operator"))


def reference_table(rows: list[dict], lang: str) -> list[dict]:
    """scale_data.reference_rows as the dense-vs-MoE table."""
    t = _t(lang)
    return [{t("模型", "model"): r["name"],
             t("类型", "kind"): f"MoE ({r['experts']} × top-{r['top_k']})" if r["moe"] else t("稠密", "dense"),
             t("总参数", "total params"): f"{r['total']:,}", t("每 token 激活", "active per token"): f"{r['active']:,}",
             t("激活占比", "active share"): f"{r['share']:.0%}"} for r in rows]


# ---- FLOPs -------------------------------------------------------------------------------------------------------
def flops_intro(B: int, S: int, lang: str) -> str:
    T = B * S
    return _t(lang)(f"**预填充**一次处理 B·S = {T:,} 个 token，每个查询看 S = {S:,} 个键；"
                    f"**解码一步**每行只算 1 个新 token（共 B = {B}），它要看缓存里的 S 个 token 加上自己"
                    f"（{S + 1:,} 个键）。矩阵乘 [m, k]·[k, n] 记 2·m·n·k。",
                    f"**Prefill** processes B·S = {T:,} tokens, each query seeing S = {S:,} keys; **one decode step** "
                    f"computes one new token per row (B = {B} in all), each seeing the S cached tokens plus itself "
                    f"({S + 1:,} keys). A matmul [m, k]·[k, n] counts 2·m·n·k.")


def flops_metrics(v: dict, lang: str) -> list[tuple[str, str]]:
    t, tot = _t(lang), v["flops_total"]
    return [(t("预填充 FLOPs", "prefill FLOPs"), human(tot["prefill"], "FLOP")),
            (t("解码一步 FLOPs", "decode-step FLOPs"), human(tot["decode"], "FLOP")),
            (t("≈ 2 × 激活参数 × 预填充 token", "≈ 2 × active params × prefill tokens"),
             human(v["rule_prefill"], "FLOP")),
            (t("≈ 2 × 激活参数 × B", "≈ 2 × active params × B"), human(v["rule_decode"], "FLOP"))]


def flops_tabs(lang: str) -> list[str]:
    t = _t(lang)
    return [t("预填充（逐算子）", "Prefill (per operator)"), t("解码一步（逐算子）", "One decode step (per operator)")]


def flops_rows(v: dict, phase: str, lang: str) -> list[dict]:
    t = _t(lang)
    return [{t("算子", "operator"): costs_text.operator(r["operator"], lang),
             t("公式", "formula"): costs_text.formula(r["formula"], lang),
             t("每层", "per layer"): human(r["per_layer"], "FLOP"), t("层数", "layers"): r["layers"],
             "FLOPs": f"{r['flops']:,}", t("占比", "share"): f"{r['share']:.1%}"} for r in v["flops"][phase]]


def flops_total(v: dict, phase: str, lang: str) -> str:
    n = v["flops_total"][phase]
    return _t(lang)(f"**合计：{n:,} FLOPs（{human(n, 'FLOP')}）**", f"**Total: {n:,} FLOPs ({human(n, 'FLOP')})**")


# ---- memory and the roofline in numbers --------------------------------------------------------------------------
def kv_sentence(c, v: dict, lang: str) -> str:
    dims = f"L {c.num_hidden_layers} × nkv {c.num_key_value_heads} × hd {c.head_dim}"
    tok, every, T = v["kv_tok"], v["kv_all"], v["T"]
    return _t(lang)(f"每个 token 的 KV cache = 2 (K 和 V) × {dims} × 2 字节 (bf16) = "
                    f"**{tok:,} 字节（{human(tok, 'B')}）**；"
                    f"B·S = {T:,} 个 token 共 **{human(every, 'B')}**（{every / 1e9:.2f} GB）。",
                    f"KV cache per token = 2 (K and V) × {dims} × 2 bytes (bf16) = **{tok:,} bytes "
                    f"({human(tok, 'B')})**; for B·S = {T:,} tokens **{human(every, 'B')}** ({every / 1e9:.2f} GB).")


def weight_metrics(v: dict, lang: str) -> list[tuple[str, str]]:
    t = _t(lang)
    return [(t(f"权重 {lab}", f"weights {lab}"), f"{n / 1e9:.1f} GB") for lab, n in v["weights"].items()]


def fit_table(v: dict, lang: str) -> list[dict]:
    t = _t(lang)
    cell = lambda f, gb: f"{'✓' if f['fits'] else '✗'}  {f['total'] / 1e9:,.1f} / {gb} GB"
    return [{"GPU": r["gpu"], **{t(f"权重 {lab}", f"weights {lab}"): cell(f, r["gb"]) for lab, f in r["cells"].items()},
             t("bf16 时可缓存的 token 数", "tokens of KV cache that fit (bf16)"): f"{r['max_tokens']:,}"}
            for r in v["fit"]]


def roofline_table(v: dict, lang: str) -> list[dict]:
    t, names = _t(lang), phase_names(lang)
    return [{t("阶段", "phase"): names[ph], "FLOPs": human(r["flops"], "FLOP"),
             t("读写字节", "bytes moved"): human(r["bytes"], "B"), t("强度 FLOP/B", "intensity FLOP/B"):
             f"{r['intensity']:,.1f}", t("算力时间", "compute time"): f"{r['t_compute_s'] * 1e3:,.3f} ms",
             t("访存时间", "memory time"): f"{r['t_memory_s'] * 1e3:,.3f} ms",
             t("下界时间", "lower-bound time"): f"{r['time_s'] * 1e3:,.3f} ms",
             t("受限于", "bound"): bound_word(r["bound"], lang)} for ph, r in v["roofline"].items()]
