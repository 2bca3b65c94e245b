"""Stage 9 · Generate: prefill, then one token per click with a KV cache (ops.engine.decode.Decoder per session)."""
import streamlit as st

from content import facts, texts
from ops.arith import costs
from ops.engine import decode, sampling as smp
from ops.engine.inputs import max_new_tokens_limit
from ops.engine.model import InputError
from ops.fast import quant
from ops.lab import generate_data as analysis, stage_data
from ui import classroom
from ui.jobs import decode_step, decode_to_end
from ui.page import StagePage
from ui.pickers import sampling_input
from ui.session import settings, t
from ui.state import get_model, get_trace
from viz import lines
from viz.generate import next_token_preview, text_box
from viz.labels import pieces

page = StagePage("generate", trace=False, io_text=t("提示词 ids [1, S] → 文本", "prompt ids [1, S] → text"))
model = get_model()
if model is None:
    st.stop()
c, s_ = model.config, settings()
if not s_.prompts:
    st.warning(t("请在左侧输入框中写一句话。", "Type a prompt in the sidebar."))
    st.stop()
prompt = s_.prompts[0]

cols = st.columns(6)
limit = max_new_tokens_limit(c)
max_new = int(cols[0].number_input(t("最多生成 token 数", "max new tokens"), min_value=1, max_value=min(256, limit),
                                   value=min(24, limit), step=1, key="gen_max"))
temp = sampling_input(cols[1].number_input, t("温度 T", "temperature T"), "temperature", "gen_temp", format="%.2f",
                      help=t("0 = 贪心", "0 = greedy"))
top_k = sampling_input(cols[2].number_input, "top-k", "top_k", "gen_topk", help=t("0 = 关闭", "0 = off"))
top_p = sampling_input(cols[3].number_input, "top-p", "top_p", "gen_topp", format="%.2f", help=t("1 = 关闭", "1 = off"))
rp = sampling_input(cols[4].number_input, t("重复惩罚", "repetition penalty"), "repetition_penalty", "gen_rp",
                    format="%.2f")
seed = sampling_input(cols[5].number_input, t("种子", "seed"), "seed", "gen_seed")
per_path, own = quant.path_bytes(model), str(model.dtype).replace("torch.", "")
names = {"eager": own, "bf16": "bfloat16", "int8": "int8"}
path = st.radio(t("⚡ 解码用的权重（每个 token 读的字节）", "⚡ Decode with weights (bytes read per token)"), list(per_path),
                index=list(per_path).index(classroom.default_decode_path()),
                format_func=lambda k: f"{names[k]} · {costs.human(per_path[k], 'B')}", key="gen_fast", horizontal=True,
                help=t("解码每步要把全部权重读一遍，所以字节越少越快。bfloat16 只读 float32 一半的字节；int8 每行权重存成 int8 加"
                       "一个缩放因子，又减半。首次使用时建一份权重副本。logits 与 float32 相差舍入误差，长文本可能在某一步选出"
                       "不同的 token。“下一个 token” 和 “一直生成到结束” 都走这条路径；切换会重新开始。",
                       "Each decode step reads every weight once, so fewer bytes are faster. bfloat16 reads half the bytes of "
                       "float32; int8 stores each weight row as int8 with one scale, halving them again. The first use builds "
                       "a copy of the weights. Logits differ from float32 by rounding, so a long answer may pick a different "
                       "token at some step. Both “Next token” and “Run to the end” take this path; switching starts over."))
try:
    params = smp.SamplingParams(float(temp), int(top_k), float(top_p), float(rp), int(seed))
except (smp.SamplingError, ValueError) as e:
    st.error(t("参数超出范围：", "Out of range: ") + str(e))
    st.stop()

key = (id(model), prompt, s_.chat, max_new, params, path)
ss = st.session_state

def new_decoder() -> decode.Decoder:
    return model.decoder(prompt, chat=s_.chat, max_new_tokens=max_new, params=params, fast=None if path == "eager" else path)


try:
    if ss.get("_gen") is None or ss["_gen"]["key"] != key:
        if ss.get("_gen") is not None and ss["_gen"]["decoder"].steps:
            st.info(t("设置变了，已重新开始。", "The settings changed, so decoding starts over."))
        ss["_gen"] = dict(key=key, decoder=new_decoder())
except InputError as e:
    st.error(str(e))
    st.stop()
d: decode.Decoder = ss["_gen"]["decoder"]

b1, b2, b3 = st.columns(3)
clicked_next = b1.button(t("▶ 下一个 token", "▶ Next token"), key="gen_next", type="primary", width="stretch", disabled=d.done)
clicked_run = b2.button(t("⏩ 一直生成到结束", "⏩ Run to the end"), key="gen_run", width="stretch")
clicked_reset = b3.button(t("↺ 重来", "↺ Reset"), key="gen_reset", width="stretch")
box = st.empty()

def show_text(live=False):
    box.markdown(text_box(prompt, d.text, live), unsafe_allow_html=True)


if clicked_reset or (clicked_run and d.done):
    d = ss["_gen"]["decoder"] = new_decoder()
if clicked_next and not d.done:
    decode_step(d)
elif clicked_run:
    decode_to_end(d, lambda: show_text(live=True))      # drawn as tokens come, at most 5 times a second
show_text()
if not d.steps and (tr := get_trace(model)).token_ids[0, :tr.lengths[0]].tolist() == list(d.prompt_ids):  # preview, from the trace
    top, greedy = stage_data.next_token_top(tr, 0, tr.lengths[0] - 1, 8), params.greedy and params.repetition_penalty == 1
    page.chart(next_token_preview(top, pieces(model.tokenizer, top["ids"].tolist()), greedy, t("概率", "probability"),
                                  t("预览：下一个 token 的前 8 个候选", "Preview: the top 8 candidates for the next token") + (
                                      t("（贪心取红色那个）", " (greedy takes the red one)") if greedy else t("（按上面的设置抽样）", " (drawn with the settings above)"))), key="gen-preview")
if d.done:
    st.success(t("结束：" + ("遇到结束符 (EOS)。" if d.stopped == "eos" else f"达到最多 {d.budget} 个 token。"),
                 "Finished: " + ("the model produced an end-of-sequence token." if d.stopped == "eos"
                                 else f"reached the limit of {d.budget} tokens.")))
S0 = len(d.prompt_ids)
st.caption(t(f"聊天模板：{'开' if s_.chat else '关'}（在左侧边栏切换）。提示词共 {S0} 个 token" + ("（生成只用第一行提示词）。" if len(s_.prompts) > 1 else "。"),
             f"Chat template: {'on' if s_.chat else 'off'} (toggle in the sidebar). The prompt is {S0} tokens" + (" (generation uses the first prompt line only)." if len(s_.prompts) > 1 else ".")))

page.explain(r"x_{t+1} \sim \pi(\cdot \mid x_{\le t}),\qquad " + t(r"\text{预填充：全部 } S \text{ 个提示词 token 的 } K, V;\quad \text{解码：每步 } 1 \text{ 个 token，对照缓存}",
             r"\text{prefill: } K, V \text{ of all } S \text{ prompt tokens};\quad \text{decode: } 1 \text{ token against the cache}"), decode.Decoder.step,
             numbers=texts.numbers(c, B=1, S=S0, **facts.loaded(model)))
page.section("每一步", "Step by step")
if not d.steps:
    st.info(t(f"还没有生成。第一次点击 “下一个 token” 是**预填充 (prefill)**：一次处理全部 {S0} 个提示词 token，填满 KV 缓存。",
              f"Nothing generated yet. The first “Next token” click is the **prefill**: all {S0} prompt tokens in one pass, filling the KV cache."))
    st.stop()
KVE, KVB = t("KV 缓存条目", "KV entries"), t("KV 字节", "KV bytes")
rows = [{"#": j + 1, "token": p, "id": st_.token_id, t("阶段", "phase"): st_.phase,
         t("本步处理 token 数", "tokens processed"): st_.processed, "ms": round(1000 * st_.seconds, 1),
         KVE: st_.kv_tokens, KVB: st_.kv_bytes, t("概率", "prob"): round(st_.chosen_prob, 4)}
        for j, (st_, p) in enumerate(zip(d.steps, pieces(model.tokenizer, d.token_ids)))]
st.dataframe(rows, hide_index=True, width="stretch", key="gen_table")
steps, summary = [r["#"] for r in rows], analysis.decode_summary(d)
kvb, ms = summary["kv_bytes"], summary["ms"]
c1, c2 = st.columns(2)
with c1:
    page.view("kv_cache.bytes", kvb, lines({t("KV 缓存字节", "KV cache bytes"): kvb}, x=steps, xlabel=t("步", "step"),
                                            title=t("KV 缓存随步数增长", "The KV cache grows every step"), ylabel=t("字节", "bytes")), key="gen-kv")
with c2:
    page.view("step.ms", ms, lines({"ms": ms}, x=steps, title=t("每一步的耗时", "Time per step"),
                                   xlabel=t("步", "step"), ylabel="ms"), key="gen-ms")
if d.path != "eager":
    st.caption(t(f"这次用快速路径 {d.path}：权重 {d.weight_dtype}，激活和 KV 缓存 {d.compute_dtype}。",
                 f"This run used the fast path {d.path}: {d.weight_dtype} weights, activations and KV cache in {d.compute_dtype}."))
pre, mean_dec, per_tok = summary["prefill_ms"], summary["decode_ms"], summary["kv_per_token"]
m = st.columns(4)
m[0].metric(t(f"预填充：{S0} 个 token", f"prefill: {S0} tokens"), f"{pre:.0f} ms")
m[1].metric(t("解码：每个 token", "decode: per token"), f"{mean_dec:.0f} ms" if mean_dec else "—")
m[2].metric(t("解码速度", "decode speed"), f"{1000 / mean_dec:.1f} tok/s" if mean_dec else "—")
m[3].metric(t("每个 token 的 KV 缓存", "KV cache per token"), costs.human(per_tok, "B"))
kv_now, kv_n, L, nkv, hd = costs.human(rows[-1][KVB], "B"), rows[-1][KVE], c.num_hidden_layers, c.num_key_value_heads, c.head_dim
st.markdown(t(
    f"**预填充 vs 解码。** 预填充一次算完提示词的 {S0} 个 token（{pre:.0f} ms），每读一次权重服务全部 {S0} 个 token，提示够长时就受算力限制；"
    f"之后每步只算 1 个新 token" + (f"（平均 {mean_dec:.0f} ms）" if mean_dec else "") +
    f"，但仍要把全部权重从内存读一遍，所以主要受内存带宽限制。KV 缓存让每步不必重算旧 token 的 K 和 V："
    f"每个 token 存 2 × {L} 层 × {nkv} 个 KV 头 × {hd} 维 = {costs.human(per_tok, 'B')}，现在共 {kv_n} 条，{kv_now}。",
    f"**Prefill vs decode.** The prefill runs all {S0} prompt tokens in one pass ({pre:.0f} ms): each weight read serves "
    f"all {S0} tokens, so a long enough prompt is bound by arithmetic. Each later step handles one new token"
    + (f" ({mean_dec:.0f} ms on average)" if mean_dec else "") +
    f" but still reads every weight from memory, so it is bound by memory bandwidth. The KV cache spares each step "
    f"from recomputing old tokens' K and V: per token it stores 2 × {L} layers × {nkv} KV heads × {hd} dims = "
    f"{costs.human(per_tok, 'B')}; now {kv_n} entries, {kv_now}."))
