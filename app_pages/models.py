"""Two models side by side: the loaded model (A) and a second one picked here (B) on the same prompt. The config
differences with what each changes in the operators and in bytes, both next-token distributions over the union of
their top tokens, the same texts through both tokenizers, attention at the same relative depth and the head atlas
counts of both. Every number comes from ops/lab/models_data.py; the words from content/models.py."""
import streamlit as st

from content import models as words
from content.words import say
from ops.lab import models_data as cm
from ui import experiments_state, models_second
from ui.blocks import table
from ui.page import StagePage
from ui.pickers import picker
from ui.session import lang, settings, t
from viz import models as vm
from viz.labels import short

page = StagePage("models")
model, trace = page.model, page.trace
source_b = models_second.pick()
model_b = models_second.load(source_b) if source_b else None
trace_b = models_second.trace(model_b, source_b) if model_b is not None else None
if trace_b is None:
    if source_b is None:
        st.info(t("请输入第二个模型的路径。", "Type the second model's path."))
    st.stop()
name_a, name_b = model.config.name or "A", model_b.config.name or "B"
samples = {**words.SAMPLES, "prompt": trace.prompts[0]}
V = page.memo(("compare", source_b), lambda: cm.compare(model, trace, model_b, trace_b, samples))
nums = page.memo(("numbers", source_b), lambda: words.numbers(model.config, model_b.config, name_a, name_b, V["rows"]))

# ---- above the fold: the config differences and the next token ---------------------------------------------------
left, right = st.columns([4, 3])
with left:
    st.markdown(t(f"**A = {name_a}，B = {name_b}：{nums['rows']} 行配置中 {nums['differ']} 行不同**",
                  f"**A = {name_a}, B = {name_b}: {nums['differ']} of {nums['rows']} config rows differ**"))
    table(words.config_table(V["rows"], lang(), effects=False))
with right:
    page.chart(page.memo(("next-fig", source_b), lambda: vm.next_token_bars(
        V["next"], name_a, name_b, missing=t("不是单个 token", "not one token"), xlabel=t("概率", "probability"),
        title=t("下一个 token：两边前 8 名的并集", "Next token: both models' top 8, joined"))), "models-next")
    st.caption(say("page_models.tokens_caption", lang(), prompt=short(trace.prompts[0], 40)))

page.section("每一处差别改变了什么", "What each difference changes")
table(words.effect_table(V["rows"], lang()))
st.markdown(vm.labelled_chips(t("**特殊 token**", "**Special tokens**"), words.special_lines(V["rows"], lang())),
            unsafe_allow_html=True)
page.explain(key="models", numbers=nums)

# ---- below: tokenization, attention, the head atlas ----------------------------------------------------------------
page.section("同一段文字，两个分词器", "The same text through both tokenizers")
table(words.token_table(V["tokens"], lang()))
st.caption(say("page_models.orange_pieces_the_other", lang()))
for row in V["tokens"]:
    st.markdown(f"**{words.sample_name(row['name'], lang())}** · A ({row['n_a']}): "
                f"{vm.pieces_html(row['pieces_a'])}<br>B ({row['n_b']}): {vm.pieces_html(row['pieces_b'])}",
                unsafe_allow_html=True)

page.section("同一相对深度的注意力", "Attention at the same relative depth")
depth = picker(t("相对深度（%）：0 = 第一层，100 = 最后一层", "relative depth (%): 0 = first layer, 100 = last"),
               "depth", 0, 100, default=50)
att = page.memo(("attention", source_b, depth), lambda: cm.attention(trace, trace_b, depth, percent=True))
(la, lb), (ida, idb) = att["layers"], att["ids"]
page.chart(page.memo(("attention-fig", source_b, depth), lambda: vm.attention_pair(
    *att["maps"], vm.token_labels(model.tokenizer, ida), vm.token_labels(model_b.tokenizer, idb),
    t(f"A · {name_a} · 第 {la} 层（共 {model.config.num_hidden_layers}）· 各头平均",
      f"A · {name_a} · layer {la} of {model.config.num_hidden_layers} · mean over heads"),
    t(f"B · {name_b} · 第 {lb} 层（共 {model_b.config.num_hidden_layers}）· 各头平均",
      f"B · {name_b} · layer {lb} of {model_b.config.num_hidden_layers} · mean over heads"))), "models-attention")

if box := page.more(say("page_models.more_atlas", "zh"), say("page_models.more_atlas", "en"), "atlas"):
    with box:
        s = settings()
        atlas_a = experiments_state.atlas(*experiments_state.model_key())
        atlas_b = experiments_state.atlas(source_b, s.device, s.dtype)
        rows = cm.atlas_rows(atlas_a["counts"], atlas_b["counts"])
        page.chart(vm.atlas_pair(rows, words.atlas_names(lang()), name_a, name_b,
                                 ylabel=t("占全部头的比例", "share of heads"),
                                 title=say("page_models.each_head_labelled_by", lang())),
                   "models-atlas")
        table(words.atlas_table(rows, name_a, name_b, lang()))
