"""Stage 1 · Tokenize: text -> byte-level BPE pieces -> ids, special tokens, padding into [B, S]."""
import html

import streamlit as st

from ops.lab import checks, stage_data
from ops.models.tokenizer import Tokenizer
from ui.explain import show_checks
from ui.page import StagePage
from ui.session import settings, t
from ui.widgets import chips, show_chips, show_specials
from viz import labels as lbl
from viz.tokenize import ids_table

page = StagePage("tokenize")
model, trace, c = page.model, page.trace, page.config
tok, B, S = model.tokenizer, page.trace.B, page.trace.S
chat = settings().chat

# ---- the main picture: the prompts as chips, then the [B, S] id matrix in the chips' colours -------------
st.caption(t("每个色块是一个 token，下方数字是它的 id，颜色在各页中都代表同一个位置。紫色 = 特殊 token；虚线框 = 只含半"
             "个 UTF-8 "
             "字符的字节（显示为 <0x..>）；␣ 表示空格（Qwen 把空格并入下一个词），\\n 表示换行；灰色删除线 = 填充。",
             "Each chip is one token, its id underneath; its colour marks its position on every page. Purple = special "
             "token; dashed border = bytes that are only part of a UTF-8 character (shown as <0x..>); ␣ is a space "
             "(Qwen "
             "glues it to the next word), \\n a newline; grey struck-out = padding."))
for b in range(B):
    n = trace.lengths[b]
    st.markdown(t(f"**第 {b} 行**：{n} 个 token" + (f"，另补 {S - n} 个填充" if S > n else ""),
                  f"**Row {b}**: {n} tokens" + (f", plus {S - n} padding" if S > n else "")))
    show_chips(tok.piece_info(trace.token_ids[b].tolist()), pad_from=n, size=22 if B * S <= 48 else 18)
    page.merged_note(b)
rows = trace.token_ids.tolist()
page.view("tokens.ids", trace.token_ids, key="ids",
          caption=t(f"填充 id = {model.pad_id()}（{html.escape(tok.pieces([model.pad_id()])[0])}）。长度"
                    f"：{trace.lengths}。"
                    "填充只为凑成矩形；注意力掩码让真实 token 看不到它们。",
                    f"Padding id = {model.pad_id()} ({html.escape(tok.pieces([model.pad_id()])[0])}). Lengths: "
                    f"{trace.lengths}. Padding only makes the batch rectangular; the attention mask keeps real "
                    "tokens from seeing it."))
st.markdown(ids_table(rows, trace.lengths, [lbl.pieces(tok, r[:n]) for r, n in zip(rows, trace.lengths)],
                      row_name=t("行", "row"), pad_name=t("填充", "padding")), unsafe_allow_html=True)

page.explain([r"\text{%s} = \mathrm{BPE}\big(\mathrm{pretokenize}(\mathrm{NFC}(\text{%s}))\big)" % (t("编号", "ids"),
                                                                                                    t("文本", "text"))
              + t(r"\quad\text{（字节级，不加 BOS）}", r"\quad\text{(byte-level, no BOS)}"),
              t(r"\text{BPE：反复合并合并表中排名最靠前的相邻一对}",
                r"\text{BPE: repeatedly merge the adjacent pair with the lowest merge rank}")],
             Tokenizer.encode, Tokenizer.bpe_merges)

# ---- the chat template and the seed example ------------------------------------------------------
page.section("模型真正读到的文字", "The text the model really reads")
if chat:
    for b in range(B):
        show_specials(trace.texts[b], tok.special_tokens)
    st.info(t("聊天模板（ChatML）已开启：模型真正看到的是上面带 <|im_start|> / <|im_end|> 的整段文字，这些特殊 token 各"
              "占一个 id。",
              "Chat template (ChatML) is on: what the model really reads is the whole text above with <|im_start|> / "
              "<|im_end|>; each special token is one id."))
elif box := page.more("打开聊天模板后会变成什么？", "What would the chat template add?", "template"):
    with box:
        templated = tok.apply_chat_template(trace.prompts[0])
        show_specials(templated, tok.special_tokens)
        st.caption(t(f"套模板后第 0 行会变成 {len(tok.encode(templated))} 个 token（在左侧打开开关即可使用）。",
                     f"With the template row 0 becomes {len(tok.encode(templated))} tokens (turn on the toggle in the "
                     "sidebar)."))
seed = "I like shanghai"
seed_ids = tok.encode(seed)
seed_pieces = " · ".join(f"`{html.escape(p)}`" for p in tok.pieces(seed_ids))
st.markdown(t(f"**例：** `\"{seed}\"` → {len(seed_ids)} 个 token `{seed_ids}` = {seed_pieces}。本应用**不加 BOS**，"
              f"这 {len(seed_ids)} 个全是正文 token。",
              f"**Example:** `\"{seed}\"` → {len(seed_ids)} tokens `{seed_ids}` = {seed_pieces}. No **BOS** token is "
              "added: "
              f"all {len(seed_ids)} are text tokens."))

# ---- BPE merges ------------------------------------------------------------------------------------
page.section("BPE：一个词是怎样一步步合并出来的", "BPE: how one word is merged step by step")
st.caption(t(f"从单个字节开始，每一步合并“合并表中排名最靠前”的相邻一对（真实的合并表，共 {len(tok.merges):,} 条）。",
             f"Start from single bytes; each step merges the adjacent pair ranked highest in the real merge list "
             f"({len(tok.merges):,} merges)."))
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
        st.caption(t(f"预分词先把它切成 {count} 段，下面只演示第一段；其余段各自独立合并。",
                     f"Pre-tokenization splits this into {count} pieces first; the first is shown, the others merge "
                     "independently."))
if word:
    try:
        steps = stage_data.bpe_steps(tok, word)
    except Exception as e:
        steps = []
        st.info(t("这个分词器无法展示合并过程：", "This tokenizer cannot show merges: ") + str(e))
    if len(steps) > 31:
        st.caption(t(f"共 {len(steps) - 1} 步，只显示前 30 步。", f"{len(steps) - 1} steps; the first 30 are shown."))
    code = lambda p: f"<code>{html.escape(p)}</code>"
    st.markdown("".join(
        f"<div style='display:flex;align-items:center;gap:14px;margin:2px 0'>"
        f"<b style='font-size:18px;width:70px'>{t('第', 'step ')}{k}{t(' 步', '')}</b>{chips(step['parts'], size=20)}"
        + (f"<span style='font-size:17px;color:#555'>{t('合并', 'merge')} {code(step['merged'][0])} + "
           f"{code(step['merged'][1])} ({t('排名', 'rank')} {step['merged'][2]:,})</span>" if step["merged"] else "")
        + "</div>" for k, step in enumerate(steps[:31])), unsafe_allow_html=True)
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
st.markdown(t(f"Qwen2.5-32B 用 Qwen2.5 分词器（{n32['V_tok_32b']} 个 token；当前模型的分词器有 {tok.vocab_size:,} 个）"
              "，"
              f"嵌入矩阵 {n32['V_fmt_32b']} 行（× {n32['H_32b']} 维）。"
              f"分词在 CPU 上完成，没有矩阵乘法；你的 B×S = {B}×{S} = {B * S} 个 id 就是模型的全部输入。",
              f"Qwen2.5-32B uses the Qwen2.5 tokenizer ({n32['V_tok_32b']} tokens; the loaded model's "
              f"has {tok.vocab_size:,}) "
              f"and an embedding of {n32['V_fmt_32b']} rows (× {n32['H_32b']}). Tokenizing runs on the CPU with no "
              "matrix "
              f"multiplications; your B×S = {B}×{S} = {B * S} ids are the model's whole input."))
