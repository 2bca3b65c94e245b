"""Interview practice: the question bank by stage, and a quiz on the live trace.
View data: ui/practice_state.py (session state); logic: content/practice_bank.py."""
import streamlit as st

from content import facts, practice, texts
from content.practice_bank import ALL, stage_order, stage_title
from ops.arith import costs
from ui import blocks, practice_state as ps, state
from ui.page import StagePage
from ui.session import frozen, lang, t

page = StagePage("practice", trace=False)
LANG = lang()
model = state.get_model()
trace = state.get_trace(model) if model else None
config = model.config if model is not None else costs.reference_configs()["Qwen2.5-0.5B-Instruct"]
B, S = (trace.B, trace.S) if trace is not None else (1, 8)
page.attach(model, trace)
numbers = page.numbers if trace else texts.numbers(config, B=B, S=S, **(facts.loaded(model) if model else {}))
bank, bank_error = ps.bank(page, numbers)
if bank_error:
    st.error(bank_error)

browse, quiz = page.tabs([t("题库浏览", "Browse questions"), t("实时测验（用你的 trace）", "Quiz on your live trace")],
                         "views")


# ---- browse: the bank, in registry order ---------------------------------------------------------------
if browse:
    with browse:
        stages_all = stage_order(bank)
        cols = st.columns([2, 3])
        name = frozen(lambda s: t("全部", "All") if s == ALL else stage_title(s, LANG), [ALL] + stages_all)
        stage = cols[0].selectbox(t("按阶段筛选", "Filter by stage"), [ALL] + stages_all, key="practice_stage",
                                  format_func=name)
        query = cols[1].text_input(t("搜索关键词", "Search"), key="practice_search", placeholder=ps.say("search_hint"))
        view = ps.browse(bank, stage, query)
        st.caption(view["caption"])
        for title, questions in view["groups"]:
            st.subheader(title)
            for label, q in questions:
                if box := blocks.more(label, f"q-{q['id']}"):     # lazy: a closed question costs only its label
                    with box:
                        st.markdown(f"**{t('简答', 'Short answer')}{t('：', ':')}** {q['short']}")
                        if st.toggle(t("展开详细解答", "Longer answer"), key=f"long-{q['id']}"):
                            st.markdown(q["long"])
        if not view["count"]:
            st.info(t("没有符合条件的题目。", "No questions match."))

# ---- quiz on the live trace -------------------------------------------------------------------------------
if quiz:
    with quiz:
        if trace is None:
            st.info(ps.say("quiz_needs_trace"))
        else:
            groups = {"all": ("全部", "all"), **practice.QUIZ_GROUPS}
            group = st.radio(t("题目来源", "questions from"), list(groups), horizontal=True, key="quiz_group",
                             on_change=ps.quiz_reset, format_func=frozen(lambda g: t(*groups[g]), list(groups)))
            with st.spinner(t("正在为测验重跑实验……", "Rerunning the experiments for the quiz...")):
                qv = ps.quiz(model, trace, numbers, group)
            st.markdown(qv["intro"])
            for col, (label, value) in zip(st.columns(3), qv["metrics"]):
                col.metric(label, value)
            st.markdown(f"### {qv['question']}")
            st.text_input(t("你的预测", "Your prediction"), key=qv["box"], placeholder=qv["hint"], help=qv["hint"])
            bc = st.columns(3)
            bc[0].button(t("揭晓", "Reveal"), key="quiz_reveal", on_click=ps.quiz_reveal, args=(qv["item"], qv["idx"]),
                         type="primary", width="stretch")
            bc[1].button(t("下一题", "Next question"), key="quiz_next", on_click=ps.quiz_next, args=(qv["n"],),
                         width="stretch")
            bc[2].button(t("重新开始", "Reset score"), key="quiz_reset", on_click=ps.quiz_reset, width="stretch")
            if qv["verdict"]:
                kind, text = qv["verdict"]
                getattr(st, kind)(text)
            for note in (qv["explain"], qv["legend"]):
                if note:
                    st.caption(note)
