"""The classroom tour's script: one large step per click, the prompt through the whole model and back around.

Each step names what it shows (its `key`: ops.analysis.tour_data computes it, viz/tour.py draws it), the
registry stage lit in the pipeline strip, its title and what the presenter says, with live numbers filled
in by `words` (str.format fields: name L H V n nh nkv hd I groups piece p). Never imports streamlit.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TourStep:
    key: str          # what the step shows
    stage: str        # the stage lit in the pipeline strip ("tour": none)
    zh: str           # title
    en: str
    words_zh: str     # what the presenter says, a str.format template
    words_en: str

    def title(self, lang: str, numbers: dict) -> str:
        return (self.zh if lang == "zh" else self.en).format(**numbers)

    def words(self, lang: str, numbers: dict) -> str:
        return (self.words_zh if lang == "zh" else self.words_en).format(**numbers)


STEPS = (
    TourStep("prompt", "tour", "提示词", "The prompt",
             "一切从一句话开始。模型是 {name}：{L} 层，隐藏维度 {H}。",
             "It all starts with a sentence. The model is {name}: {L} layers, hidden size {H}."),
    TourStep("tokens", "tokenize", "切成 token", "Split into tokens",
             "分词器把它切成 {n} 个 token（字节级 BPE；Qwen 不加起始符）。",
             "The tokenizer splits it into {n} tokens (byte-level BPE; Qwen adds no start token)."),
    TourStep("ids", "tokenize", "token 编号", "Token ids",
             "每个 token 变成一个整数编号，范围 0 到 {Vm1:,}。模型只看得到这些数字。",
             "Each token becomes an integer id between 0 and {Vm1:,}. These numbers are all the model ever sees."),
    TourStep("embedding", "embedding", "嵌入：查表", "Embedding: a table look-up",
             "用编号去 {V:,} × {H} 的表里取出一行：每个 token 变成 {H} 个数。",
             "Each id picks one row of a {V:,} × {H} table: every token becomes {H} numbers."),
    TourStep("rmsnorm", "rmsnorm", "RMSNorm：统一音量", "RMSNorm: even out the volume",
             "把每个向量除以它的均方根，再乘以学到的权重：数值大小变得可比。",
             "Divide each vector by its root-mean-square, then scale by learned weights: sizes become comparable."),
    TourStep("qkv", "attention", "Q、K、V 投影", "Q, K, V projections",
             "三次矩阵乘法得到查询 Q（{nh} 个头）和键 K、值 V（{nkv} 个头，GQA：{groups} 个查询头共用一组 KV），每头 {hd} 维。",
             "Three matrix products give queries Q ({nh} heads) and keys K and values V ({nkv} heads, GQA: {groups} "
             "query heads share one), {hd} dims per head."),
    TourStep("rope", "attention", "RoPE：按位置旋转", "RoPE: rotate by position",
             "Q 和 K 按 token 的位置旋转一个角度；位置 0 不动，越往后转得越多，点积因此知道相对距离。",
             "Q and K are rotated by an angle that grows with the position; position 0 is unchanged, so dot products "
             "learn relative distance."),
    TourStep("scores", "attention", "打分 + 因果掩码", "Scores + causal mask",
             "每个 token 给它自己和它前面的 token 打分：q·k / √{hd}。看不到未来：上三角是 −∞。",
             "Every token scores itself and the tokens before it: q·k / √{hd}. No peeking ahead: the upper triangle "
             "is −inf."),
    TourStep("probs", "attention", "softmax：变成注意力权重", "Softmax: attention weights",
             "每一行做 softmax：分数变成加起来等于 1 的权重，决定从哪些 token 取信息。",
             "A softmax on each row turns scores into weights that add up to 1: where to take information from."),
    TourStep("attn_out", "attention", "加权求和 + o_proj", "Weighted sum + o_proj",
             "按权重把 V 加起来，{nh} 个头拼在一起，再用 o_proj 变回 {H} 维。",
             "Values are summed with those weights, the {nh} heads concatenated, and o_proj maps back to {H} dims."),
    TourStep("residual", "residual", "残差相加", "Residual add",
             "把注意力的结果加回原来的向量：x + attn(x)。原信息不丢，只添上新的。",
             "Add the attention result back onto the input: x + attn(x). Nothing is lost; something is added."),
    TourStep("mlp", "mlp", "MLP（SwiGLU）", "MLP (SwiGLU)",
             "每个 token 独自走一遍：{H} 维放大到 {I} 维，silu 门控，再压回 {H} 维。模型的大部分参数在这里。",
             "Each token on its own: {H} dims widened to {I}, gated by silu, narrowed back to {H}. Most of the "
             "parameters live here."),
    TourStep("resid_out", "residual", "再次残差相加", "Residual add again",
             "x + mlp(x)：一层结束。形状和进来时一模一样。",
             "x + mlp(x): one layer done. The shape is exactly what came in."),
    TourStep("repeat", "tour", "重复 {L} 层", "Repeat for {L} layers",
             "同样的结构再走 {Lm1} 次，每层有自己的权重。向量一路被改写、越变越大。",
             "The same structure runs {Lm1} more times, each layer with its own weights. The vectors are rewritten "
             "and grow on the way."),
    TourStep("final_norm", "rmsnorm", "最终 RMSNorm", "Final RMSNorm",
             "最后再归一化一次，准备去和词表比对。",
             "One last normalisation, ready to be compared with the vocabulary."),
    TourStep("logits", "lm_head", "logits：给每个词打分", "Logits: a score for every token",
             "乘以 {V:,} × {H} 的输出矩阵：每个位置得到 {V:,} 个分数。只有最后一个位置决定下一个词。",
             "Multiply by the {V:,} × {H} output matrix: {V:,} scores at every position. Only the last position "
             "picks the next token."),
    TourStep("softmax", "sampling", "softmax：变成概率", "Softmax: probabilities",
             "softmax 把分数变成概率，{V:,} 个加起来等于 1。第一名“{piece}”占 {p:.1%}。",
             "Softmax turns scores into probabilities; all {V:,} add up to 1. The top one, “{piece}”, has {p:.1%}."),
    TourStep("pick", "sampling", "选出一个 token", "Pick one token",
             "贪心：取概率最大的那个（也可以按温度、top-k、top-p 抽样，见采样页）。",
             "Greedy: take the most likely one (or sample with temperature, top-k, top-p; see the Sampling page)."),
    TourStep("decode", "decode", "解码成文字", "Decode to text",
             "编号查回文字，接在原句后面。", "The id is turned back into text and appended."),
    TourStep("loop", "decode", "循环：再来一遍", "Loop: go again",
             "现在有 {n1} 个 token。再跑一遍模型得到下一个；有 KV 缓存时只需算这 1 个新 token。直到结束符或长度上限。",
             "Now there are {n1} tokens. Run the model again for the next one; with a KV cache only the 1 new token "
             "is computed. Until an end token or the length limit."),
)


def numbers(config, n: int, piece: str, p: float) -> dict:
    """The str.format fields of the steps' words for this model, a row of n tokens and the top next token."""
    c = config
    return dict(name=c.name or c.model_type, L=c.num_hidden_layers, Lm1=c.num_hidden_layers - 1, H=c.hidden_size,
                V=c.vocab_size, Vm1=c.vocab_size - 1, n=n, n1=n + 1, nh=c.num_attention_heads,
                nkv=c.num_key_value_heads, groups=c.num_attention_heads // c.num_key_value_heads, hd=c.head_dim,
                I=c.intermediate_size, piece=piece, p=p)
