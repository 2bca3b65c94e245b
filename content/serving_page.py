"""The serving page's short words in both languages: pickers, tabs, figure titles and axes, metrics, the formula
tab. The page picks them with labels(lang); its long texts are content/serving_text.py's and serving_topics.py's.
Never imports streamlit."""
from __future__ import annotations

TABS = (("FlashAttention", "FlashAttention"), ("KV cache 与调度", "KV cache"), ("量化", "Quantisation"),
        ("投机解码", "Speculative"), ("长上下文", "Long context"), ("MHA/GQA/MQA/MLA", "MHA/GQA/MQA/MLA"),
        ("张量并行", "Tensor parallel"), ("预填充 vs 解码", "Prefill vs decode"))

WORDS = dict(
    head=("查询头 h", "query head h"), block=("每块的键数", "keys per block"),
    online=("在线 softmax：每次并入 {n} 个键", "Online softmax, block size {n}"),
    score=("分数", "score"), run_max=("累计最大 m", "running max m"), run_sum=("累计和 l", "running sum l"),
    speedup=("加速比", "speed-up"),
    by_hand=("自己算一遍：几个分数，分块做 softmax", "By hand: a few scores, softmax a block at a time"),
    scores=("分数（用逗号隔开，最多 16 个）", "scores (comma-separated, up to 16)"),
    per_block=("每块几个", "per block"),
    reading=("正在读取内置的 GGUF 文件……", "Reading the bundled GGUF file..."),
    no_gguf=("内置 GGUF 文件不可用：", "The bundled GGUF file is not available: "),
    a=("接受率 a", "acceptance rate a"), k=("草稿长度 k", "draft length k"),
    E=("每次核对得到的 token E", "tokens per verification E"), c=("草稿代价 c", "draft cost c"),
    yours=("你选的", "yours:"), spec_title=("加速比与草稿长度 k", "Speed-up against draft length k"),
    rope_title=("RoPE 每一对转一圈要多少个 token（对数轴）", "Tokens for each RoPE pair to turn once (log axis)"),
    pair=("维度对 j", "pair j"), per_turn=("每圈 token 数", "tokens per turn"),
    variants_title=("Qwen2.5-32B 形状下每 token 的 KV 字节", "KV bytes per token at Qwen2.5-32B's shape"),
    bytes=("字节", "bytes"),
    roof_title=("H200 上的屋顶线：Qwen2.5-32B，B = 1", "The H200 roofline: Qwen2.5-32B, B = 1"),
    intensity=("算术强度 (FLOP/字节)", "arithmetic intensity (FLOP/byte)"), roof=("屋顶", "roof"),
    measure=("在本机上实测一次", "Measure on this machine"), checks=("检查", "Checks"),
    more=("2026 年的面试题：调度、并行、稀疏与线性注意力、低比特格式、语法约束",
          "The 2026 interview: scheduling, parallelism, sparse and linear attention, low-bit formats, grammars"),
)


def labels(lang: str) -> dict:
    """Every word of WORDS in `lang`, and the tabs' labels under "tabs"."""
    i = 0 if lang == "zh" else 1
    return {**{k: v[i] for k, v in WORDS.items()}, "tabs": [x[i] for x in TABS]}


def latex(lang: str) -> list[str]:
    """The formula tab: online softmax's update and the speculative-decoding speed-up."""
    speedup = WORDS["speedup"][0 if lang == "zh" else 1]
    return [r"m' = \max\big(m, \max_j s_j\big),\quad \alpha = e^{m-m'},\quad"
            r" \ell' = \alpha\,\ell + \sum_j e^{s_j-m'}",
            r"\mathbf a' = \alpha\,\mathbf a + \sum_j e^{s_j-m'}\,\mathbf v_j,\qquad \mathrm{out} = \mathbf a/\ell",
            r"E = \frac{1-a^{k+1}}{1-a},\qquad \text{%s} = \frac{E}{k\,c+1}" % speedup]
