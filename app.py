"""Operator Lab (算子实验室): step a prompt through a real Qwen2.5 model, one operator at a time.

    streamlit run app.py
"""
import streamlit as st

st.set_page_config(page_title="Operator Lab · 算子实验室", page_icon="🔬", layout="wide")

import settings  # noqa: E402

try:                           # every OPERATOR_LAB_* setting, checked first; a bad one stops the app and says which
    server = settings.apply()
except settings.SettingError as e:
    st.error(f"Operator Lab cannot start with this setting · 设置有误，无法启动: {e}")
    st.stop()

import viz  # noqa: E402
from classroom import jobs  # noqa: E402
from content import stages  # noqa: E402
from ui import browser, experiments_state, lesson_replay, page, poll, predict, session, sidebar, state  # noqa: E402

# Registration, explicit: importing a module of ours registers, starts and reads nothing (tests/unit/test_imports.py)
viz.use_lab_template()                     # the plotly template every page's figures use
jobs.configure(server)                     # run and decode slots, sized once from the settings
experiments_state.configure(server)        # the sweep queue, likewise
# the work the load-time thread does ahead of the pages' first visits
state.FIRST_VISITS = experiments_state.first_visits
state.build_native()                       # the native library, once per process, in the background

with jobs.RUNS:               # background work at load waits while a page runs (classroom.jobs.RUNS)
    session.init_state()
    # projector mode (?projector=1) folds the sidebar away (its arrow opens it again), but not before a classroom's
    # teacher has entered the key: the key's fold is in the sidebar
    folded = session.projector() and not poll.key_awaited()
    st.set_page_config(page_title=session.t("算子实验室", "Operator Lab"),
                       initial_sidebar_state="collapsed" if folded else "auto")
    browser.style()

    # Every page answers at its own URL (/overview included, so a copied link works); the default page answers
    # at / as well, through a second entry for the same file. The sidebar lists each page once.
    pages = {s.page: st.Page(f"app_pages/{s.page}.py", title=s.title(session.lang()), icon=s.icon, url_path=s.page)
             for s in stages.pages()}
    home = st.Page("app_pages/overview.py", title=stages.get("overview").title(session.lang()), icon="🗺️",
                   url_path="home", default=True)
    nav = st.navigation([home, *pages.values()], position="hidden")
    session.restore("overview" if nav.url_path == "home" else nav.url_path)   # Streamlit's clean-up undone
    try:
        sidebar.render(pages)      # the prompt box first, then the page links, then the settings
        predict.keep_url()         # the one predict-first switch stays in the URL (?predict=1) on every page
        if session.projector() and nav.url_path != "tour" and not lesson_replay.replaying():
            sidebar.page_prompt()     # the sidebar is folded: the prompt on the page (the tour draws its own beside
                                      # its buttons, a replayed lesson's bar in its row)
        browser.warm_scripts()      # every run, the same element: the browser fetches later pages' component scripts
        lesson_replay.bar("overview" if nav.url_path == "home" else nav.url_path)   # a lesson replayed: its bar
        nav.run()
        page.next_stage("overview" if nav.url_path == "home" else nav.url_path)   # not after a page that stopped
        poll.panel("overview" if nav.url_path == "home" else nav.url_path)       # classroom mode: the class poll
    finally:
        session.end_run()         # the settings' copies kept (for restore); the model fetched once let go
        # a page's freed temporaries leave the resident set (a class keeps the server up for hours)
        jobs.trim_heap()
