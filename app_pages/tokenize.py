"""Stage 1 · Tokenize: text -> byte-level BPE pieces -> ids, special tokens, padding into [B, S]."""
import html

import streamlit as st

from content.words import say
from ops.lab import checks, stage_data
from ops.models.tokenizer import Tokenizer
from ui.explain import show_checks
from ui.page import StagePage
from ui.session import lang, settings, t
from ui.widgets import chips, show_chips, show_specials
from viz import labels as lbl
from viz.tokenize import bpe_steps_html, ids_table

page = StagePage("tokenize")
model, trace, c = page.model, page.trace, page.config
tok, B, S = model.tokenizer, page.trace.B, page.trace.S
chat = settings().chat

# ---- the main picture: the prompts as chips, then the [B, S] id matrix in the chips' colours -------------
st.caption(say("page_tokenize.each_chip_is_one", lang()))
for b in range(B):
    n = trace.lengths[b]
    st.markdown(t(f"**第 {b} 行**：{n} 个 token" + (f"，另补 {S - n} 个填充" if S > n else ""),
                  f"**Row {b}**: {n} tokens" + (f", plus {S - n} padding" if S > n else "")))
    show_chips(tok.piece_info(trace.token_ids[b].tolist()), pad_from=n, size=22 if B * S <= 48 else 18)
    page.merged_note(b)
rows = trace.token_ids.tolist()
page.view("tokens.ids", trace.token_ids, key="ids",
          caption=say("page_tokenize.padding", lang(), pad_id=model.pad_id(),
                      pad=html.escape(tok.pieces([model.pad_id()])[0]), lengths=trace.lengths))
st.markdown(ids_table(rows, trace.lengths, [lbl.pieces(tok, r[:n]) for r, n in zip(rows, trace.lengths)],
                      row_name=t("行", "row"), pad_name=t("填充", "padding")), unsafe_allow_html=True)

page.explain([say("page_tokenize.formula_encode", lang()),
              say("page_tokenize.formula_merge", lang())],
             Tokenizer.encode, Tokenizer.bpe_merges)

# ---- the chat template and the seed example ------------------------------------------------------
page.section("模型真正读到的文字", "The text the model really reads")
if chat:
    for b in range(B):
        show_specials(trace.texts[b], tok.special_tokens)
    st.info(say("page_tokenize.chat_template_chatml_is", lang()))
elif box := page.more("打开聊天模板后会变成什么？", "What would the chat template add?", "template"):
    with box:
        templated = tok.apply_chat_template(trace.prompts[0])
        show_specials(templated, tok.special_tokens)
        st.caption(say("page_tokenize.template_count", lang(), n=len(tok.encode(templated))))
own_ids = rows[0][:trace.lengths[0]]                              # the student's sentence first (row 0, as traced)
more = len(own_ids) > 16
own_pieces = " · ".join(f"`{lbl.visible(p)}`" for p in tok.pieces(own_ids[:16])) + (" · …" if more else "")
own = trace.texts[0].replace("\n", "\\n").replace("`", "'")
st.markdown(say("page_tokenize.own_example", lang(), own=own, n=len(own_ids),
                ids=str(own_ids[:16])[:-1] + (", …]" if more else "]"), pieces=own_pieces))
seed = "I like shanghai"
seed_ids = tok.encode(seed)
seed_pieces = " · ".join(f"`{html.escape(p)}`" for p in tok.pieces(seed_ids))
st.markdown(say("page_tokenize.example", lang(), seed=seed, seed_ids=seed_ids, n=len(seed_ids),
                seed_pieces=seed_pieces))

# ---- BPE merges ------------------------------------------------------------------------------------
st.subheader(say("page_tokenize.bpe_how_one_word", lang()))
st.caption(say("page_tokenize.start_from_single_bytes", lang(), len_tok_merges=format(len(tok.merges), ",")))
preset = ["unbelievable", " shanghai", "人工智能"]
col1, col2 = st.columns([1, 1])
word_names = {w: repr(w) for w in preset} | {"…": t("自己输入", "type your own")}
word_choice = col1.radio(t("选一个词", "Pick a word"), preset + ["…"], horizontal=True, key="bpe_word",
                         format_func=word_names.get)
typed = col2.text_input(t("自己输入一个词", "Type a word"), value="transformer", key="bpe_typed")
word = word_choice
if word_choice == "…":
    word, count = stage_data.first_pretoken(tok, typed)
    if count > 1:
        st.caption(say("page_tokenize.pre_tokenization_splits_this", lang(), count=count))
if word:
    try:
        steps = stage_data.bpe_steps(tok, word)
    except Exception as e:
        steps = []
        st.info(say("page_tokenize.this_tokenizer_cannot_show", lang()) + str(e))
    if len(steps) > 31:
        st.caption(t(f"共 {len(steps) - 1} 步，只显示前 30 步。", f"{len(steps) - 1} steps; the first 30 are shown."))
    st.markdown(bpe_steps_html(steps[:31], lambda parts: chips(parts, size=20),
                               lambda k: t(f"第 {k} 步", f"step {k}"), t("合并", "merge"), t("排名", "rank")),
                unsafe_allow_html=True)
    final = tok.encode(word)
    if steps and steps[-1]["ids"] == final:
        st.success(t(f"✓ 合并结果与 encode() 一致：{final}", f"✓ The merges end where encode() does: {final}"))
    elif steps:
        st.warning(t(f"合并得到 {steps[-1]['ids']}，encode() 得到 {final}",
                     f"Merges end at {steps[-1]['ids']}, encode() gives {final}"))

# ---- special tokens and vocabulary ---------------------------------------------------------------
page.section("特殊 token 与词表大小", "Special tokens and vocabulary size")
specials = tok.special_tokens
st.dataframe([{"token": s, "id": i} for s, i in specials.items()], hide_index=True, width="content",
             height=min(420, 40 + 36 * len(specials)))
page.metrics([(t("分词器能产生的 token 数", "tokens the tokenizer can produce"), f"{tok.vocab_size:,}"),
              (t("嵌入矩阵行数 V", "embedding rows V"), f"{c.vocab_size:,}"),
              (t("从不使用的填充行", "padding rows never used"), f"{c.vocab_size - tok.vocab_size:,}")])
st.caption(page.sentence("vocab_sentence") + t("", " ") + page.sentence("pad_sentence"))

# ---- check and scale -------------------------------------------------------------------------------
st.header(t("对照", "Check"))
show_checks(checks.tokenize(tok, trace, page.row()))

st.header(t("放大到 Qwen2.5-32B", "At scale: Qwen2.5-32B"))
n32 = page.numbers
st.markdown(say("page_tokenize.at_scale", lang(), V_tok_32b=n32["V_tok_32b"], vocab=format(tok.vocab_size, ","),
                V_fmt_32b=n32["V_fmt_32b"], H_32b=n32["H_32b"], B=B, S=S, BS=B * S))
