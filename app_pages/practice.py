"""Interview practice: the question bank by stage and predict-the-value questions (content/practice.py)."""
import streamlit as st

from content import facts, practice, stages, texts
from ops.arith import costs
from ui import blocks, state
from ui.page import StagePage
from ui.session import frozen, lang, t

page = StagePage("practice", trace=False)
LANG = lang()
SEED, CALC = t("［源文档］", "[documents]"), t("［实算］", "[computed]")   # text, not emoji: projector PCs often lack an emoji font
model = state.get_model()
trace = state.get_trace(model) if model else None
config = model.config if model is not None else costs.reference_configs()["Qwen2.5-0.5B-Instruct"]
B, S = (trace.B, trace.S) if trace is not None else (1, 8)
page.attach(model, trace)
numbers = page.numbers if trace else texts.numbers(config, B=B, S=S, **(facts.loaded(model) if model else {}))


def stage_name(key: str) -> str:
    """A practice tag ("attention", "moe", "decode") by its registry title; an unknown tag as it is."""
    try:
        return stages.get(key).title(LANG)
    except KeyError:
        return key


browse, quiz = page.tabs([t("题库浏览", "Browse questions"), t("实时测验（用你的 trace）", "Quiz on your live trace")], "views")

# ---- browse: the bank, in registry order ---------------------------------------------------------------
if browse:
    with browse:
        bank = practice.load_questions()
        tags = {q["stage"] for q in bank}
        present = [s.key for s in stages.STAGES if s.key in tags] + sorted(tags - set(stages.BY_KEY))
        cols = st.columns([2, 3])
        name = frozen(lambda s: t("全部", "All") if s == "all" else stage_name(s), ["all"] + present)
        stage = cols[0].selectbox(t("按阶段筛选", "Filter by stage"), ["all"] + present, key="practice_stage", format_func=name)
        query = cols[1].text_input(t("搜索关键词", "Search"), key="practice_search",
                                   placeholder=t("如 KV cache、RoPE、GQA", "e.g. KV cache, RoPE, GQA"))
        try:
            items = page.memo(("questions", stage),
                              lambda: practice.questions(numbers, LANG, None if stage == "all" else stage))
        except Exception as e:                    # a broken question must not take the page down
            st.error(t("题库读取失败：", "Could not read the question bank: ") + str(e))
            items = []
        if query.strip():
            q_low = query.strip().lower()
            items = [q for q in items if q_low in (q["question"] + q["short"] + q["long"]).lower()]
        st.caption(t(f"共 {len(items)} 题。{SEED} = 源文档中的面试题（已按事实校正）；{CALC} = 答案在渲染时由 ops/arith/costs.py 从模型 config 算出；★ 越多越难（1–3）。",
                     f"{len(items)} questions. {SEED} = from the source documents (facts corrected); {CALC} = the answer is computed "
                     "from the model configs by ops/arith/costs.py as the page renders; more ★, harder (1–3)."))
        by_stage = {}
        for q in items:
            by_stage.setdefault(q["stage"], []).append(q)
        for s in [s for s in present if s in by_stage]:
            st.subheader(stage_name(s))
            for q in by_stage[s]:
                mark = (SEED + " " if q["seed"] else "") + (CALC + " " if q["computed"] else "") + "★" * q["difficulty"] + " "
                if box := blocks.more(mark + q["question"], f"q-{q['id']}"):     # lazy: a closed question costs only its label
                    with box:
                        st.markdown(f"**{t('简答', 'Short answer')}{t('：', ':')}** {q['short']}")
                        if st.toggle(t("展开详细解答", "Longer answer"), key=f"long-{q['id']}"):
                            st.markdown(q["long"])
        if not items:
            st.info(t("没有符合条件的题目。", "No questions match."))

# ---- quiz --------------------------------------------------------------------------------------------------
ss = st.session_state
for k, v in (("quiz_idx", 0), ("quiz_correct", 0), ("quiz_attempted", 0), ("quiz_result", None), ("quiz_round", 0)):
    ss.setdefault(k, v)


def _reveal(item, idx):
    prev = ss.quiz_result
    if prev and prev.get("idx") == idx and prev.get("status") in ("right", "wrong"):
        return                                  # already revealed: each visit counts once
    text = str(ss.get(f"quiz_answer_{ss.quiz_round}_{idx}", "")).strip()
    if not text:
        ss.quiz_result = dict(idx=idx, status="empty")
        return
    parsed = practice.parse_shape(text) if item["kind"] == "shape" else practice.parse_number(text)
    if parsed is None:
        ss.quiz_result = dict(idx=idx, status="unparsable", text=text)
        return
    ok = practice.check_answer(item, text)
    ss.quiz_attempted += 1
    ss.quiz_correct += int(ok)
    ss.quiz_result = dict(idx=idx, status="right" if ok else "wrong", text=text)


def _next(n):
    ss.quiz_idx = (ss.quiz_idx + 1) % n
    ss.quiz_result = None


def _reset():
    ss.quiz_idx, ss.quiz_correct, ss.quiz_attempted, ss.quiz_result = 0, 0, 0, None
    ss.quiz_round += 1                         # fresh, empty answer boxes


if quiz:
    with quiz:
        if trace is None:
            st.info(t("测验需要一个 trace：请先在左侧加载模型并输入提示词。", "The quiz needs a trace: load a model and type a prompt in the sidebar."))
            st.stop()
        c = model.config
        st.markdown(t(
            f"题目来自**你刚运行的 trace**（{c.name or c.model_type}，提示词 B = {trace.B} 行，补齐后 S = {trace.S}）和模型 config、"
            "在它上面重跑的实验，以及服务章节；答案都在此刻算出。先预测，再揭晓。",
            f"The questions come from **the trace you just ran** ({c.name or c.model_type}, B = {trace.B} prompt(s), "
            f"padded to S = {trace.S}) and the model's config, experiments rerun on it, and the serving chapter; every answer "
            "is computed now. Predict first, then reveal."))
        groups = {"all": ("全部", "all"), **practice.QUIZ_GROUPS}
        group = st.radio(t("题目来源", "questions from"), list(groups), horizontal=True, key="quiz_group", on_change=_reset,
                         format_func=lambda g: groups[g][0 if LANG == "zh" else 1])
        with st.spinner(t("正在为测验重跑实验……", "Rerunning the experiments for the quiz...")):
            quiz_items = [q for q in practice.quiz_pool(model, trace, numbers) if group in ("all", q["group"])]
        n = len(quiz_items)
        idx = ss.quiz_idx % n
        item = quiz_items[idx]
        sc = st.columns(3)
        sc[0].metric(t("得分（对 / 答）", "score (correct / attempted)"), f"{ss.quiz_correct} / {ss.quiz_attempted}")
        sc[1].metric(t("题号", "question"), f"{idx + 1} / {n}")
        sc[2].metric(t("正确率", "accuracy"), f"{100 * ss.quiz_correct / ss.quiz_attempted:.0f}%" if ss.quiz_attempted else "–")
        st.markdown(f"### {item['question'][LANG]}")
        hint = (t("形状写成 [1, 4, 896] 或 1x4x896", "Write a shape as [1, 4, 896] or 1x4x896") if item["kind"] == "shape"
                else t("写一个数：12288、12,288、1.2 GiB、3.3e9、32.76B、12 万都可以", "Write a number: 12288, 12,288, 1.2 GiB, 3.3e9 or 32.76B all work")
                + (t("（误差 1% 以内算对）", " (within 1% counts)") if item.get("tol") else ""))
        st.text_input(t("你的预测", "Your prediction"), key=f"quiz_answer_{ss.quiz_round}_{idx}", placeholder=hint, help=hint)
        bc = st.columns(3)
        bc[0].button(t("揭晓", "Reveal"), key="quiz_reveal", on_click=_reveal, args=(item, idx), type="primary", width="stretch")
        bc[1].button(t("下一题", "Next question"), key="quiz_next", on_click=_next, args=(n,), width="stretch")
        bc[2].button(t("重新开始", "Reset score"), key="quiz_reset", on_click=_reset, width="stretch")

        r = ss.quiz_result
        if r and r.get("idx") == idx and r["status"] in ("empty", "unparsable"):
            st.warning(t("先写下你的预测，再点“揭晓”。", "Type your prediction first, then press Reveal.") if r["status"] == "empty"
                       else t(f"看不懂“{r['text']}”。{hint}。", f"Could not read “{r['text']}”. {hint}."))
        elif r and r.get("idx") == idx:
            where, true = practice.where_text(item, LANG, trace.shapes()), practice.answer_text(item, LANG)
            msg = t(f"你的答案 {r['text']}；正确答案 **{true}**（{where}）。", f"Your answer {r['text']}; the true value is **{true}** ({where}).")
            (st.success if r["status"] == "right" else st.error)(
                ("✓ " + t("答对了！", "Right! ") if r["status"] == "right" else "✗ " + t("不对。", "Not quite. ")) + msg)
            if item.get("explain"):
                st.caption(item["explain"][LANG])
            if item["kind"] == "shape":
                st.caption(t("B 批大小 · S 序列长度 · H 隐藏维度 · nh/nkv 查询/KV 头数 · hd 头维度 · I MLP 宽度 · V 词表行数",
                             "B batch · S sequence · H hidden · nh/nkv query/KV heads · hd head dim · I MLP width · V vocab rows"))
