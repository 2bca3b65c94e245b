"""The teacher's lesson tools under the poll panel: add this view to a draft lesson, save the draft as a lesson file,
and export a lesson (a shipped one or the draft) as the standalone HTML file `python -m classroom.lesson_export` writes.

The draft lives in the teacher's session; a step records the page and the pickers the page shares through the
session (layer, head, position, top N), with the teacher's notes in both languages. Saving goes through the strict
loader (classroom/lessons.py), so what the app offers for download is a file the loader reads back.
"""
from __future__ import annotations

import streamlit as st

from classroom import lesson_export, lessons
from content.words import say

from . import state
from .session import lang, settings, t

DRAFT = "lesson_draft"
PICKER_KEYS = {"layer": "layer", "head": "head", "pos": "pos", "top": "lm_topn"}   # lesson picker -> session key


def _draft() -> dict:
    if DRAFT not in st.session_state:
        st.session_state[DRAFT] = {"version": lessons.VERSION, "title": {"zh": "我的一课", "en": "My lesson"},
                                   "prompts": [], "steps": []}
    return st.session_state[DRAFT]


def tools(page: str):
    """The lesson expander for the teacher, under the poll."""
    with st.expander("📚 " + t("课程：记录这一页、导出", "Lesson: record this view, export"), expanded=False):
        draft = _draft()
        with st.form("lesson-add", clear_on_submit=True):
            zh = st.text_area(t("讲解（中文）", "Notes (Chinese)"), height=80)
            en = st.text_area(t("讲解（英文）", "Notes (English)"), height=80)
            if st.form_submit_button(t("把这一页加入课程", "Add this view to the lesson")):
                _add(draft, page, zh, en)
        if draft["steps"]:
            st.caption(t("本课的步骤：", "The lesson's steps: ") + " → ".join(s["page"] for s in draft["steps"]))
            try:
                lesson = lessons.parse(draft, "my-lesson")
                st.download_button(t("下载课程文件（JSON）", "Download the lesson file (JSON)"),
                                   lessons.to_json(lesson), file_name="my-lesson.json", mime="application/json",
                                   key="lesson-json")
            except lessons.LessonError as e:
                st.warning(e.text(lang()))
        _export(draft)


def _add(draft: dict, page: str, zh: str, en: str):
    if page not in lessons.pages():
        st.warning(t("这一页不能放进课程。", "This page cannot go into a lesson."))
        return
    if not zh.strip() or not en.strip():
        st.warning(t("请写下两种语言的讲解。", "Write the notes in both languages."))
        return
    ss = st.session_state
    pickers = {k: int(ss[key]) for k, key in PICKER_KEYS.items() if isinstance(ss.get(key), int)}
    if not draft["prompts"]:
        draft["prompts"] = list(settings().prompts[:lessons.MAX_PROMPTS])
    draft["steps"].append({"page": page, "pickers": pickers, "notes": {"zh": zh, "en": en}})
    st.success(say("lesson_builder.added", lang(), n=len(draft["steps"])))


def _export(draft: dict):
    choices = dict(lessons.shipped())
    names = list(choices) + ([t("我的草稿", "my draft")] if draft["steps"] else [])
    name = st.selectbox(t("导出为独立的 HTML 文件", "Export as one standalone HTML file"), names, key="lesson-pick")
    if st.button(t("生成 HTML", "Build the HTML"), key="lesson-build"):
        try:
            lesson = lessons.load(choices[name]) if name in choices else lessons.parse(draft, "my-lesson")
            with st.spinner(say("lesson_builder.running", lang())):
                text, _ = lesson_export.build(lesson, model=state.get_model())
            st.session_state["lesson-html"] = (name, text)
        except lessons.LessonError as e:
            st.error(e.text(lang()))
    built = st.session_state.get("lesson-html")
    if built and built[0] == name:
        st.download_button(t("下载 HTML", "Download the HTML"), built[1], file_name=f"{name}.html", mime="text/html",
                           key="lesson-html-download")
