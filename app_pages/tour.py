"""Classroom tour (presenter mode): the whole pipeline for the current prompt, one large step per click."""
import plotly.graph_objects as go
import streamlit as st
import torch

from ui import components as ui
from ui import decoding as dec
from ui.state import require_trace, query_int, t
from viz import bars, heatmap

model, trace = require_trace()
c = model.config
B, S, H, V, L = trace.B, trace.S, c.hidden_size, c.vocab_size, c.num_hidden_layers
nh, nkv, hd, I = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.intermediate_size
b = 0
n = trace.lengths[b]
ids = trace.token_ids[b, :n].tolist()
labels = ui.token_labels(model, trace, b)
tl = [dec.short(x) for x in labels]
dense0 = "layers.0.mlp.act" in trace
probs_last = torch.softmax(trace.logits[b, n - 1].float(), -1)
top = probs_last.topk(10)
chosen = int(top.indices[0])
chosen_piece = dec.pieces(model, [chosen])[0]
prompt = trace.prompts[b]
name = c.name or c.model_type

st.markdown("""<style>
.tour-hero {font-size: 52px; font-weight: 700; margin: 10px 0;}
.tour-big {font-size: 34px; line-height: 1.45; margin: 8px 0 14px 0;}
.tour-step {font-size: 22px; color: #666; font-weight: 600;}
.tour-title {font-size: 44px; font-weight: 800; margin: 0 0 6px 0;}
.tour-shape {font-size: 30px; font-family: monospace; background: #f3f5f8; padding: 4px 14px; border-radius: 8px;}
.tour-tokens span {display: inline-block; font-size: 34px; padding: 4px 12px; margin: 4px; border-radius: 8px;
                   background: #e8f0fe; border: 2px solid #9ab; font-family: monospace;}
div[data-testid="stButton"] button p {font-size: 26px; font-weight: 700;}
div[data-testid="stButton"] button {min-height: 64px;}
</style>""", unsafe_allow_html=True)


def big_fig(fig, height=520):
    fig.update_layout(font=dict(size=22), title=dict(font=dict(size=26)), height=height)
    return fig


def tok_chips(items):
    return '<div class="tour-tokens">' + "".join(f"<span>{dec.html_escape(x)}</span>" for x in items) + "</div>"


def hm(z, x, y, title, xl, yl, **kw):
    return big_fig(heatmap(z, x=x, y=y, title=title, xlabel=xl, ylabel=yl, **kw))


q0 = trace.layer(0, "attn.q")[b, 0, :n]
# Each step: (title, tensor name, tensor or None, figure-or-html maker, explanation)
STEPS = [
    (t("提示词", "The prompt"), None, None, lambda: st.markdown(f'<div class="tour-hero">“{dec.html_escape(prompt)}”</div>', unsafe_allow_html=True),
     t(f"一切从一句话开始。模型是 {name}：{L} 层，隐藏维度 {H}。", f"It all starts with a sentence. The model is {name}: {L} layers, hidden size {H}.")),
    (t("切成 token", "Split into tokens"), None, None, lambda: st.markdown(tok_chips(labels), unsafe_allow_html=True),
     t(f"分词器把它切成 {n} 个 token（字节级 BPE；Qwen 不加起始符）。", f"The tokenizer splits it into {n} tokens (byte-level BPE; Qwen adds no start token).")),
    (t("token 编号", "Token ids"), "tokens.ids", trace.token_ids,
     lambda: st.markdown(tok_chips([str(i) for i in ids]), unsafe_allow_html=True),
     t(f"每个 token 变成一个整数编号，范围 0 到 {V - 1:,}。模型只看得到这些数字。",
       f"Each token becomes an integer id between 0 and {V - 1:,}. These numbers are all the model ever sees.")),
    (t("嵌入：查表", "Embedding: a table look-up"), "embed.out", trace.embeddings,
     lambda: hm(trace.embeddings[b, :n, :64], None, tl, t("每个 token 的向量（前 64 维）", "Each token's vector (first 64 dims)"), t("维度", "dimension"), "token"),
     t(f"用编号去 {V:,} × {H} 的表里取出一行：每个 token 变成 {H} 个数。", f"Each id picks one row of a {V:,} × {H} table: every token becomes {H} numbers.")),
    (t("RMSNorm：统一音量", "RMSNorm: even out the volume"), "layers.0.attn_norm.out", trace.layer(0, "attn_norm.out"),
     lambda: big_fig(bars(trace.layer(0, "attn_norm.out")[b, :n].float().pow(2).mean(-1).sqrt(), tl,
                          title=t("归一化后每个 token 的 RMS", "RMS of each token after the norm"), xlabel="token", ylabel="RMS")),
     t("把每个向量除以它的均方根，再乘以学到的权重：数值大小变得可比。", "Divide each vector by its root-mean-square, then scale by learned weights: sizes become comparable.")),
    (t("Q、K、V 投影", "Q, K, V projections"), "layers.0.attn.q", trace.layer(0, "attn.q"),
     lambda: hm(q0[:, :32], None, tl, t("第 0 层第 0 个头的 Q（前 32 维）", "Layer 0, head 0: Q (first 32 dims)"), t("维度", "dimension"), "token"),
     t(f"三次矩阵乘法得到查询 Q（{nh} 个头）和键 K、值 V（{nkv} 个头，GQA：{nh // nkv} 个查询头共用一组 KV），每头 {hd} 维。",
       f"Three matrix products give queries Q ({nh} heads) and keys K and values V ({nkv} heads, GQA: {nh // nkv} query heads share one), {hd} dims per head.")),
    (t("RoPE：按位置旋转", "RoPE: rotate by position"), "layers.0.attn.q_rope", trace.layer(0, "attn.q_rope"),
     lambda: hm(trace.layer(0, "attn.q_rope")[b, 0, :n, :32] - q0[:, :32], None, tl,
                t("旋转带来的变化 q_rope − q（第 0 头）", "What the rotation changed: q_rope − q (head 0)"), t("维度", "dimension"), "token"),
     t("Q 和 K 按 token 的位置旋转一个角度；位置 0 不动，越往后转得越多，点积因此知道相对距离。",
       "Q and K are rotated by an angle that grows with the position; position 0 is unchanged, so dot products learn relative distance.")),
    (t("打分 + 因果掩码", "Scores + causal mask"), "layers.0.attn.scores", trace.layer(0, "attn.scores"),
     lambda: hm(trace.layer(0, "attn.scores")[b, 0, :n, :n], tl, tl, t("QKᵀ/√d，空白 = 被遮住 (−∞)", "QKᵀ/√d, blank = masked (−inf)"),
                t("被看的 token", "key token"), t("提问的 token", "query token"), text_fmt=".1f"),
     t(f"每个 token 给它自己和它前面的 token 打分：q·k / √{hd}。看不到未来：上三角是 −∞。",
       f"Every token scores itself and the tokens before it: q·k / √{hd}. No peeking ahead: the upper triangle is −inf.")),
    (t("softmax：变成注意力权重", "Softmax: attention weights"), "layers.0.attn.probs", trace.layer(0, "attn.probs"),
     lambda: hm(trace.layer(0, "attn.probs")[b, 0, :n, :n], tl, tl, t("注意力概率（每行和为 1）", "Attention probabilities (rows sum to 1)"),
                t("被看的 token", "key token"), t("提问的 token", "query token"), colorscale="Blues", zmid=None, zmin=0, zmax=1, text_fmt=".2f"),
     t("每一行做 softmax：分数变成加起来等于 1 的权重，决定从哪些 token 取信息。",
       "A softmax on each row turns scores into weights that add up to 1: where to take information from.")),
    (t("加权求和 + o_proj", "Weighted sum + o_proj"), "layers.0.attn.out", trace.layer(0, "attn.out"),
     lambda: hm(trace.layer(0, "attn.out")[b, :n, :64], None, tl, t("注意力输出（前 64 维）", "Attention output (first 64 dims)"), t("维度", "dimension"), "token"),
     t(f"按权重把 V 加起来，{nh} 个头拼在一起，再用 o_proj 变回 {H} 维。", f"Values are summed with those weights, the {nh} heads concatenated, and o_proj maps back to {H} dims.")),
    (t("残差相加", "Residual add"), "layers.0.resid_mid", trace.layer(0, "resid_mid"),
     lambda: big_fig(bars(trace.layer(0, "attn.out")[b, :n].float().norm(dim=-1) / trace.layer_input(0)[b, :n].float().norm(dim=-1), tl,
                          title=t("‖注意力输出‖ / ‖输入‖", "‖attention output‖ / ‖input‖"), xlabel="token", ylabel=t("比值", "ratio"))),
     t("把注意力的结果加回原来的向量：x + attn(x)。原信息不丢，只添上新的。", "Add the attention result back onto the input: x + attn(x). Nothing is lost; something is added.")),
    (t("MLP（SwiGLU）", "MLP (SwiGLU)"), "layers.0.mlp.act" if dense0 else "layers.0.mlp.out",
     trace.layer(0, "mlp.act" if dense0 else "mlp.out"),
     lambda: big_fig(bars(trace.layer(0, "mlp.act" if dense0 else "mlp.out")[b, n - 1].float().abs().topk(15).values,
                          [f"#{j}" for j in trace.layer(0, "mlp.act" if dense0 else "mlp.out")[b, n - 1].float().abs().topk(15).indices.tolist()],
                          title=t(f"“{tl[-1]}” 最活跃的 15 个神经元 |act|", f"“{tl[-1]}”: the 15 most active neurons |act|"),
                          xlabel=t("神经元", "neuron"), ylabel="|act|", text_fmt=".1f")),
     t(f"每个 token 独自走一遍：{H} 维放大到 {I} 维，silu 门控，再压回 {H} 维。模型的大部分参数在这里。",
       f"Each token on its own: {H} dims widened to {I}, gated by silu, narrowed back to {H}. Most of the parameters live here.")),
    (t("再次残差相加", "Residual add again"), "layers.0.resid_out", trace.layer(0, "resid_out"),
     lambda: hm(trace.layer(0, "resid_out")[b, :n, :64], None, tl, t("第 0 层的输出（前 64 维）", "Layer 0's output (first 64 dims)"), t("维度", "dimension"), "token"),
     t("x + mlp(x)：一层结束。形状和进来时一模一样。", "x + mlp(x): one layer done. The shape is exactly what came in.")),
    (t(f"重复 {L} 层", f"Repeat for {L} layers"), "residual stream", torch.stack(trace.residual_stream()),
     lambda: hm(torch.stack([r[b, :n].float().norm(dim=-1) for r in trace.residual_stream()]), tl,
                ["embed"] + [f"L{j}" for j in range(L)], t("残差流的长度 ‖x‖（行 = 层）", "Residual stream size ‖x‖ (rows = layers)"),
                "token", t("层", "layer"), colorscale="Viridis", zmid=None, height=max(520, 24 * (L + 1) + 150)),
     t(f"同样的结构再走 {L - 1} 次，每层有自己的权重。向量一路被改写、越变越大。",
       f"The same structure runs {L - 1} more times, each layer with its own weights. The vectors are rewritten and grow on the way.")),
    (t("最终 RMSNorm", "Final RMSNorm"), "final_norm.out", trace.final_hidden(),
     lambda: hm(trace.final_hidden()[b, :n, :64], None, tl, t("最终归一化后（前 64 维）", "After the final norm (first 64 dims)"), t("维度", "dimension"), "token"),
     t("最后再归一化一次，准备去和词表比对。", "One last normalisation, ready to be compared with the vocabulary.")),
    (t("logits：给每个词打分", "Logits: a score for every token"), "logits", trace.logits,
     lambda: big_fig(bars(trace.logits[b, n - 1, top.indices], dec.short_labels(model, top.indices.tolist(), 10),
                          title=t("最后一个位置的 logits（前 10 名）", "Logits at the last position (top 10)"), xlabel="token", ylabel="logit", text_fmt=".2f")),
     t(f"乘以 {V:,} × {H} 的输出矩阵：每个位置得到 {V:,} 个分数。只有最后一个位置决定下一个词。",
       f"Multiply by the {V:,} × {H} output matrix: {V:,} scores at every position. Only the last position picks the next token.")),
    (t("softmax：变成概率", "Softmax: probabilities"), "softmax(logits[-1])", probs_last,
     lambda: big_fig(bars(top.values, dec.short_labels(model, top.indices.tolist(), 10), title=t("下一个 token 的概率（前 10 名）", "Next-token probabilities (top 10)"),
                          xlabel="token", ylabel=t("概率", "probability"), text_fmt=".3f")),
     t(f"softmax 把分数变成概率，{V:,} 个加起来等于 1。第一名“{dec.short(chosen_piece, 12)}”占 {float(top.values[0]):.1%}。",
       f"Softmax turns scores into probabilities; all {V:,} add up to 1. The top one, “{dec.short(chosen_piece, 12)}”, has {float(top.values[0]):.1%}.")),
    (t("选出一个 token", "Pick one token"), "next id", torch.tensor([chosen]),
     lambda: st.markdown(tok_chips([f"{chosen_piece}  →  id {chosen}"]), unsafe_allow_html=True),
     t("贪心：取概率最大的那个（也可以按温度、top-k、top-p 抽样，见采样页）。", "Greedy: take the most likely one (or sample with temperature, top-k, top-p; see the Sampling page).")),
    (t("解码成文字", "Decode to text"), None, None,
     lambda: st.markdown(f'<div class="tour-big">{dec.html_escape(prompt)}<b style="color:#d62728">{dec.html_escape(model.tokenizer.decode([chosen]))}</b></div>',
                         unsafe_allow_html=True),
     t("编号查回文字，接在原句后面。", "The id is turned back into text and appended.")),
    (t("循环：再来一遍", "Loop: go again"), None, None,
     lambda: st.markdown(tok_chips(tl + [dec.short(chosen_piece)]), unsafe_allow_html=True),
     t(f"现在有 {n + 1} 个 token。再跑一遍模型得到下一个；有 KV 缓存时只需算这 1 个新 token。直到结束符或长度上限。",
       f"Now there are {n + 1} tokens. Run the model again for the next one; with a KV cache only the 1 new token is computed. Until an end token or the length limit.")),
]
N = len(STEPS)

if "tour_step" not in st.session_state:
    st.session_state.tour_step = query_int("step", 0, 0, N - 1)
st.session_state.tour_step = max(0, min(N - 1, st.session_state.tour_step))


def go_to(delta):
    st.session_state.tour_step = max(0, min(N - 1, st.session_state.tour_step + delta))


st.title(t("🎓 课堂演示：一句话走完整个模型", "🎓 Classroom tour: one sentence through the whole model"))
c1, c2, c3 = st.columns([1, 1, 3])
c1.button(t("◀ 上一步", "◀ Back"), key="tour_back", on_click=go_to, args=(-1,), width="stretch",
          disabled=st.session_state.tour_step == 0, shortcut="left")
c2.button(t("下一步 ▶", "Next ▶"), key="tour_next", on_click=go_to, args=(1,), type="primary", width="stretch",
          disabled=st.session_state.tour_step == N - 1, shortcut="right")
k = st.session_state.tour_step
st.query_params["step"] = str(k)
c3.markdown(f'<div class="tour-step">{t("步骤", "Step")} {k + 1} / {N} · {t("键盘：← →", "keys: ← →")}</div>',
            unsafe_allow_html=True)
st.progress((k + 1) / N)

title, tname, tensor, show, words = STEPS[k]
st.markdown(f'<div class="tour-title">{k + 1}. {dec.html_escape(title)}</div>', unsafe_allow_html=True)
if tensor is not None:
    st.markdown(f'<span class="tour-shape">{dec.html_escape(tname)} {ui.shape_str(tensor.shape)}</span>', unsafe_allow_html=True)
st.markdown(f'<div class="tour-big">{dec.html_escape(words)}</div>', unsafe_allow_html=True)
out = show()
if tensor is not None:
    ui.tensor_view(tname, tensor, out if isinstance(out, go.Figure) else None, key=f"tour-{k}")
elif isinstance(out, go.Figure):
    st.plotly_chart(out, width="stretch", key=f"tour-fig-{k}", theme=None)
if B > 1:
    st.caption(t(f"演示使用第 0 行（共 {B} 行）。", f"The tour uses row 0 (of {B})."))
