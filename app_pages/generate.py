"""Stage 9 · Generate: the autoregressive loop with a KV cache; prefill once, then one token per step."""
import time

import streamlit as st
import torch

from ops import sampling as smp
from content import texts
from ops.inputs import max_new_tokens_limit
from ops.model import InputError, KVCache
from ui import components as ui
from ui import decoding as dec
from ui.state import get_model, settings, t
from viz import lines

model = get_model()
if model is None:
    st.stop()
c = model.config
s_ = settings()

st.title(t("9 · 生成：一个 token 接一个 token", "9 · Generate: one token at a time"))
ui.pipeline_strip("generate", "prompt ids [1, S]", "text")
if not s_.prompts:
    st.warning(t("请在左侧输入框中写一句话。", "Type a prompt in the sidebar."))
    st.stop()
prompt = s_.prompts[0]
if len(s_.prompts) > 1:
    st.caption(t(f"生成只用第一行提示词：“{prompt}”。", f"Generation uses the first prompt line only: “{prompt}”."))

st.header(t("参数", "Controls"))
cols = st.columns(6)
max_new = int(cols[0].number_input(t("最多生成 token 数", "max new tokens"), min_value=1, max_value=min(256, max_new_tokens_limit(model.config)), value=min(24, max_new_tokens_limit(model.config)), step=1, key="gen_max"))
temp = cols[1].number_input(t("温度 T", "temperature T"), value=0.0, step=0.1, format="%.2f", key="gen_temp",
                            help=t("0 = 贪心", "0 = greedy"))
top_k = cols[2].number_input("top-k", value=0, step=1, key="gen_topk")
top_p = cols[3].number_input("top-p", value=1.0, step=0.05, format="%.2f", key="gen_topp")
rp = cols[4].number_input(t("重复惩罚", "repetition penalty"), value=1.0, step=0.1, format="%.2f", key="gen_rp")
seed = cols[5].number_input(t("种子", "seed"), value=0, step=1, key="gen_seed")
fast = st.toggle(t("⚡ 快速路径：“一直生成到结束” 用 bfloat16 权重", "⚡ Fast path: “Run to the end” uses bfloat16 weights"),
                 key="gen_fast", value=False,
                 help=t("解码每步要把全部权重读一遍；bfloat16 只读 float32 一半的字节，本机上约快 2 倍。首次使用时建一份 "
                        f"bfloat16 权重副本（约 {model.num_parameters * 2 / 1e9:.1f} GB 内存）。logits 与 float32 相差 "
                        "bfloat16 的舍入，长文本可能在某一步选出不同的 token。“下一个 token” 仍用 float32。",
                        "Each decode step reads every weight once; bfloat16 reads half the bytes of float32, about 2x the "
                        f"tokens/s here. The first use builds a bfloat16 copy of the weights (about "
                        f"{model.num_parameters * 2 / 1e9:.1f} GB of memory). Its logits differ from float32 by bfloat16 "
                        "rounding, so a long answer may pick a different token at some step. “Next token” stays float32."))
st.caption(t(f"聊天模板：{'开' if s_.chat else '关'}（在左侧边栏切换）。提示词：“{prompt}”",
             f"Chat template: {'on' if s_.chat else 'off'} (toggle in the sidebar). Prompt: “{prompt}”"))
try:
    params = smp.SamplingParams(float(temp), int(top_k), float(top_p), float(rp), int(seed))
except (smp.SamplingError, ValueError) as e:
    st.error(t("参数超出范围：", "Out of range: ") + str(e))
    st.stop()

key = (id(model), prompt, s_.chat, max_new, params)


def fresh_state():
    """Tokenise the prompt and allocate the KV cache; nothing computed yet."""
    _, _, rows = model.encode_prompts(prompt, s_.chat)
    ids = rows[0]
    n = min(max_new, c.max_position_embeddings - len(ids))
    return dict(key=key, prompt_ids=ids, next_ids=torch.tensor([ids]), seen=list(ids), out_ids=[], rows=[],
                cache=KVCache(c, 1, len(ids) + max(n, 1), model.device, model.dtype), budget=n,
                gen=smp.make_generator(params.seed), done=n <= 0, stopped="")


def row(piece, tid, phase, processed, seconds, kv_tokens, kv_bytes, prob):
    return {"#": 0, "token": piece, "id": tid, t("阶段", "phase"): phase, t("本步处理 token 数", "tokens processed"): processed,
            "ms": round(1000 * seconds, 1), t("KV 缓存条目", "KV entries"): kv_tokens, t("KV 字节", "KV bytes"): kv_bytes,
            t("概率", "prob"): round(prob, 4)}


EOS = set(getattr(model.tokenizer, "eos_token_ids", ()) or ()) | set(c.eos_ids)


def next_token(gs):
    """One step: prefill (whole prompt) the first time, then one token against the cache."""
    cache, ids = gs["cache"], gs["next_ids"]
    t0 = time.perf_counter()
    S = ids.shape[1]
    positions = torch.arange(cache.length, cache.length + S)[None]
    key_valid = torch.ones(1, cache.length + S, dtype=torch.bool)
    logits = model.forward(ids, positions, key_valid, cache=cache, last_only=True)[0, -1]
    stages = smp.sample_stages(logits, gs["seen"], params, gs["gen"])
    tok = stages["chosen"]
    secs = time.perf_counter() - t0
    r = row(dec.pieces(model, [tok])[0], tok, "prefill" if not gs["rows"] else "decode", S, secs, cache.length,
            cache.nbytes, float(stages["probs"][tok]))
    r["#"] = len(gs["rows"]) + 1
    gs["rows"].append(r)
    gs["out_ids"].append(tok)
    gs["seen"].append(tok)
    gs["next_ids"] = torch.tensor([[tok]])
    if tok in EOS:
        gs["done"], gs["stopped"] = True, "eos"
    elif len(gs["out_ids"]) >= gs["budget"]:
        gs["done"], gs["stopped"] = True, "max_new_tokens"


ss = st.session_state
try:
    if ss.get("_gen") is None or ss["_gen"]["key"] != key:
        if ss.get("_gen") is not None and ss["_gen"]["rows"]:
            st.info(t("设置变了，已重新开始。", "The settings changed, so decoding starts over."))
        ss["_gen"] = fresh_state()
except InputError as e:
    st.error(str(e))
    st.stop()
gs = ss["_gen"]

b1, b2, b3 = st.columns(3)
clicked_next = b1.button(t("▶ 下一个 token", "▶ Next token"), key="gen_next", type="primary", width="stretch", disabled=gs["done"])
clicked_run = b2.button(t("⏩ 一直生成到结束", "⏩ Run to the end"), key="gen_run", width="stretch")
clicked_reset = b3.button(t("↺ 重来", "↺ Reset"), key="gen_reset", width="stretch")

st.subheader(t("生成的文本", "Generated text"))
box = st.empty()


def show_text(out_ids, live=False):
    txt = model.tokenizer.decode(out_ids, skip_special_tokens=True) if out_ids else ""
    box.markdown(f'<div style="font-size:26px;line-height:1.5;padding:12px;border:2px solid #ddd;border-radius:8px;'
                 f'min-height:64px"><span style="color:#888">{dec.html_escape(prompt)}</span> '
                 f'<b>{dec.html_escape(txt)}</b>{"▌" if live else ""}</div>', unsafe_allow_html=True)


if clicked_reset:
    ss["_gen"] = gs = fresh_state()
elif clicked_next and not gs["done"]:
    next_token(gs)
elif clicked_run:
    streamed = []

    def on_token(step):
        streamed.append(step.token_id)
        show_text(streamed, live=True)

    try:
        g = model.generate(prompt, chat=s_.chat, max_new_tokens=max_new, temperature=params.temperature,
                           top_k=int(params.top_k), top_p=params.top_p, repetition_penalty=params.repetition_penalty,
                           seed=int(params.seed), on_token=on_token, fast=fast)
    except (InputError, smp.SamplingError) as e:
        st.error(str(e))
        st.stop()
    gs = ss["_gen"] = fresh_state()
    for j, stp in enumerate(g.steps):
        r = row(dec.pieces(model, [stp.token_id])[0], stp.token_id, stp.phase,
                len(g.prompt_ids) if stp.phase == "prefill" else 1, stp.seconds, stp.kv_tokens, stp.kv_bytes, stp.chosen_prob)
        r["#"] = j + 1
        gs["rows"].append(r)
    gs["out_ids"] = list(g.token_ids)
    gs["done"], gs["stopped"], gs["dtype"] = True, g.stopped, g.compute_dtype

show_text(gs["out_ids"])
S0 = len(gs["prompt_ids"])
if gs["done"]:
    st.success(t("结束：" + ("遇到结束符 (EOS)。" if gs["stopped"] == "eos" else f"达到最多 {gs['budget']} 个 token。"),
                 "Finished: " + ("the model produced an end-of-sequence token." if gs["stopped"] == "eos"
                                 else f"reached the limit of {gs['budget']} tokens.")))

st.subheader(t("每一步", "Step by step"))
rows = gs["rows"]
if not rows:
    st.info(t(f"还没有生成。第一次点击 “下一个 token” 是**预填充 (prefill)**：一次处理全部 {S0} 个提示词 token，填满 KV 缓存。",
              f"Nothing generated yet. The first “Next token” click is the **prefill**: all {S0} prompt tokens in one pass, filling the KV cache."))
else:
    st.dataframe(rows, hide_index=True, width="stretch", key="gen_table")
    steps = [r["#"] for r in rows]
    kvb = torch.tensor([float(r[t("KV 字节", "KV bytes")]) for r in rows])
    ms = torch.tensor([float(r["ms"]) for r in rows])
    c1, c2 = st.columns(2)
    with c1:
        ui.tensor_view("kv_cache.bytes", kvb, lines({t("KV 缓存字节", "KV cache bytes"): kvb}, x=steps,
                                                     title=t("KV 缓存随步数增长", "The KV cache grows every step"),
                                                     xlabel=t("步", "step"), ylabel=t("字节", "bytes")), key="gen-kv")
    with c2:
        ui.tensor_view("step.ms", ms, lines({"ms": ms}, x=steps, title=t("每一步的耗时", "Time per step"),
                                            xlabel=t("步", "step"), ylabel="ms"), key="gen-ms")

    dtype = getattr(torch, gs.get("dtype", str(model.dtype).replace("torch.", "")))
    per_tok = 2 * c.num_hidden_layers * c.num_key_value_heads * c.head_dim * torch.tensor([], dtype=dtype).element_size()
    if gs.get("dtype", "float32") != str(model.dtype).replace("torch.", ""):
        st.caption(t(f"这次用快速路径：权重和 KV 缓存都是 {gs['dtype']}。", f"This run used the fast path: weights and KV cache in {gs['dtype']}."))
    pre = rows[0]["ms"]
    dec_ms = [r["ms"] for r in rows[1:]]
    mean_dec = sum(dec_ms) / len(dec_ms) if dec_ms else None
    m = st.columns(4)
    m[0].metric(t(f"预填充：{S0} 个 token", f"prefill: {S0} tokens"), f"{pre:.0f} ms")
    m[1].metric(t("解码：每个 token", "decode: per token"), f"{mean_dec:.0f} ms" if mean_dec else "—")
    m[2].metric(t("解码速度", "decode speed"), f"{1000 / mean_dec:.1f} tok/s" if mean_dec else "—")
    m[3].metric(t("每个 token 的 KV 缓存", "KV cache per token"), ui.human(per_tok, "B"))
    st.markdown(t(
        f"**预填充 vs 解码。** 预填充一次算完提示词的 {S0} 个 token（{pre:.0f} ms），大矩阵乘法能把算力用满（计算受限）；"
        f"之后每步只算 1 个新 token"
        + (f"（平均 {mean_dec:.0f} ms）" if mean_dec else "") +
        f"，但仍要把全部权重从内存读一遍，所以主要受内存带宽限制。KV 缓存让每步不必重算旧 token 的 K 和 V："
        f"每个 token 存 2 × {c.num_hidden_layers} 层 × {c.num_key_value_heads} 个 KV 头 × {c.head_dim} 维 = {ui.human(per_tok, 'B')}，"
        f"现在共 {rows[-1][t('KV 缓存条目', 'KV entries')]} 条，{ui.human(rows[-1][t('KV 字节', 'KV bytes')], 'B')}。",
        f"**Prefill vs decode.** The prefill runs all {S0} prompt tokens in one pass ({pre:.0f} ms): big matrix products keep "
        f"the arithmetic units busy (compute-bound). Each later step handles one new token"
        + (f" ({mean_dec:.0f} ms on average)" if mean_dec else "") +
        f" but still reads every weight from memory, so it is bound by memory bandwidth. The KV cache spares each step "
        f"from recomputing old tokens' K and V: per token it stores 2 × {c.num_hidden_layers} layers × "
        f"{c.num_key_value_heads} KV heads × {c.head_dim} dims = {ui.human(per_tok, 'B')}; now "
        f"{rows[-1][t('KV 缓存条目', 'KV entries')]} entries, {ui.human(rows[-1][t('KV 字节', 'KV bytes')], 'B')}."))

st.header(t("讲解", "Explanation"))
ui.explanation("decode", texts.numbers(c, model.tokenizer.vocab_size, 1, S0))
