"""Stage 8 · Sampling: logits -> repetition penalty -> temperature -> top-k -> top-p -> softmax -> pick."""
import streamlit as st

from content.words import say
from ops.engine import sampling as smp
from ops.lab import checks, stage_data
from ui import by_hand
from ui.page import StagePage
from ui.pickers import ranged, sampling_input
from ui.session import lang, t
from viz.labels import pieces, short
from viz.sampling import bar_pair, candidates_chart, stage_bars

page = StagePage("sampling")
model, trace, c = page.model, page.trace, page.config
V = c.vocab_size

# ---- the main picture: the candidates' probabilities, raw and under the settings beside it ------------
knobs, main = st.columns([1, 3])
with knobs:
    # shared with the Generate page (ui.pickers.SAMPLING): a change here shows there
    temp = sampling_input(st.slider, t("温度 T（0 = 贪心）", "temperature T (0 = greedy)"), "temperature",
                          "smp_temp")
    top_k = sampling_input(st.slider, t("top-k（0 = 关闭）", "top-k (0 = off)"), "top_k", "smp_topk")
    top_p = sampling_input(st.slider, t("top-p（1 = 关闭）", "top-p (1 = off)"), "top_p", "smp_topp")
    min_p = sampling_input(st.slider, t("min-p（0 = 关闭）", "min-p (0 = off)"), "min_p", "smp_minp")
    rp = sampling_input(st.slider, t("重复惩罚 ρ（1 = 关闭）", "repetition penalty ρ (1 = off)"),
                        "repetition_penalty", "smp_rp")
    N = st.slider(ranged(t("前 N 个候选", "top N candidates"), 5, 30), 5, 30, 10, key="smp_n")
    seed = sampling_input(st.number_input, t("随机种子", "seed"), "seed", "smp_seed")
    b = page.row()
params = smp.SamplingParams(float(temp), int(top_k), float(top_p), float(rp), int(seed), float(min_p))
n = trace.lengths[b]
sv = page.memo(("view", b, params, N), lambda: stage_data.sampling_view(trace, b, params, N))
stages, cand, chosen = sv["stages"], sv["cand"].tolist(), sv["stages"]["chosen"]
names = [short(p, 10) for p in pieces(model.tokenizer, cand)]
names = [f"{nm}·{i}" if names.count(nm) > 1 else nm for nm, i in zip(names, cand)]
last = page.labels(b, None)[-1]
ch = pieces(model.tokenizer, [chosen])[0]
setting = (f"T = {params.temperature:g}, k = {params.top_k:g}, p = {params.top_p:g}, min-p = {params.min_p:g}, "
           f"ρ = {params.repetition_penalty:g}")
with main:
    chart = page.memo(("chart", b, params, N), lambda: candidates_chart(
        stages, cand, names, words=dict(raw=t("原始 softmax（T = 1，不截断）", "raw softmax (T = 1, no cut)"),
                                        now=t(f"当前设置（{setting}）", f"current settings ({setting})"),
                                        chosen=t("选中的 token", "the chosen token"),
                                        cut_k=t("被 top-k 截掉", "cut by top-k"),
                                        cut_p=t("被 top-p 截掉", "cut by top-p")),
        title=say("page_sampling.probs_title", lang(), chosen=short(ch, 12))))
    page.view("sampling.probs", stages["probs"], chart, key="smp-probs",
              caption=say("page_sampling.probs_caption", lang(), b=b, last=short(last, 12), pos=n - 1, N=N))

page.explain([say("page_sampling.formula_stages", lang()), say("page_sampling.formula_draw", lang())],
             smp.apply_repetition_penalty, smp.apply_top_k, smp.apply_top_p, smp.sample_stages,
             by_hand=by_hand.softmax_block)
st.info(say("page_sampling.a_correction_top_k", lang()))

if box := page.more(say("page_sampling.more_stages", "zh"), say("page_sampling.more_stages", "en"), "stages"):
    with box:
        STAGES = [("logits", t("① 原始 logits", "① raw logits"), ""),
                  ("penalized", t("② 重复惩罚后", "② after repetition penalty"),
                   f" (ρ = {params.repetition_penalty:g})"),
                  ("tempered", t("③ 除以温度后", "③ after temperature"), f" (T = {params.temperature:g})"),
                  ("top_k", t("④ top-k 之后", "④ after top-k"), f" (k = {params.top_k:g})"),
                  ("top_p", t("⑤ top-p 之后", "⑤ after top-p"), f" (p = {params.top_p:g})"),
                  ("min_p", t("⑥ min-p 之后", "⑥ after min-p"), f" (min-p = {params.min_p:g})")]
        if params.greedy:
            st.warning(say("page_sampling.temperature_greedy_decoding_takes", lang()))
        # labels without the live values: a tab stays open
        tabs = page.tabs([label for _, label, _ in STAGES], "stages")
        for tab, (key, label, value) in zip(tabs, STAGES):
            if tab:
                with tab:
                    page.view(f"sampling.{key}", stages[key],
                              stage_bars(stages[key][cand], names, chosen, cand, label + value),
                              key=f"smp-{key}")
        st.markdown(t(f"### ⑦ 选中：“{ch}”（id {chosen}），概率 {float(stages['probs'][chosen]):.3f}",
                      f"### ⑦ Chosen: “{ch}” (id {chosen}), probability {float(stages['probs'][chosen]):.3f}"))
        st.caption(say("page_sampling.cut_count", lang(), cut=format(sv["n_inf"], ","),
                       left=format(V - sv["n_inf"], ",")))

DRAWS = [100, 1000, 5000]
if box := page.more("抽样很多次：频率与概率对比", "Drawing many times vs the probabilities", "draws"):
    with box:
        draws = st.select_slider(ranged(t("抽样次数", "draws"), *DRAWS[::2]), options=DRAWS, value=1000,
                                 key="smp_draws")
        freq, gap = stage_data.draw_frequencies(stages["probs"], draws, params.seed, chosen if params.greedy else None)
        page.view("sampling.frequency", freq,
                  bar_pair(names, stages["probs"][cand], freq[cand], t("概率 π", "probability π"),
                           t(f"{draws} 次抽样的频率", f"frequency in {draws} draws"),
                           title=t(f"种子 {params.seed}：频率逼近概率",
                                   f"Seed {params.seed}: frequencies approach the probabilities"),
                           ylabel=t("比例", "share")), key="smp-draws")
        st.caption(say("page_sampling.draws_gap", lang(), gap=format(gap, ".3f"),
                       expected=format(1 / draws ** 0.5, ".3f")))

page.checks(checks.sampling(stages, sv["logits"], params.greedy))
page.at_scale()
