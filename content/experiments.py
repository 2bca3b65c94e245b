"""The Experiments page's words, (中文, English): the edits it offers, their settings, and its longer titles
and notes (str.format templates filled by the page)."""
from __future__ import annotations

KINDS = {  # key: (zh, en, what the "after" chart says was edited in English, the same in Chinese)
    "head": ("消融一个头", "ablate a head", "L{i} H{h} {mode}", "第{i}层 头{h} {mode}"),
    "attn": ("去掉一层注意力", "remove a layer's attention", "L{i} attn.out = 0", "第{i}层 attn.out = 0"),
    "mlp": ("去掉一层 MLP", "remove a layer's MLP", "L{i} mlp.out = 0", "第{i}层 mlp.out = 0"),
    "patch": ("修补", "patch", "L{i} resid_out @ {pos}", "第{i}层 resid_out @ 位置 {pos}"),
    "steer": ("引导", "steer", "L{i} + {scale}·(A − B)", "第{i}层 + {scale}·(A − B)"),
    "norope": ("去掉 RoPE", "no RoPE", "L{i} no RoPE", "第{i}层 不用 RoPE"),
    "name": ("按名字缩放张量", "scale a tensor by name", "{name} × {pct}%", "{name} × {pct}%")}
ATTR_RUNS = {"before": ("编辑前", "before the edit"), "after": ("编辑后", "after the edit")}   # which run is attributed
MODES = {"zero": ("置零", "zero"), "mean": ("均值", "mean")}   # how an ablated head is replaced

FIELDS = {  # the edit's prompts / names: (setting, URL key, default, zh, en)
    "patch": [("src", "x_src", "I hate shanghai", "来源提示词（token 数须与本行相同）",
               "source prompt (as many tokens as the row)")],
    "steer": [("a", "x_sa", "I love", "提示词 A（方向 = A − B）", "prompt A (direction = A − B)"),
              ("b", "x_sb", "I hate", "提示词 B", "prompt B")],
    "name": [("name", "x_name", "", "张量名（trace 约定，如 layers.3.attn.out）",
              "tensor name (trace contract, e.g. layers.3.attn.out)")]}

TEXTS = {
    "target": ("目标 token（编辑前的前 5 名）", "target token (the top 5 before the edit)"),
    "before": ("编辑前（位置 {s} 之后）：{tgt} 概率 {p:.3f}，logit {logit:.2f}",
               "Before (row {b}, after position {s}): {tgt} p = {p:.3f}, logit {logit:.2f}"),
    "after": ("编辑后（{what}）：{tgt} 概率 {p:.3f}，logit {logit:.2f}",
              "After ({what}): {tgt} p = {p:.3f}, logit {logit:.2f}"),
    "not_run": ("编辑没有运行（原因见上方红框）；修改设置后会自动重试。",
                "The edit did not run (see the red box above); it reruns when you change a setting."),
    "moved_fold": ("残差流被改变了多少（逐层）", "How far the residual stream moved, layer by layer"),
    "moved_title": ("编辑后的残差流与原来的相对差",
                    "Relative difference of the edited residual stream from the original"),
    "moved_note": ("编辑之前的状态完全不变；第一个被改变的状态：{first}。",
                   "States before the edit are untouched; the first one changed: {first}."),
    "attr_section": ("直接 logit 归因：{tgt} 的 logit 由哪些部分组成",
                     "Direct logit attribution: what the logit of {tgt} is made of"),
    "attr_fold": ("瀑布图与每个头的贡献", "The waterfall, and each head's part"),
    "waterfall": ("嵌入 → 各层注意力与 MLP → logit {logit:.2f}（最终 RMSNorm 的缩放固定为本次运行的值）",
                  "embedding → each layer's attention and MLP → logit {logit:.2f} (final RMSNorm scale frozen at "
                  "this run's value)"),
    "parts": ("直接贡献最大的 12 个头（按 |值|）", "The 12 heads with the largest direct effect"),
    "heads": ("每个头的直接贡献（层 × 头）", "Each head's direct contribution (layer × head)"),
    "sweep_section": ("头扫描：逐个消融全部 {n} 个头", "Head sweep: ablate each of the {n} heads in turn"),
    "sweep_button": ("运行头扫描（{n} 个变体，{mode}）", "Run the head sweep ({n} variants, {mode})"),
    "sweep_note": ("需要几十秒；结果按提示词、目标和方式保存在本会话中。",
                   "Takes tens of seconds; the result is kept for this prompt, target and mode."),
    "sweep_title": ("消融每个头后 {tgt} 的 logit 变化（原 logit {base:.2f}）",
                    "Change of {tgt}'s logit when each head is ablated (base logit {base:.2f})"),
    "sweep_layers": ("整层去掉注意力或 MLP 时的 logit 变化", "Logit change when a layer's attention or MLP is removed"),
}

FORMULAS = (r"\text{%s } t_{name} \leftarrow f(t_{name}),\ \text{%s}",
            r"\ell_t = \sum_{p\,\in\,\{e,\ a_{i,h},\ m_i\}} \Big(g \odot \frac{p}{\mathrm{rms}(x_L)}\Big) \cdot w_t,"
            r"\quad \mathrm{rms}(x_L) \text{ %s}")


def texts(lang: str) -> dict:
    """TEXTS in one language."""
    return {k: v[0] if lang == "zh" else v[1] for k, v in TEXTS.items()}


def formulas(lang: str) -> list[str]:
    """The explanation's two formulas: an edit, and the direct logit attribution."""
    zh = ("编辑：", "其后全部重算", "固定不变")
    edit, after, frozen = zh if lang == "zh" else ("edit:", "everything downstream recomputed", "frozen")
    return [FORMULAS[0] % (edit, after), FORMULAS[1] % frozen]


def pair(key: str, **numbers) -> tuple[str, str]:
    """TEXTS[key] in both languages, filled with numbers (for page.section / page.more, which take both)."""
    return tuple(x.format(**numbers) for x in TEXTS[key])
