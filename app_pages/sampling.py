"""Stage 8 · Sampling: logits -> repetition penalty -> temperature -> top-k -> top-p -> softmax -> pick."""
import streamlit as st
import torch

from ops import sampling as smp
from content import texts
from ui import components as ui
from ui import decoding as dec
from ui.state import require_trace, t, row_picker

model, trace = require_trace()
c = model.config
B, S, V = trace.B, trace.S, c.vocab_size

st.title(t("8 · 采样：从分数到下一个 token", "8 · Sampling: from scores to the next token"))
ui.pipeline_strip("sampling", f"logits[:, -1] [{B}, {V}]", f"next id [{B}, 1]")
ui.explanation("sampling", texts.numbers(c, model.tokenizer.vocab_size, B, S))

st.header(t("公式与代码", "Formula and code"))
ui.formula_and_code([r"z'_v = \begin{cases} z_v/\rho & z_v>0,\ v\ \text{seen}\\ z_v\rho & z_v<0,\ v\ \text{seen}\\ z_v & \text{else}\end{cases}"
                     r"\quad\to\quad z''=z'/T\quad\to\quad z''_v=-\infty\ \ (v\notin\text{top-}k\ \text{or outside top-}p)",
                     r"\pi = \mathrm{softmax}(z''),\qquad \text{next} \sim \pi\quad(T = 0:\ \text{next} = \arg\max z')"],
                    smp.apply_repetition_penalty, smp.apply_top_k, smp.apply_top_p, smp.sample_stages)
st.info(t("纠正：top-k 不是把其余的“设为 0”，而是把其余 token 的 **logit 设为 −∞**，softmax 之后它们的**概率**才是 0。"
          "（logit 为 0 的 token 仍有不小的概率！）",
          "A correction: top-k does not set the rest “to zero”; it sets their **logits to −inf**, so after softmax their "
          "**probability** is 0. (A logit of 0 would still get a sizeable probability!)"))

st.header(t("参数", "Controls"))
cols = st.columns(5)
rp = cols[0].number_input(t("重复惩罚 ρ", "repetition penalty ρ"), value=1.0, step=0.1, format="%.2f", key="smp_rp",
                          help=t("1 = 关闭；范围 (0, 100]", "1 = off; range (0, 100]"))
temp = cols[1].number_input(t("温度 T", "temperature T"), value=0.8, step=0.1, format="%.2f", key="smp_temp",
                            help=t("0 = 贪心（取最大）；范围 [0, 100]", "0 = greedy (argmax); range [0, 100]"))
top_k = cols[2].number_input("top-k", value=50, step=1, key="smp_topk", help=t("0 = 关闭", "0 = off"))
top_p = cols[3].number_input("top-p", value=0.9, step=0.05, format="%.2f", key="smp_topp", help=t("1 = 关闭；范围 (0, 1]", "1 = off; range (0, 1]"))
seed = cols[4].number_input(t("随机种子", "seed"), value=0, step=1, key="smp_seed")

try:
    params = smp.SamplingParams(float(temp), int(top_k) if float(top_k).is_integer() else float(top_k),
                                float(top_p), float(rp), int(seed) if float(seed).is_integer() else float(seed))
except smp.SamplingError as e:
    st.error(t("参数超出范围：", "Out of range: ") + str(e))
    st.stop()

st.header(t("实时张量：最后一个位置的每一步", "Live tensors: every stage at the last position"))
c1, c2 = st.columns(2)
with c1:
    b = row_picker(B)
with c2:
    N = st.slider(t("显示前 N 个候选", "top N candidates shown"), 5, 30, 10, key="smp_n")
n = trace.lengths[b]
seen = trace.token_ids[b, :n].tolist()
logits = trace.logits[b, n - 1].float()                                   # (V,)
stages = smp.sample_stages(logits, seen, params, smp.make_generator(params.seed))
cand = torch.topk(stages["logits"], N).indices
names = [f"{p}" for p in dec.short_labels(model, cand.tolist(), 8)]
names = [f"{nm}·{i}" if names.count(nm) > 1 else nm for nm, i in zip(names, cand.tolist())]
labels = ui.token_labels(model, trace, b)
st.caption(t(f"第 {b} 行最后一个 token 是 “{labels[-1]}”（位置 {n - 1}）。候选 = 原始 logit 最高的 {N} 个 token。",
             f"Row {b}'s last token is “{labels[-1]}” (position {n - 1}). Candidates = the {N} tokens with the highest raw logit."))

STAGES = [("logits", t("① 原始 logits", "① raw logits")),
          ("penalized", t(f"② 重复惩罚后 (ρ = {params.repetition_penalty:g})", f"② after repetition penalty (ρ = {params.repetition_penalty:g})")),
          ("tempered", t(f"③ 除以温度后 (T = {params.temperature:g})", f"③ after temperature (T = {params.temperature:g})")),
          ("top_k", t(f"④ top-k 之后 (k = {params.top_k:g})", f"④ after top-k (k = {params.top_k:g})")),
          ("top_p", t(f"⑤ top-p 之后 (p = {params.top_p:g})", f"⑤ after top-p (p = {params.top_p:g})")),
          ("probs", t("⑥ softmax 概率", "⑥ softmax probabilities"))]
if params.greedy:
    st.warning(t("温度 = 0：贪心解码，直接取惩罚后 logit 最大的 token，跳过温度、top-k、top-p 和随机抽样。",
                 "Temperature = 0: greedy decoding takes the largest logit after the penalty and skips temperature, top-k, top-p and the draw."))
chosen = stages["chosen"]
color_of = ["#d62728" if int(i) == chosen else "#1f77b4" for i in cand.tolist()]
import plotly.graph_objects as go  # noqa: E402
from viz.figures import base_layout  # noqa: E402

grid = st.columns(2)
for j, (key, title) in enumerate(STAGES):
    v = stages[key][cand]
    finite = torch.isfinite(v)
    shown = torch.where(finite, v, torch.zeros_like(v))
    text = [f"{float(x):.2f}" if f else "−∞" for x, f in zip(v, finite)] if key != "probs" else [f"{float(x):.3f}" for x in v]
    fig = go.Figure([go.Bar(x=names, y=shown.tolist(), text=text, textposition="outside", marker_color=color_of,
                            textfont=dict(size=16), cliponaxis=False)],
                    layout=base_layout(title, "", t("概率", "probability") if key == "probs" else "logit", 440,
                                   dict(type="category", tickangle=-45), uniformtext=dict(minsize=13, mode="show")))
    if j % 2 == 0:
        grid = st.columns(2)
    with grid[j % 2]:
        ui.tensor_view(f"sampling.{key}", stages[key], fig, key=f"smp-{key}")
n_inf = int((~torch.isfinite(stages["top_p"])).sum())
ch = dec.pieces(model, [chosen])[0]
st.markdown(t(f"### ⑦ 选中：“{ch}”（id {chosen}），概率 {float(stages['probs'][chosen]):.3f}",
              f"### ⑦ Chosen: “{ch}” (id {chosen}), probability {float(stages['probs'][chosen]):.3f}"))
st.caption(t(f"top-k/top-p 之后 {n_inf:,} 个 token 的 logit 为 −∞（概率正好为 0），只剩 {V - n_inf:,} 个候选。红色 = 选中的 token。",
             f"After top-k/top-p, {n_inf:,} tokens have logit −inf (probability exactly 0); {V - n_inf:,} remain. Red = the chosen token."))

st.header(t("抽样很多次 vs 概率", "Drawing many times vs the probabilities"))
draws = st.select_slider(t("抽样次数", "draws"), options=[100, 1000, 5000], value=1000, key="smp_draws")
gen = smp.make_generator(params.seed)
if params.greedy:
    counts = torch.zeros(V)
    counts[chosen] = draws
else:
    picks = torch.multinomial(stages["probs"], draws, replacement=True, generator=gen)
    counts = torch.bincount(picks, minlength=V).float()
freq = counts / draws
ui.tensor_view("sampling.frequency", freq,
               dec.bar_pair(names, stages["probs"][cand], freq[cand], t("概率 π", "probability π"),
                            t(f"{draws} 次抽样的频率", f"frequency in {draws} draws"),
                            title=t(f"种子 {params.seed}：频率逼近概率", f"Seed {params.seed}: frequencies approach the probabilities"),
                            ylabel=t("比例", "share")), key="smp-draws")
gap = float((freq - stages["probs"]).abs().max())
st.caption(t(f"最大偏差 {gap:.3f}；抽样越多，偏差越小（约 1/√次数 = {1 / draws ** 0.5:.3f}）。同一个种子，每次结果完全一样。",
             f"Largest gap {gap:.3f}; it shrinks with more draws (about 1/√draws = {1 / draws ** 0.5:.3f}). The same seed gives the same result every time."))

st.header(t("与 PyTorch 对照", "Check against PyTorch"))
ref = torch.softmax(stages["top_p"], -1)
ui.check("sample_stages probs vs torch.softmax(top_p stage)", stages["probs"], ref, tol=1e-6)
ui.check(t("原始 logits vs trace.logits[b, -1]", "raw logits vs trace.logits[b, -1]"), stages["logits"], logits, tol=0.0)

ui.at_scale("sampling", B, S)
