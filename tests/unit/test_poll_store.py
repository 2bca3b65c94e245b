"""classroom/poll_store.py: the class poll on SQLite (a temporary file) and on PostgreSQL (a throwaway server from
scripts/pg_test_server.sh), the same tests on both. Roles (only the teacher opens, closes, clears, exports and reads
an open poll's counts), one answer per student per poll, closed polls keep their results, and a class's load:
60 students over 2 processes, 0 lost and 0 double-counted, and a writer killed mid-poll loses no acknowledged
answer. PostgreSQL is skipped (with the reason) only where its binaries or driver are missing; CI installs both."""
from __future__ import annotations

import csv
import io
import multiprocessing as mp
import os
import signal
import subprocess
from pathlib import Path

import pytest

from classroom.poll_gate import KEY_FREE, KEY_WAIT, KEY_WAIT_MAX
from classroom.poll_store import NotTeacher, PollError, PollStore, postgres_available

ROOT = Path(__file__).resolve().parents[2]
KEY = "correct horse battery staple"


def _pg_binaries() -> bool:
    return any(Path("/usr/lib/postgresql").glob("*/bin/initdb")) if Path("/usr/lib/postgresql").exists() else False


@pytest.fixture(scope="module")
def pg_url():
    why = ("no PostgreSQL server binaries (apt-get install postgresql)" if not _pg_binaries()
           else "" if postgres_available() else "no psycopg driver (pip install 'psycopg[binary]')")
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the PostgreSQL poll tests: {why}")
        pytest.skip(why)
    out = subprocess.run(["bash", str(ROOT / "scripts" / "pg_test_server.sh"), "start"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    url, folder = out.stdout.split()
    yield url
    subprocess.run(["bash", str(ROOT / "scripts" / "pg_test_server.sh"), "stop", folder], timeout=60)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "polls.sqlite")
    base = request.getfixturevalue("pg_url")
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:     # a clean slate per test on the shared server
        conn.execute("DROP TABLE IF EXISTS answers, polls, key_tries")
    return base


@pytest.fixture
def store(url):
    s = PollStore(url, teacher_key=KEY)
    yield s
    s.close()                                                # the pool's threads and connections, not left to GC


def test_only_the_teacher_opens_closes_clears_and_exports(store):
    for key in (None, "", "wrong", KEY + " ", KEY[:-1]):
        with pytest.raises(NotTeacher):
            store.open_poll(key, "Next token?", ["a", "b"])
    poll = store.open_poll(KEY, "Next token?", ["a", "b"], prompt="p", model_answer="a")
    for call in (lambda k: store.close_poll(k, poll.id), lambda k: store.clear(k, poll.id),
                 lambda k: store.export_csv(k), lambda k: store.results(poll.id, key=k)):
        with pytest.raises(NotTeacher):
            call("wrong")
    assert store.poll(poll.id).is_open


def test_sqlite_runs_in_wal_mode(tmp_path):
    import sqlite3

    PollStore(tmp_path / "p.sqlite", teacher_key=KEY)
    assert sqlite3.connect(tmp_path / "p.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_no_key_configured_means_no_teacher(url):
    s = PollStore(url, teacher_key=None)
    for key in (None, "", "anything"):
        with pytest.raises(NotTeacher):
            s.open_poll(key, "q", ["a", "b"])


def test_a_student_cannot_read_counts_before_the_reveal(store):
    poll = store.open_poll(KEY, "q", ["a", "b", "c"])
    store.answer(poll.id, "s1", "a")
    store.answer(poll.id, "s2", "c")
    with pytest.raises(NotTeacher):
        store.results(poll.id)
    assert store.results(poll.id, key=KEY) == {"a": 1, "b": 0, "c": 1}
    assert store.answered(poll.id) == 2
    assert store.my_answer(poll.id, "s1") == "a" and store.my_answer(poll.id, "s3") is None
    store.close_poll(KEY, poll.id)
    assert store.results(poll.id) == {"a": 1, "b": 0, "c": 1}       # revealed: everyone sees the counts


def test_a_reanswer_replaces_the_first(store):
    poll = store.open_poll(KEY, "q", ["a", "b"])
    store.answer(poll.id, "s1", "a")
    store.answer(poll.id, "s1", "b")
    store.answer(poll.id, "s1", "b")
    assert store.results(poll.id, key=KEY) == {"a": 0, "b": 1}


def test_closed_polls_refuse_answers_and_keep_results(store):
    first = store.open_poll(KEY, "first", ["a", "b"])
    store.answer(first.id, "s1", "b")
    second = store.open_poll(KEY, "second", ["x", "y"])          # opening a new one closes the first
    assert not store.poll(first.id).is_open and store.current().id == second.id
    with pytest.raises(PollError, match="closed"):
        store.answer(first.id, "s2", "a")
    store.close_poll(KEY, second.id)
    assert store.results(first.id) == {"a": 0, "b": 1}
    assert store.current().id == second.id                       # the latest closed one, for its reveal


def test_bad_answers_are_refused(store):
    poll = store.open_poll(KEY, "q", ["a", "b"])
    for student, answer in (("s1", "c"), ("s1", 3), ("", "a"), ("s" * 5000, "a")):
        with pytest.raises(PollError):
            store.answer(poll.id, student, answer)
    with pytest.raises(PollError):
        store.open_poll(KEY, "q", ["same", "same"])
    assert store.answered(poll.id) == 0


def test_clear_removes_answers(store):
    poll = store.open_poll(KEY, "q", ["a", "b"])
    store.answer(poll.id, "s1", "a")
    assert store.clear(KEY, poll.id) == 1
    assert store.results(poll.id, key=KEY) == {"a": 0, "b": 0}


def test_csv_report_has_every_poll_and_option(store):
    p1 = store.open_poll(KEY, 'He said "hi", then', ["a", "b"], prompt="x,y", model_answer="a")
    store.answer(p1.id, "s1", "a")
    store.answer(p1.id, "s2", "a")
    p2 = store.open_poll(KEY, "second", ["x", "y"])
    store.answer(p2.id, "s1", "y")
    rows = list(csv.DictReader(io.StringIO(store.export_csv(KEY))))
    got = {(int(r["poll_id"]), r["option"]): int(r["count"]) for r in rows}
    assert got == {(p1.id, "a"): 2, (p1.id, "b"): 0, (p2.id, "x"): 0, (p2.id, "y"): 1}
    assert rows[0]["question"] == 'He said "hi", then' and rows[0]["prompt"] == "x,y"
    assert rows[-1]["closed_at"] == "" and rows[0]["closed_at"] != ""


def test_a_poll_speaks_both_languages_and_counts_one_option_across_them(store):
    poll = store.open_poll(KEY, {"zh": "能吗？", "en": "Can it?"}, [{"zh": "能", "en": "yes"}, {"zh": "不能", "en": "no"},
                                                                 "896"], "p", {"zh": "不能", "en": "no"})
    assert poll.text_in("zh") == ("能吗？", ("能", "不能", "896"), "不能")
    assert poll.text_in("en") == ("Can it?", ("yes", "no", "896"), "no")
    assert poll.options == ("yes", "no", "896") and poll.model_answer == "no"       # the English text: the identity
    store.answer(poll.id, "zh-student", "no")         # a Chinese page sends the option's identity, not its label
    store.answer(poll.id, "en-student", "no")
    assert store.results(poll.id, key=KEY) == {"yes": 0, "no": 2, "896": 0}
    for bad in ([{"zh": "能", "en": "yes"}, {"zh": "能", "en": "no"}], [{"zh": "能"}, "b"]):
        with pytest.raises(PollError):
            store.open_poll(KEY, "q", bad)


def test_an_old_store_gains_the_languages_and_keeps_its_polls(tmp_path):
    """A store written before polls spoke two languages (no texts column): opened by this version (twice, as two
    processes would), its polls, answers and counts are kept and read their one language in both."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE polls (id INTEGER PRIMARY KEY, question TEXT NOT NULL, options TEXT NOT NULL,
            prompt TEXT NOT NULL, opened_at DOUBLE PRECISION NOT NULL, closed_at DOUBLE PRECISION,
            model_answer TEXT NOT NULL);
        CREATE TABLE answers (poll_id BIGINT NOT NULL REFERENCES polls(id) ON DELETE CASCADE, student_id TEXT NOT NULL,
            answer TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, UNIQUE (poll_id, student_id));
        INSERT INTO polls VALUES (1, 'Next token?', '["Paris", "Lyon"]', 'The capital of France is', 1.0, 2.0, 'Paris');
        INSERT INTO answers VALUES (1, 's1', 'Paris', 1.5), (1, 's2', 'Lyon', 1.6);""")
    conn.commit()
    conn.close()
    PollStore(path, teacher_key=KEY)
    store = PollStore(path, teacher_key=KEY)
    old = store.poll(1)
    assert old.text_in("zh") == old.text_in("en") == ("Next token?", ("Paris", "Lyon"), "Paris")
    assert store.results(1) == {"Paris": 1, "Lyon": 1}
    new = store.open_poll(KEY, {"zh": "下一个？", "en": "Next?"}, ["a", "b"])
    assert store.poll(new.id).text_in("zh")[0] == "下一个？" and new.id == 2


def test_wrong_keys_per_address_wait_and_the_wait_doubles(store):
    """KEY_FREE wrong keys from an address, then it waits KEY_WAIT s (not even the right key is compared), then
    twice as long after each further wrong key, up to KEY_WAIT_MAX; another address is not held back; the right
    key clears the count. The clock is passed in (no sleeping)."""
    t0 = 1000.0
    for i in range(KEY_FREE - 1):
        assert store.try_key("guess", "10.0.0.7", now=t0 + i) == (False, 0.0)
    assert store.try_key("guess", "10.0.0.7", now=t0 + 10) == (False, KEY_WAIT)
    ok, left = store.try_key(KEY, "10.0.0.7", now=t0 + 10 + KEY_WAIT - 1)
    assert not ok and left == pytest.approx(1.0)                     # refused unseen: one second to go
    assert store.try_key(KEY, "10.0.0.8", now=t0 + 11) == (True, 0.0)          # another address
    assert store.try_key("guess", "10.0.0.7", now=t0 + 10 + KEY_WAIT) == (False, 2 * KEY_WAIT)
    now = t0 + 10 + 3 * KEY_WAIT
    for _ in range(12):                                                 # the wait doubles up to its cap
        ok, wait = store.try_key("guess", "10.0.0.7", now=now)
        now += wait
    assert wait == KEY_WAIT_MAX
    assert store.try_key(KEY, "10.0.0.7", now=now) == (True, 0.0)
    assert store.try_key("guess", "10.0.0.7", now=now + 1) == (False, 0.0)    # cleared: free tries again


def test_a_teacher_token_proves_the_key_until_it_expires(store, url):
    token = store.teacher_token(KEY, now=1000.0)
    assert KEY not in token and store.is_teacher_token(token, now=1000.0 + 3600)
    assert not store.is_teacher_token(token, now=1000.0 + 13 * 3600)           # expired after a teaching day
    expiry, nonce, mac = token.split(".")
    for bad in (f"{int(expiry) + 10**6}.{nonce}.{mac}", f"{expiry}.{nonce}x.{mac}", f"{expiry}.{nonce}.{'0' * 64}",
                KEY, "", None, "a.b", "é.é.é"):
        assert not store.is_teacher_token(bad, now=1000.0), bad
    assert not PollStore(url, teacher_key="another key").is_teacher_token(token, now=1000.0)   # a new key: void
    with pytest.raises(NotTeacher):
        store.teacher_token("wrong")


# -- a class's load: 60 students over 2 processes


def _students(url: str, poll_id: int, first: int, n: int, options: tuple, ack_fd: int | None = None):
    """Students first..first+n-1 answer (every third changes their mind once); each acknowledged answer is
    written to ack_fd as "student answer" after the store returned (i.e. after the commit)."""
    s = PollStore(url, teacher_key=None)
    for i in range(first, first + n):
        student = f"student-{i}"
        answers = [options[i % len(options)]]
        if i % 3 == 0:
            answers.insert(0, options[(i + 1) % len(options)])
        for a in answers:
            s.answer(poll_id, student, a)
            if ack_fd is not None:
                os.write(ack_fd, f"{student} {a}\n".encode())


def test_sixty_students_over_two_processes(store, url):
    options = ("a", "b", "c", "d")
    poll = store.open_poll(KEY, "q", options)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_students, args=(url, poll.id, k * 30, 30, options)) for k in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)                                   # a bound against a hang, not a timing (bench/poll.py times it)
    assert [p.exitcode for p in procs] == [0, 0]
    expected = {o: sum(1 for i in range(60) if options[i % 4] == o) for o in options}   # each student's last answer
    assert store.results(poll.id, key=KEY) == expected
    assert store.answered(poll.id) == 60


def test_a_killed_writer_loses_no_acknowledged_answer(store, url):
    options = ("a", "b")
    poll = store.open_poll(KEY, "q", options)
    r, w = os.pipe()
    ctx = mp.get_context("fork")
    proc = ctx.Process(target=_students, args=(url, poll.id, 0, 100000, options, w))
    proc.start()
    os.close(w)
    acks, buf = [], b""
    with os.fdopen(r, "rb") as pipe:
        while len(acks) < 40:
            line = pipe.readline()
            assert line, "the writer stopped before it was killed"
            acks.append(line.decode().split())
        os.kill(proc.pid, signal.SIGKILL)
        buf = pipe.read()                        # acknowledgements written before the kill
    proc.join(10)
    acks += [line.split() for line in buf.decode().splitlines() if len(line.split()) == 2]
    last = {}
    for student, answer in acks:
        last[student] = answer
    in_flight = acks[-1][0]           # the last student may have committed a change of mind not yet acknowledged
    lost = [(s, a) for s, a in last.items()
            if store.my_answer(poll.id, s) is None or s != in_flight and store.my_answer(poll.id, s) != a]
    assert not lost, f"{len(lost)} acknowledged answers lost: {lost[:5]}"
    assert store.answered(poll.id) >= len(last)        # at most one more: the answer in flight at the kill
    assert store.answered(poll.id) <= len(last) + 1


def test_an_unreachable_store_is_a_poll_error(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(PollError, match="cannot be opened"):
        PollStore(tmp_path / "folder", teacher_key=KEY)
    if postgres_available():
        with pytest.raises(PollError, match="unavailable"):
            PollStore("postgresql://postgres@127.0.0.1:1/none", teacher_key=KEY, timeout=2)


# ---- PostgreSQL: a process reuses its connections (the server forks a backend for each new one) ------------------
@pytest.fixture
def pg_store(pg_url):
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS answers, polls, key_tries")
    s = PollStore(pg_url, teacher_key=KEY)
    yield s
    s.close()


def test_postgres_reuses_a_connection_across_calls(pg_store, monkeypatch):
    import psycopg

    opened = []
    real = psycopg.Connection.connect.__func__                 # what psycopg_pool calls to open a connection
    monkeypatch.setattr(psycopg.Connection, "connect",
                        classmethod(lambda cls, *a, **k: opened.append(1) or real(cls, *a, **k)))
    pg_store.close()                                      # a fresh pool: its first call opens the one connection
    poll = pg_store.open_poll(KEY, "Next token?", ["a", "b"])
    for i in range(20):                                   # a class answering, and the teacher's view refreshing
        pg_store.answer(poll.id, f"s{i}", "ab"[i % 2])
        pg_store.results(poll.id, key=KEY)
    assert pg_store.results(poll.id, key=KEY) == {"a": 10, "b": 10}
    assert len(opened) == 1                               # ... which every later call reused


def test_postgres_survives_the_server_dropping_its_idle_connections(pg_store, pg_url):
    """A restart or failover kills the idle connections; the next call opens a new one instead of failing."""
    import psycopg

    poll = pg_store.open_poll(KEY, "Next token?", ["a", "b"])
    pg_store.answer(poll.id, "s1", "a")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
    assert killed >= 1
    pg_store.answer(poll.id, "s2", "b")                     # no PollError: a fresh connection
    assert pg_store.results(poll.id, key=KEY) == {"a": 1, "b": 1}


def test_postgres_survives_a_restart_that_drops_every_pooled_connection(pg_store, pg_url):
    """Three connections in the pool, all dropped at once: the next call goes past every dead one."""
    import psycopg

    poll = pg_store.open_poll(KEY, "Next token?", ["a", "b"])
    pool = pg_store._pg_pool()
    held = [pool.getconn() for _ in range(3)]             # three at once: the pool now keeps three
    for conn in held:
        pool.putconn(conn)
    with psycopg.connect(pg_url, autocommit=True) as admin:
        killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid()").fetchone()[0]
    assert killed >= 3
    pg_store.answer(poll.id, "s1", "a")                     # no PollError: past three dead connections
    assert pg_store.results(poll.id, key=KEY) == {"a": 1, "b": 0}


def test_postgres_does_not_reuse_a_connection_whose_transaction_failed(pg_store):
    poll = pg_store.open_poll(KEY, "Next token?", ["a", "b"])
    pg_store.close_poll(KEY, poll.id)
    with pytest.raises(PollError):
        pg_store.answer(poll.id, "s1", "a")                 # refused inside a transaction: rolled back
    assert pg_store.results(poll.id) == {"a": 0, "b": 0}
    with pg_store._pg_pool().connection() as conn:          # the connection lent next: no transaction left open
        assert not conn.closed and conn.info.transaction_status == 0                    # 0: idle
