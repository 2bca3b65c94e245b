"""The class poll's store under a class: 60 students over 2 processes answer within 20 s, on SQLite and PostgreSQL.

    python bench/poll.py [--students 60] [--procs 2] [--window 20] [--backends sqlite,postgresql]

Each student answers at a random moment of the window (seeded); every third changes their mind once, a second
later. Each writer process reports every acknowledged answer (the store returned: committed) on a pipe. The
teacher's view (current poll + counts, what ui/poll.py's fragment reads every 2 s) is timed every 0.25 s during
the window. Then: answers sent vs counted, lost (acknowledged but not stored) and double-counted (more stored rows
than students). A second run kills one writer process (SIGKILL) halfway and checks every acknowledged answer of
it is stored. PostgreSQL comes from scripts/pg_test_server.sh (a throwaway server).
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

from ui.poll_store import PollStore  # noqa: E402

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, default=60)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--window", type=float, default=20)
    ap.add_argument("--backends", default="sqlite,postgresql")
    a = ap.parse_args()
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    for backend in a.backends.split(","):
        folder = None
        if backend == "sqlite":
            url = str(Path(tempfile.mkdtemp()) / "polls.sqlite")
        else:
            out = subprocess.run(["bash", str(ROOT / "scripts/pg_test_server.sh"), "start"], capture_output=True,
                                 text=True, check=True)
            url, folder = out.stdout.split()
        try:
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


if __name__ == "__main__":
    main()
