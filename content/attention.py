"""Short sentences of the attention page that sit beside a figure, (中文, English): said the same in both."""
from __future__ import annotations

# beside the raw scores: softmax(s + c) = softmax(s) for any constant c added to a whole row
SCORES_SHIFT = (
    "分数本身多大并不要紧：给一整行都加上同一个数，softmax 的结果完全不变。要紧的是同一行里分数之间的差："
    "一个分数比另一个高 1，它的概率就是另一个的 e ≈ 2.7 倍。",
    "How large the scores are does not matter: adding the same number to a whole row leaves softmax unchanged. "
    "What matters is the differences within a row: a score 1 higher than another gets e ≈ 2.7 times its probability.",
)

# the page's longer titles, captions and notes: str.format templates, (中文, English)
TEXTS = {
    "missing": ("这次运行没有记录：", "This run did not record: "),
    "key_j": ("键 j（被看的位置）", "key j (looked at)"),
    "query_i": ("查询 i（正在看的位置）", "query i (looking)"),
    "map_title": ("层 {i}，头 {h}（KV 头 {g}），第 {b} 行", "Layer {i}, head {h} (KV head {g}), row {b}"),
    "map_sub": ("每行和为 1，空白 = 被屏蔽", "rows sum to 1, blank = masked"),
    "padding": ("右侧填充：填充位置的列被屏蔽；填充位置自己的行照样计算但结果被丢弃。",
                "Right padding: padding columns are masked; the padding rows are computed too, and ignored."),
    "grid_title": ("第 {i} 层全部 {nh} 个头", "All {nh} heads of layer {i}"),
    "grid_note": ("同一色标 0..1，红框 = 头 {h}", "one scale 0..1, red frame = head {h}"),
    "scores_fold": ("分数 → 掩码 → 概率（所选的层、头、行）",
                    "Scores → mask → probabilities (the chosen layer, head, row)"),
    "raw": ("分数（掩码前）", "scores (before the mask)"),
    "raw_sub": ("颜色只覆盖可见格；灰 = 被屏蔽（灰字为掩码前的值）",
                "colour spans the visible cells; grey = masked (raw value in grey)"),
    "mask": ("掩码（因果 + 填充）", "mask (causal + padding)"),
    "mask_title": ("浅色 = 可见 (0)，深色 = -inf", "light = visible (0), dark = -inf"),
    "shapes_note": ("nh = {nh} 个查询头，nkv = {nkv} 个 KV 头，每头 hd = {hd} 维；nh·hd = {nhd}，H = {H}。",
                    "nh = {nh} query heads, nkv = {nkv} KV heads, hd = {hd} dims each; nh·hd = {nhd}, H = {H}."),
    "rope_fold": ("RoPE：按位置旋转每一对维度", "RoPE: each dimension pair rotated by position"),
    "rope_pick": ("维度对 j（j 与 j+{half} 组成一对；j 越小转得越快）",
                  "dimension pair j (j with j+{half}; small j turns fastest)"),
    "rope_title": ("q 的维度对 ({j}, {j2})，头 {h}", "q pair ({j}, {j2}), head {h}"),
    "rope_shown": ("图中只画前 {shown} 个位置；右表列出全部 {n} 个。",
                   "The plot draws the first {shown} positions; the table lists all {n}."),
    "rope_note": ("θ_j = {theta}^(-2·{j}/{hd}) = {inv:.4g} rad/位置。旋转不改变长度，只改变方向；"
                  "q·k 于是只依赖两者的位置差。",
                  "θ_j = {theta}^(-2·{j}/{hd}) = {inv:.4g} rad per position. A rotation keeps the length and changes "
                  "only the direction, so q·k depends on the positions' difference."),
    "gqa_fold": ("GQA：{nh} 个查询头共享 {nkv} 个 KV 头（每 {n_rep} 个一组）",
                 "GQA: {nh} query heads share {nkv} KV heads ({n_rep} per group)"),
    "gqa_title": ("查询头 h 读取 KV 头 ⌊h / {n_rep}⌋（当前头 {h} → KV 头 {g}）",
                  "query head h reads KV head ⌊h / {n_rep}⌋ (head {h} → KV head {g})"),
    "gqa_note": ("KV 缓存只存 nkv 个头：省下 {n_rep} 倍显存（32B 为 {ref_rep} 倍）。",
                 "The KV cache keeps only nkv heads: {n_rep}× less memory ({ref_rep}× for 32B)."),
    "ctx_fold": ("合并各头，再经 o_proj 投影回 H", "Heads concatenated, then o_proj back to H"),
    "ctx_title": ("context = {nh} 个头 × {hd} 维拼接", "context = {nh} heads × {hd} dims side by side"),
    "ctx_sub": ("每格 = 该 token 在该头那一段的 ‖·‖", "each cell: ‖that head's slice‖ for that token"),
    "out_title": ("o_proj 输出（前 128 维）", "o_proj output (first 128 dims)"),
}

# the shapes table: tensor -> its shape in symbols
MEANING = dict(q="[B, nh, S, hd]", k="[B, nkv, S, hd]", v="[B, nkv, S, hd]", q_rope="[B, nh, S, hd]",
               k_rope="[B, nkv, S, hd]", scores="[B, nh, S, S]", probs="[B, nh, S, S]", context="[B, S, nh·hd]",
               out="[B, S, H]")


def texts(lang: str) -> dict:
    """TEXTS in one language."""
    return {k: v[0] if lang == "zh" else v[1] for k, v in TEXTS.items()}


def formulas(c, lang: str) -> list[str]:
    """The explanation's formulas for config c: projections, RoPE, masked softmax, GQA and o_proj."""
    nh, nkv, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
    words = ("且", "是真实 token", "其他") if lang == "zh" else ("and", "real", "otherwise")
    return [r"q = xW_q^\top + b_q,\ k = xW_k^\top + b_k,\ v = xW_v^\top + b_v"
            r"\quad q\!:\![B, %d, S, %d],\ k, v\!:\![B, %d, S, %d]" % (nh, hd, nkv, hd),
            r"\tilde q_{p} = R(p\,\theta)\,q_p,\quad \theta_j = %s^{-2j/%d}" % (f"{c.rope_theta:g}", hd),
            r"P = \mathrm{softmax}\!\left(\frac{\tilde q \tilde k^\top}{\sqrt{%d}} + M\right),\quad "
            r"M_{ij} = \begin{cases}0 & j \le i \text{ %s } j \text{ %s}\\ -\infty & \text{%s}\end{cases}"
            % (hd, *words),
            r"\mathrm{out} = \mathrm{concat}_h(P_h V_{g(h)})\, W_o^\top,\quad g(h) = \lfloor h / %d \rfloor" % c.n_rep]
