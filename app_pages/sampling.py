"""Stage 8 · Sampling: logits -> repetition penalty -> temperature -> top-k -> top-p -> softmax -> pick."""
import streamlit as st

from ops import analysis, checks
from ops import sampling as smp
from ui.page import StagePage
from ui.state import t
from viz.labels import pieces, short
from viz.sampling import bar_pair, stage_bars

page = StagePage("sampling")
model, trace, c = page.model, page.trace, page.config
V = c.vocab_size

cols = st.columns(7)
rp = cols[0].number_input(t("重复惩罚 ρ", "repetition penalty ρ"), value=1.0, step=0.1, format="%.2f", key="smp_rp",
                          help=t("1 = 关闭；范围 (0, 100]", "1 = off; range (0, 100]"))
temp = cols[1].number_input(t("温度 T", "temperature T"), value=0.8, step=0.1, format="%.2f", key="smp_temp",
                            help=t("0 = 贪心（取最大）；范围 [0, 100]", "0 = greedy (argmax); range [0, 100]"))
top_k = cols[2].number_input("top-k", value=50, step=1, key="smp_topk", help=t("0 = 关闭", "0 = off"))
top_p = cols[3].number_input("top-p", value=0.9, step=0.05, format="%.2f", key="smp_topp", help=t("1 = 关闭；范围 (0, 1]", "1 = off; range (0, 1]"))
seed = cols[4].number_input(t("随机种子", "seed"), value=0, step=1, key="smp_seed")
with cols[5]:
    b = page.row()
with cols[6]:
    N = st.slider(t("前 N 个候选", "top N candidates"), 5, 30, 10, key="smp_n")
try:
    params = smp.SamplingParams(float(temp), int(top_k) if float(top_k).is_integer() else float(top_k),
                                float(top_p), float(rp), int(seed) if float(seed).is_integer() else float(seed))
except smp.SamplingError as e:
    st.error(t("参数超出范围：", "Out of range: ") + str(e))
    st.stop()

n = trace.lengths[b]
sv = analysis.sampling_view(trace, b, params, N)
stages, cand, chosen = sv["stages"], sv["cand"].tolist(), sv["stages"]["chosen"]
names = [short(p, 8) for p in pieces(model.tokenizer, cand)]
names = [f"{nm}·{i}" if names.count(nm) > 1 else nm for nm, i in zip(names, cand)]
last = page.labels(b, None)[-1]
ch = pieces(model.tokenizer, [chosen])[0]
page.view("sampling.probs", stages["probs"],
          stage_bars(stages["probs"][cand], names, chosen, cand, probability=True, height=400,
                     ylabel=t("概率", "probability"),
                     title=t(f"下一个 token 的概率 π（T = {params.temperature:g}，k = {params.top_k:g}，p = {params.top_p:g}，ρ = {params.repetition_penalty:g}）；红色 = 选中的 “{short(ch, 12)}”",
                             f"Next-token probabilities π (T = {params.temperature:g}, k = {params.top_k:g}, p = {params.top_p:g}, ρ = {params.repetition_penalty:g}); red = the chosen “{short(ch, 12)}”")),
          key="smp-probs",
          caption=t(f"第 {b} 行最后一个 token 是 “{last}”（位置 {n - 1}）。候选 = 原始 logit 最高的 {N} 个 token。",
                    f"Row {b}'s last token is “{last}” (position {n - 1}). Candidates = the {N} tokens with the highest raw logit."))

page.explain([r"z'_v = \begin{cases} z_v/\rho & z_v>0,\ v\ \text{seen}\\ z_v\rho & z_v<0,\ v\ \text{seen}\\ z_v & \text{else}\end{cases}"
              r"\quad\to\quad z''=z'/T\quad\to\quad z''_v=-\infty\ \ (v\notin\text{top-}k\ \text{or outside top-}p)",
              r"\pi = \mathrm{softmax}(z''),\qquad \text{next} \sim \pi\quad(T = 0:\ \text{next} = \arg\max z')"],
             smp.apply_repetition_penalty, smp.apply_top_k, smp.apply_top_p, smp.sample_stages)
st.info(t("纠正：top-k 不是把其余的“设为 0”，而是把其余 token 的 **logit 设为 −∞**，softmax 之后它们的**概率**才是 0。"
          "（logit 为 0 的 token 仍有不小的概率！）",
          "A correction: top-k does not set the rest “to zero”; it sets their **logits to −inf**, so after softmax their "
          "**probability** is 0. (A logit of 0 would still get a sizeable probability!)"))

page.section("每一步：最后一个位置的 logits 如何变化", "Every stage at the last position")
STAGES = [("logits", t("① 原始 logits", "① raw logits")),
          ("penalized", t(f"② 重复惩罚后 (ρ = {params.repetition_penalty:g})", f"② after repetition penalty (ρ = {params.repetition_penalty:g})")),
          ("tempered", t(f"③ 除以温度后 (T = {params.temperature:g})", f"③ after temperature (T = {params.temperature:g})")),
          ("top_k", t(f"④ top-k 之后 (k = {params.top_k:g})", f"④ after top-k (k = {params.top_k:g})")),
          ("top_p", t(f"⑤ top-p 之后 (p = {params.top_p:g})", f"⑤ after top-p (p = {params.top_p:g})"))]
if params.greedy:
    st.warning(t("温度 = 0：贪心解码，直接取惩罚后 logit 最大的 token，跳过温度、top-k、top-p 和随机抽样。",
                 "Temperature = 0: greedy decoding takes the largest logit after the penalty and skips temperature, top-k, top-p and the draw."))
for j, (key, title) in enumerate(STAGES):
    if j % 2 == 0:
        grid = st.columns(2)
    with grid[j % 2]:
        page.view(f"sampling.{key}", stages[key], stage_bars(stages[key][cand], names, chosen, cand, title), key=f"smp-{key}")
st.markdown(t(f"### ⑦ 选中：“{ch}”（id {chosen}），概率 {float(stages['probs'][chosen]):.3f}",
              f"### ⑦ Chosen: “{ch}” (id {chosen}), probability {float(stages['probs'][chosen]):.3f}"))
st.caption(t(f"top-k/top-p 之后 {sv['n_inf']:,} 个 token 的 logit 为 −∞（概率正好为 0），只剩 {V - sv['n_inf']:,} 个候选。红色 = 选中的 token。",
             f"After top-k/top-p, {sv['n_inf']:,} tokens have logit −inf (probability exactly 0); {V - sv['n_inf']:,} remain. Red = the chosen token."))

page.section("抽样很多次 vs 概率", "Drawing many times vs the probabilities")
draws = st.select_slider(t("抽样次数", "draws"), options=[100, 1000, 5000], value=1000, key="smp_draws")
freq, gap = analysis.draw_frequencies(stages["probs"], draws, params.seed, chosen if params.greedy else None)
page.view("sampling.frequency", freq,
          bar_pair(names, stages["probs"][cand], freq[cand], t("概率 π", "probability π"),
                   t(f"{draws} 次抽样的频率", f"frequency in {draws} draws"),
                   title=t(f"种子 {params.seed}：频率逼近概率", f"Seed {params.seed}: frequencies approach the probabilities"),
                   ylabel=t("比例", "share")), key="smp-draws")
st.caption(t(f"最大偏差 {gap:.3f}；抽样越多，偏差越小（约 1/√次数 = {1 / draws ** 0.5:.3f}）。同一个种子，每次结果完全一样。",
             f"Largest gap {gap:.3f}; it shrinks with more draws (about 1/√draws = {1 / draws ** 0.5:.3f}). The same seed gives the same result every time."))

page.checks(checks.sampling(stages, sv["logits"]))
page.at_scale()
