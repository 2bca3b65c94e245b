"""The class poll's store under a class: 60 students over 2 processes answer within 20 s, on SQLite and PostgreSQL.

    python bench/poll.py [--students 60] [--procs 2] [--window 20] [--backends sqlite,postgresql]

Each student answers at a random moment of the window (seeded); every third changes their mind once, a second
later. Each writer process reports every acknowledged answer (the store returned: committed) on a pipe. The
teacher's view (current poll + counts, what ui/poll.py's fragment reads every 2 s) is timed every 0.25 s during
the window. Then: answers sent vs counted, lost (acknowledged but not stored) and double-counted (more stored rows
than students). A second run kills one writer process (SIGKILL) halfway and checks every acknowledged answer of
it is stored. PostgreSQL comes from scripts/pg_test_server.sh (a throwaway server).

    python bench/poll.py --pages [--students 60] [--procs 2] [--window 20] [--page-students 10] [--rounds 2]

The other students' page times while the poll runs, through the app itself at the protocol level
(bench/load_protocol.py's client on Streamlit's websocket): the class server in classroom mode (--procs 2: two
processes behind HAProxy, scripts/serve_class.sh) with the poll in the chosen store. `--students` students sit on
--poll-page (opened before the window, not timed), the poll panel under it; once the poll opens, each student's
browser reruns the panel's fragment every 2 s, as Streamlit's front end does for st.fragment(run_every=), and at a
random moment of the window picks an option (one fragment run) and sends it (another). Meanwhile `--page-students`
other students follow load_protocol's cycle of page visits, slider moves and generations, timed from request to
script_finished. The same page students also run alone (no poll students connected, no poll open) on the same
servers in the same process, before each poll round: their p50 / p95 side by side is what the poll costs them.
Also reported: answers sent vs counted by the store, the poll students' panel redraw p50 / p95, and errors.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classroom.poll_store import PollStore  # noqa: E402

KEY = "bench-teacher"
OPTIONS = ("a", "b", "c", "d")


def writer(url, poll_id, students, window, t0, fd, seed):
    """One process's students, each a thread that sleeps to its moment and answers; acks go to fd."""
    s = PollStore(url, teacher_key=None)
    rng = random.Random(seed)
    lock = threading.Lock()

    def student(i, at):
        answers = [OPTIONS[i % 4]] if i % 3 else [OPTIONS[(i + 1) % 4], OPTIONS[i % 4]]
        time.sleep(max(0.0, t0 + at - time.time()))
        for k, a in enumerate(answers):
            if k:
                time.sleep(1.0)
            start = time.perf_counter()
            s.answer(poll_id, f"student-{i}", a)
            took = time.perf_counter() - start
            with lock:
                os.write(fd, f"{i} {a} {took:.6f}\n".encode())

    threads = [threading.Thread(target=student, args=(i, rng.uniform(0, window - 1.5))) for i in students]
    for th in threads:
        th.start()
    for th in threads:
        th.join()


def run(url, n, procs, window, kill: bool, seed=0):
    store = PollStore(url, teacher_key=KEY)
    poll = store.open_poll(KEY, "bench", OPTIONS)
    ctx = mp.get_context("fork")
    r, w = os.pipe()
    t0 = time.time() + 0.5
    groups = [list(range(k, n, procs)) for k in range(procs)]
    ps = [ctx.Process(target=writer, args=(url, poll.id, g, window, t0, w, seed + k)) for k, g in enumerate(groups)]
    for p in ps:
        p.start()
    os.close(w)
    refresh, killed_at = [], None
    acks_raw = []
    reader = threading.Thread(target=lambda: acks_raw.extend(os.fdopen(r, "rb").read().decode().splitlines()))
    reader.start()
    while any(p.is_alive() for p in ps):
        start = time.perf_counter()
        cur = store.current()
        store.results(cur.id, key=KEY)
        refresh.append(time.perf_counter() - start)
        if kill and killed_at is None and time.time() - t0 > window / 2:
            os.kill(ps[0].pid, signal.SIGKILL)
            killed_at = time.time() - t0
        time.sleep(0.25)
    for p in ps:
        p.join()
    reader.join()
    took_all = time.time() - t0
    acks = [line.split() for line in acks_raw if len(line.split()) == 3]
    last = {}
    for i, a, _ in acks:
        last[int(i)] = a
    stored = {i: store.my_answer(poll.id, f"student-{i}") for i in range(n)}
    lost = [i for i, a in last.items() if stored[i] is None or (stored[i] != a and not kill)]
    store.close_poll(KEY, poll.id)
    counted = sum(store.results(poll.id).values())        # the histogram's total, as the room sees it
    lat = sorted(float(x[2]) for x in acks)
    q = statistics.quantiles
    return dict(sent=len(acks), students_acked=len(last), counted=counted, lost=len(lost),
                double=None if kill else counted - len(last),
                answer_p50=statistics.median(lat) * 1e3, answer_p95=q(lat, n=20)[-1] * 1e3,
                answer_max=lat[-1] * 1e3, refresh_p50=statistics.median(refresh) * 1e3,
                refresh_p95=q(refresh, n=20)[-1] * 1e3, refreshes=len(refresh), window=took_all,
                killed_at=killed_at, exitcodes=[p.exitcode for p in ps])


# ---- the other students' page times while the poll runs (--pages) -------------------------------------------------
async def poll_student(i, base, page, clock, answer_at, timeout_s, out):
    """One student with the poll under `page`: open the page (before the window), then as a browser does rerun the
    poll's fragment every interval until t_end, and at answer_at choose an option and send it (two fragment runs,
    as the send button is enabled only once an option is chosen)."""
    import asyncio
    import urllib.parse

    import websockets
    from load_protocol import Student, http_cookie, request, rerun, widget_state
    from load_test import marker

    # a prompt of its own, apart from the page students' (a trace is shared by every session with the same prompt)
    st = Student(i, urllib.parse.urlencode({"prompt": marker(1000 + i), "lang": "en"}))
    st.page = page

    async def run(ws, fid, widgets=(), label="redraw"):
        states, shown = dict(st.states), dict(st.widgets)      # a fragment run redraws only the fragment's widgets
        back = rerun(st, widgets=list(widgets))
        back.rerun_script.fragment_id, back.rerun_script.is_auto_rerun = fid, not widgets
        seconds, why = await request(ws, st, back, timeout_s)
        st.states, st.widgets = {**states, **st.states}, {**shown, **st.widgets}
        out["runs"].append((label, seconds, why))
        return why

    try:
        cookie = await asyncio.to_thread(http_cookie, base, timeout_s)
        async with websockets.connect(base.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=None, open_timeout=timeout_s, ping_interval=None,
                                      additional_headers={"Cookie": cookie} if cookie else None) as ws:
            seconds, why = await request(ws, st, rerun(st, page), timeout_s)
            out["opened"].append((i, seconds, why))
            while "open" not in clock:                          # the poll opens once every student is on the page
                await asyncio.sleep(0.1)
            answered = False
            while time.time() < clock["end"]:
                if not st.fragments:
                    out["runs"].append(("redraw", 0.0, f"no auto-rerun fragment on /{page} (classroom mode off?)"))
                    return
                fid, every = next(iter(st.fragments.items()))
                began = time.time()
                if not answered and began >= clock["open"] + answer_at:
                    choice = next((w for k, w in st.widgets.items() if k.startswith("poll-choice-")), None)
                    if choice is None:
                        out["runs"].append(("answer", 0.0, "no poll on the page"))
                    else:
                        pick = OPTIONS[i % len(OPTIONS)]
                        why = await run(ws, fid, [widget_state(choice, string_value=pick)], "choose")
                        send = next((w for k, w in st.widgets.items() if k.startswith("poll-send-")), None)
                        if not why and send is not None:
                            if not await run(ws, fid, [widget_state(send, trigger_value=True)], "send"):
                                out["sent"][i] = pick
                    answered = True
                else:
                    await run(ws, fid)
                await asyncio.sleep(max(0.0, began + every - time.time()))
    except (OSError, websockets.WebSocketException, asyncio.TimeoutError) as e:
        out["runs"].append(("connection", 0.0, f"{type(e).__name__}: {e}"[:200]))
        if i not in {j for j, _, _ in out["opened"]}:          # counted, so the poll does not wait for it
            out["opened"].append((i, 0.0, "never opened its page"))


async def poll_round(base, url, n, page, window, page_students, actions, think, timeout_s, seed):
    """The poll students connect and open their page, the poll opens, then for `window` s they redraw and answer
    while the page students work. Returns (the page students' actions, the poll students' record, the poll's id)."""
    import asyncio

    from load_protocol import drive

    out = {"opened": [], "runs": [], "sent": {}}
    clock = {}
    rng = random.Random(seed)
    answer_at = [rng.uniform(0.5, max(0.6, window - 2.5)) for _ in range(n)]
    tasks = [asyncio.create_task(poll_student(i, base, page, clock, answer_at[i], timeout_s, out)) for i in range(n)]
    while len(out["opened"]) < n:                          # every poll student on the page (or failed) first
        await asyncio.sleep(0.2)
    print(f"{len(out['opened'])} poll students on /{page}; the poll opens for {window:g} s", file=sys.stderr,
          flush=True)
    poll = PollStore(url, teacher_key=KEY).open_poll(KEY, "bench: which option?", OPTIONS, "", OPTIONS[0])
    clock["end"] = time.time() + window
    clock["open"] = time.time()
    results, _ = await drive(base, page_students, actions, think, timeout_s, 8, seed)
    await asyncio.gather(*tasks)
    return results, out, poll.id


def pages_run(a, backend, url):
    """Baseline and poll rounds, interleaved, on one set of servers; prints the comparison."""
    import asyncio

    from load_protocol import Servers, drive, pct

    env = {"OPERATOR_LAB_CLASSROOM": "1", "OPERATOR_LAB_TEACHER_KEY": KEY, "OPERATOR_LAB_POLL_DB": url,
           "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none"}
    servers = Servers(a.procs, env, port=a.port)
    store = PollStore(url, teacher_key=KEY)
    rows = {"alone": [], "poll": []}
    errors, answers, redraws, sends = [], [], [], []
    try:
        for b in servers.backends:                           # warm each process: model load, first trace; not timed
            print(f"warming {b}", file=sys.stderr, flush=True)
            asyncio.run(drive(b, 1, 2, 0, 300, 8, seed=99))
        # the page students' first visits (their prompts' traces, each page's first run), not timed: both measured
        # runs then find the same warm caches, and the comparison is the poll's alone
        asyncio.run(drive(servers.base, a.page_students, a.actions, 0, a.timeout, 8, seed=0))
        for r in range(a.rounds):
            print(f"round {r + 1}: the page students alone, then with the poll", file=sys.stderr, flush=True)
            cur = store.current()
            if cur is not None and cur.is_open:
                store.close_poll(KEY, cur.id)
            alone, _ = asyncio.run(drive(servers.base, a.page_students, a.actions, a.think, a.timeout, 8, seed=r))
            under, out, poll_id = asyncio.run(poll_round(servers.base, url, a.students, a.poll_page, a.window,
                                                         a.page_students, a.actions, a.think, a.timeout, seed=r))
            store.close_poll(KEY, poll_id)
            rows["alone"] += alone
            rows["poll"] += under
            errors += [("alone", x.kind, x.why) for x in alone if not x.ok] + \
                      [("poll", x.kind, x.why) for x in under if not x.ok] + \
                      [("poll student", label, why) for label, _, why in out["runs"] if why] + \
                      [("poll student", "open", why) for _, _, why in out["opened"] if why]
            counted = sum(store.results(poll_id).values())
            answers.append((len(out["sent"]), counted, a.students))     # the app's student ids are its own secret
            redraws += [s for label, s, why in out["runs"] if label == "redraw" and not why]
            sends += [s for label, s, why in out["runs"] if label == "send" and not why]
    finally:
        servers.stop()
    fmt = lambda xs: f"p50 {statistics.median(xs):.2f} s, p95 {pct(xs, 0.95):.2f} s ({len(xs)})" if xs else "none"
    for name, acts in rows.items():
        print(f"{backend:10} page students {name:5}: " + fmt([x.seconds for x in acts if x.ok]) + " · by kind: " +
              ", ".join(f"{k} {fmt([x.seconds for x in acts if x.ok and x.kind == k])}"
                        for k in sorted({x.kind for x in acts})), flush=True)
    print(f"{backend:10} poll students' panel redraw: {fmt(redraws)}; send: {fmt(sends)}; "
          "answers sent/counted/students per round: "
          f"{answers}; errors: {len(errors)}", flush=True)
    for e in errors[:10]:
        print("ERROR", e)
    return not errors and all(sent == counted for sent, counted, _ in answers)


def check_ab(url, rounds: int, calls: int = 200):
    """One process answering `calls` times in a row, the store as it is (a dropped connection retried at BEGIN)
    against psycopg_pool's check= on every loan (a round trip each), alternated `rounds` times: answer latency."""
    from psycopg_pool import ConnectionPool

    times = {"check on every loan": [], "retry at BEGIN (the store)": []}
    for _ in range(rounds):
        for mode, got in times.items():
            s = PollStore(url, teacher_key=KEY)
            if mode.startswith("check"):
                s.close()
                s._pool = ConnectionPool(url, min_size=0, max_size=8, timeout=10, kwargs=dict(autocommit=True),
                                         check=ConnectionPool.check_connection, open=True)
                s._pool_pid = os.getpid()
            poll = s.open_poll(KEY, "q", list(OPTIONS))
            for i in range(calls):
                t = time.perf_counter()
                s.answer(poll.id, f"s{i}", OPTIONS[i % 4])
                got.append((time.perf_counter() - t) * 1e3)
            s.close()
    for mode, got in times.items():
        print(f"postgresql {mode}: answer p50 {statistics.median(got):.2f} ms, p95 {sorted(got)[int(0.95 * len(got))]:.2f} ms "
              f"({len(got)} answers)", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--window", type=float, default=20)
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--pages", action="store_true", help="the other students' page times while the poll runs, "
                    "through the app (the class server, protocol-level clients), beside a run without the poll")
    ap.add_argument("--page-students", type=int, default=10, help="--pages: students moving on pages")
    ap.add_argument("--actions", type=int, default=8, help="--pages: actions per page student (load_protocol's cycle)")
    ap.add_argument("--think", type=float, default=2.0, help="--pages: seconds between a page student's actions")
    ap.add_argument("--poll-page", default="lm_head", help="--pages: the page the poll students sit on")
    ap.add_argument("--rounds", type=int, default=1, help="--pages: rounds of (alone, with the poll)")
    ap.add_argument("--timeout", type=float, default=120.0, help="--pages: seconds one request may take")
    ap.add_argument("--port", type=int, default=None, help="--pages with --procs 1: the server's port")
    ap.add_argument("--check-ab", type=int, default=0, metavar="ROUNDS", help="PostgreSQL only: the store's retry of "
                    "a dropped connection at BEGIN vs the pool's check on every loan, alternated ROUNDS times")
    a = ap.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    if a.pages:
        sys.path.insert(0, str(ROOT / "bench"))
    ok = True
    for backend in a.backends.split(","):
        folder = None
        if backend == "sqlite":
            url = str(Path(tempfile.mkdtemp()) / "polls.sqlite")
        else:
            out = subprocess.run(["bash", str(ROOT / "scripts/pg_test_server.sh"), "start"], capture_output=True,
                                 text=True, check=True)
            url, folder = out.stdout.split()
        try:
            if a.check_ab and backend == "postgresql":
                check_ab(url, a.check_ab)
                continue
            if a.pages:
                if backend == "postgresql":
                    import psycopg

                    with psycopg.connect(url, autocommit=True) as conn:
                        conn.execute("DROP TABLE IF EXISTS answers, polls")
                ok = pages_run(a, backend, url) and ok
                continue
            for kill in (False, True):
                if backend == "postgresql":
                    import psycopg

                    with psycopg.connect(url, autocommit=True) as conn:
                        conn.execute("DROP TABLE IF EXISTS answers, polls")
                elif kill:
                    url = str(Path(tempfile.mkdtemp()) / "polls.sqlite")
                r = run(url, a.students, a.procs, a.window, kill)
                print(f"{backend:10} kill={kill!s:5} " + " ".join(
                    f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()), flush=True)
        finally:
            if folder:
                subprocess.run(["bash", str(ROOT / "scripts/pg_test_server.sh"), "stop", folder], check=False)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
