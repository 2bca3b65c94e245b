"""Interview practice: the question bank by stage, a quiz on the live trace, and a mock interview.
View data: ui/practice_state.py (session state); logic: content/practice_bank.py, content/practice_mock.py."""
import streamlit as st

from content import practice, practice_mock as mock
from content.practice_bank import ALL, stage_order, stage_title
from ui import blocks, practice_state as ps
from ui.page import StagePage
from ui.session import lang, t

page = StagePage("practice", trace=False)
LANG = lang()
model, trace, numbers = ps.context(page)              # the page works without a model too (no quiz then)
bank, bank_error = ps.bank(page, numbers)
if bank_error:
    st.error(bank_error)

browse, quiz, interview = page.tabs([t("题库浏览", "Browse questions"),
                                     t("实时测验（用你的提示词）", "Quiz on your live trace"),
                                     t("模拟面试", "Mock interview")], "views")


def answers(q: dict):
    """A question's model answer: the short one, then the long one."""
    st.markdown(f"**{t('简答', 'Short answer')}{t('：', ':')}** {q['short']}")
    st.markdown(q["long"])


# ---- browse: the bank, in registry order ---------------------------------------------------------------
if browse:
    with browse:
        stages_all = stage_order(bank)
        cols = st.columns([2, 3])
        name = lambda s: t("全部", "All") if s == ALL else stage_title(s, LANG)
        stage = cols[0].selectbox(t("按阶段筛选", "Filter by stage"), [ALL] + stages_all, key="practice_stage",
                                  format_func=name)
        query = cols[1].text_input(t("搜索关键词", "Search"), key="practice_search",
                                   placeholder=ps.say("practice_ui.search_hint"))
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
                        if q["variants"] and st.toggle(t("同一题的变体", "Variants"), key=f"var-{q['id']}"):
                            for v in q["variants"]:          # another config, length or dtype: the same formula
                                st.markdown(f"**{v['question']}** {v['short']}")
                                st.caption(v["long"])
        if not view["count"]:
            st.info(t("没有符合条件的题目。", "No questions match."))

# ---- quiz on the live trace -------------------------------------------------------------------------------
if quiz:
    with quiz:
        if trace is None:
            st.info(ps.say("practice_ui.quiz_needs_trace"))
        else:
            groups = ["all", *practice.QUIZ_GROUPS]
            label = lambda g: t("全部", "all") if g == "all" else practice.group_label(g, LANG)  # noqa: E731
            group = st.radio(t("题目来源", "questions from"), groups, horizontal=True, key="quiz_group",
                             on_change=ps.quiz_reset, format_func=label)
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

# ---- mock interview: N questions across stages and levels, graded by the learner --------------------------
if interview:
    with interview:
        st.caption(ps.say("practice_ui.mock_intro"))
        cols = st.columns([1, 2, 1], vertical_alignment="bottom")
        n = cols[0].selectbox(t("题数 N", "questions N"), mock.SIZES, key="mock_n")
        levels = cols[1].multiselect(t("难度（不选 = 全部）", "levels (none = all)"), mock.LEVELS, key="mock_levels",
                                     format_func=lambda x: "★" * x, placeholder=t("全部难度", "every level"))
        cols[2].button(t("新的面试", "New interview"), key="mock_new", on_click=ps.mock_new, width="stretch")
        iv = ps.interview(bank, n, levels)
        q, result = iv["question"], iv["score"]
        page.metrics([(t("题号", "question"), iv["progress"]),
                      (t("得分", "score"), iv["score_text"]), (t("阶段", "stage"), iv["stage"] or "–")])
        if not iv["n"]:
            st.info(ps.say("practice_ui.mock_none"))
        elif q is not None:
            st.markdown(f"### {iv['stars']} {q['question']}")
            if not iv["revealed"]:
                st.text_area(t("你的回答", "Your answer"), key=iv["box"], height=110)
                st.button(t("揭晓参考答案", "Reveal the model answer"), key="mock_reveal", on_click=ps.mock_reveal,
                          type="primary")
                if iv["warn"]:
                    st.warning(ps.say("practice_ui.mock_empty"))
            else:           # the answer as saved at the reveal, beside the reference (not the box's own state)
                mine, ref = st.columns(2)
                mine.text_area(t("你的回答", "Your answer"), value=iv["answer"], key=iv["box"] + "-shown",
                               height=220, disabled=True)
                with ref:
                    answers(q)
                    if iv["computed"]:
                        st.info(iv["computed"])
                st.markdown(f"**{ps.say('practice_ui.mock_grade')}**")
                for col, (grade, words) in zip(st.columns(3), mock.GRADE_LABELS.items()):
                    col.button(t(*words), key=f"mock_{grade}", on_click=ps.mock_grade, args=(grade,), width="stretch")
        else:
            st.success(ps.say("practice_ui.mock_done", graded=result["graded"], points=f"{result['points']:g}",
                              percent=f"{result['percent']:.0f}"))
            blocks.table(iv["stages"])
            st.subheader(t("要复习的题", "Questions to review"))
            for label, r, yours in iv["review"]:
                if box := blocks.more(label, f"mock-review-{r['id']}"):
                    with box:
                        st.markdown(f"**{t('你的回答', 'Your answer')}{t('：', ':')}** {yours}")
                        answers(r)
            if not iv["review"]:
                st.info(ps.say("practice_ui.mock_review_none"))
