"""A class run in headless Chromium (marked browser and real: it loads the bundled model in two processes):

a teacher and 12 students, each in their own browser context (own cookies), over two `streamlit run app.py`
processes in classroom mode sharing one SQLite poll store, as scripts/serve_class.sh would run them (here without
the balancer: a student "moved" by it is sent to the other process's URL).

- The teacher's wrong key is said, visibly, in the sidebar's Teacher fold (it used to snap shut on the first
  submit); the right key makes the teacher, who stays the teacher after a reload (the browser's token).
- The teacher opens the page's next-token poll; the projector (the teacher's screen) shows the question, the
  options and the count, no histogram and no model's answer; screenshot.
- Students answer on both processes, half in Chinese and half in English; the process A is killed mid-poll; its
  students come back on B, every student reloads and is shown their answer; a third change their minds.
- The teacher, moved to B, reveals: the histogram; the store's counts equal each student's last answer, one
  answer per student. Screenshots in artifacts/screenshots/class-poll-*.png (look at them).

Bounded: every wait has its timeout, and the whole run stops itself after DEADLINE_S (SIGALRM).
"""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1500, "height": 900}
KEY = "class-run-key-7f3a"
STUDENTS = 12
PAGE = "tokenize"
DEADLINE_S = 1500          # the whole run, on a busy 2-core machine (two model loads, 13 browser contexts)
WAIT_MS = 240_000          # one page's first render (the model loads in each process on its first session)
pytestmark = [pytest.mark.real, pytest.mark.browser]


class Deadline(Exception):
    pass


@pytest.fixture
def deadline():
    def stop(*_):
        raise Deadline(f"the class run took more than {DEADLINE_S} s")
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(DEADLINE_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def servers(tmp_path):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail("Debian chromium is missing: scripts/test.sh installs it (apt-get install chromium)")
        pytest.skip("Debian chromium is not installed")
    sys.path.insert(0, str(ROOT / "bench"))
    from load_test import free_port, start_server, stop_server

    env = {"OPERATOR_LAB_CLASSROOM": "1", "OPERATOR_LAB_TEACHER_KEY": KEY,
           "OPERATOR_LAB_POLL_DB": str(tmp_path / "polls.sqlite"), "STREAMLIT_CLIENT_SHOW_ERROR_DETAILS": "full"}
    procs = {}
    try:
        for name in ("a", "b"):
            port = free_port()
            procs[name] = (start_server(port, env), f"http://127.0.0.1:{port}")
        yield procs, tmp_path / "polls.sqlite"
    finally:
        for proc, _ in procs.values():
            if proc.poll() is None:
                stop_server(proc)


def rendered(page):
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"] h1', timeout=WAIT_MS)


def goto(page, url):
    page.goto(url, timeout=WAIT_MS)
    rendered(page)


def goto_all(pages_urls):
    """Every page asks for its URL at once (a class arrives together; two processes serve them side by side), then
    each is waited for."""
    for page, url in pages_urls:
        page.goto(url, timeout=WAIT_MS, wait_until="commit")
    for page, _ in pages_urls:
        rendered(page)


def panel_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text(timeout=30_000)


def teacher_login(page, lang):
    fold = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary',
                        has_text="Teacher" if lang == "en" else "教师")
    fold.click()
    box = page.locator('[data-testid="stSidebar"] input[type="password"]')
    box.fill("not-the-key")
    box.press("Enter")
    wrong = "That key is not the teacher's." if lang == "en" else "密钥不对。"
    page.get_by_text(wrong).wait_for(state="visible", timeout=60_000)       # the fold stayed open around it
    assert page.locator('[data-testid="stSidebar"] input[type="password"]').is_visible()
    box.fill(KEY)
    box.press("Enter")
    page.get_by_text("This session is the teacher's." if lang == "en" else "本会话已以教师身份进入。").wait_for(
        state="attached", timeout=60_000)


def student_answer(page, label: str, lang: str):
    radio = page.locator('[data-testid="stRadio"]', has_text="Your answer" if lang == "en" else "你的答案")
    radio.wait_for(timeout=60_000)                  # the poll reaches the page within a redraw or two
    radio.locator("label", has_text=label).first.click()
    page.get_by_role("button", name="Send my answer" if lang == "en" else "提交答案").click()
    said = f"Your answer is in: {label}" if lang == "en" else f"已收到你的答案：{label}"
    page.get_by_text(said).wait_for(timeout=60_000)


def shown_answer(page, lang: str) -> str:
    """The answer the page tells a returning student they gave."""
    prefix = "Your answer is in: " if lang == "en" else "已收到你的答案："
    box = page.get_by_text(prefix)
    box.wait_for(timeout=60_000)
    text = box.first.inner_text()
    return text.split(prefix, 1)[1].split(" (" if lang == "en" else "（", 1)[0]


def projector_counts(teacher, n: int, lang: str, store, poll, procs):
    """The projector's count reaches n on its own redraws (REFRESH s apart). On a machine as busy as CI's a redraw
    can wait; past 120 s the failure says what the store held, what the teacher's screen said and the tail of each
    server's log, so a stalled redraw can be told from a lost answer. The count is read in either language: twice
    on CI the English teacher's screen came back in Chinese under load (the session's language at its widget's
    default, the 'Night' case of bench/RESULTS.md, here without a page switch); that is warned, not hidden."""
    import re
    import warnings

    from playwright.sync_api import TimeoutError as PwTimeout

    teacher.bring_to_front()                      # the projector's window is the one in front
    count = teacher.locator('[data-testid="stMain"] .poll-count', has_text=re.compile(rf"✋\s*{n}\s"))
    try:
        count.wait_for(timeout=120_000)
    except PwTimeout:
        shown = teacher.locator('[data-testid="stMain"] .poll-count').all_inner_texts()
        state = teacher.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
        logs = "".join(f"\n--- server {name} log tail ---\n" + _log_tail(proc) for name, (proc, _) in procs.items())
        pytest.fail(f"the projector never showed {n} answered: the store holds {store.answered(poll.id)} answers, "
                    f"the screen shows {shown}, its script state is {state!r}{logs}")
    text = count.first.inner_text()
    if ("answered" in text) != (lang == "en"):
        warnings.warn(f"the teacher's {lang} screen showed {text!r}: its language changed under load")


def _log_tail(proc, lines: int = 30) -> str:
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"operator_lab_load_{proc.args[proc.args.index('--server.port') + 1]}.log"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else "(no log)"


def test_a_class_of_twelve_over_two_processes_one_killed(servers, deadline):
    sync_api = pytest.importorskip("playwright.sync_api")
    from classroom.poll_store import PollStore

    procs, db = servers
    (proc_a, a), (_, b) = procs["a"], procs["b"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            teacher = browser.new_context(viewport=VIEWPORT).new_page()
            goto(teacher, f"{a}/{PAGE}?lang=en")
            teacher_login(teacher, "en")
            goto(teacher, f"{a}/{PAGE}?lang=en")                    # a reload: still the teacher (the token)
            open_button = teacher.get_by_role("button", name="Open the poll")
            open_button.wait_for(timeout=60_000)
            open_button.click()
            teacher.get_by_text("0 answered").wait_for(timeout=60_000)
            rendered(teacher)                     # the teacher's run after the click has ended: only the count redraws
            store = PollStore(db, teacher_key=KEY)
            poll = store.current()
            assert poll.is_open and not any(o.startswith(("␣", " ")) for o in poll.options), poll.options

            pupils = [{"page": browser.new_context(viewport=VIEWPORT).new_page(), "lang": "zh" if i % 2 else "en",
                       "on": a if i < STUDENTS // 2 else b} for i in range(STUDENTS)]
            goto_all([(s["page"], f"{s['on']}/{PAGE}?lang={s['lang']}") for s in pupils])
            for i, s in enumerate(pupils):
                labels = poll.text_in(s["lang"])[1]
                s["choice"] = i % len(labels)
                student_answer(s["page"], labels[s["choice"]], s["lang"])
            projector_counts(teacher, STUDENTS, "en", store, poll, procs)    # its next redraws
            assert "← the model's answer" not in panel_text(teacher)
            teacher.locator('[data-testid="stMain"] .poll-count').scroll_into_view_if_needed()
            teacher.screenshot(path=str(SHOTS / "class-poll-open.en.png"))

            proc_a.kill()                                              # mid-poll: process A dies
            proc_a.wait(30)
            goto_all([(s["page"], f"{b}/{PAGE}?lang={s['lang']}") for s in pupils])   # all reload, A's on B
            for i, s in enumerate(pupils):
                labels = poll.text_in(s["lang"])[1]
                assert shown_answer(s["page"], s["lang"]) == labels[s["choice"]], f"student {i} not told"
                if i % 3 == 0:                                         # a change of mind after the move
                    s["choice"] = (s["choice"] + 1) % len(labels)
                    student_answer(s["page"], labels[s["choice"]], s["lang"])

            goto(teacher, f"{b}/{PAGE}?lang=zh")                       # the teacher moved too: still the teacher
            teacher.get_by_text(f"{STUDENTS} 人已回答").wait_for(timeout=60_000)
            teacher.locator('[data-testid="stMain"] .poll-count').scroll_into_view_if_needed()
            teacher.screenshot(path=str(SHOTS / "class-poll-open.zh.png"))
            assert "← 模型的答案" not in panel_text(teacher)
            teacher.get_by_role("button", name="结束并揭晓").click()
            teacher.locator('[data-testid="stPlotlyChart"] .main-svg').last.wait_for(timeout=60_000)
            teacher.locator('[data-testid="stPlotlyChart"]').last.scroll_into_view_if_needed()
            teacher.screenshot(path=str(SHOTS / "class-poll-revealed.zh.png"))
        finally:
            browser.close()

    expected = {o: 0 for o in poll.options}
    for s in pupils:
        expected[poll.options[s["choice"]]] += 1
    assert store.results(poll.id) == expected and store.answered(poll.id) == STUDENTS
