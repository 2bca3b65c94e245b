"""The class poll's store, shared by every Streamlit process: SQLite (WAL) on one machine, PostgreSQL across machines.

No Streamlit here (ui/poll.py draws the panel; bench/poll.py and the tests drive this alone). The roles live in
the API, not in the page: opening, closing and clearing a poll, reading an open poll's counts and exporting the
CSV all need the teacher key (compared in constant time); a student may answer an open poll, read their own
answer, and read the counts once the teacher has closed (revealed) it. One answer per student per poll: a
re-answer replaces the first (an UPSERT on the unique (poll_id, student_id)). A poll's answers are never read
per student by anyone: counts only, and the teacher's CSV.

A poll speaks both languages: its question, options and answer may each be {"zh": ..., "en": ...}; the English
text is the option's identity (what an answer stores and the counts are keyed by), and each student reads their
page's language (Poll.text_in). A store made before the texts column existed gains it on open (old polls read their
one language in both). Wrong teacher keys are counted per client address in the store, so a reload or another
process does not reset them (try_key: 5 free, then a wait that doubles); a teacher's browser keeps a signed,
expiring token made from the key (teacher_token), never the key itself.

    store = PollStore("/tmp/polls.sqlite", teacher_key="k")     # or "postgresql://user@host:5432/db"
    poll = store.open_poll("k", "Next token?", ["Paris", "London"], prompt="The capital of France is")
    store.answer(poll.id, "student-1", "Paris")
    store.results(poll.id, key="k")                             # {"Paris": 1, "London": 0}
"""
from __future__ import annotations

import csv
import hmac
import io
import json
import os
import sqlite3
import threading
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from .poll_gate import TeacherGate

MAX_TEXT = 2000        # a question, prompt or answer longer than this is refused (the store is shared by a class)
MAX_OPTIONS = 12
PG_POOL = 8            # PostgreSQL connections one process's pool holds at most (bench/poll.py)
LANGS = ("zh", "en")


class PollError(ValueError):
    """A request the store refuses; the message says why (for the page to show)."""


class NotTeacher(PollError):
    """A request only the teacher may make, made without the teacher key (or with a wrong one)."""


def postgres_available() -> bool:
    """Whether the PostgreSQL driver and its pool import (an optional extra: docs/classroom.md)."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Poll:
    id: int
    question: str
    options: tuple
    prompt: str
    opened_at: float
    closed_at: float | None
    model_answer: str
    texts: dict | None = None      # {"zh": {"question", "options", "answer"}, "en": {...}}; None: one language

    @property
    def is_open(self) -> bool:
        return self.closed_at is None

    def text_in(self, lang: str) -> tuple[str, tuple, str]:
        """(question, option labels in the poll's order, the model's answer) in `lang`; a one-language poll (made
        before polls spoke two) reads its own text in every language."""
        t = (self.texts or {}).get(lang)
        if not t:
            return self.question, self.options, self.model_answer
        return t["question"], tuple(t["options"]), t["answer"]


SCHEMA = (
    """CREATE TABLE IF NOT EXISTS polls (
        id {id_type} PRIMARY KEY, question TEXT NOT NULL, options TEXT NOT NULL, prompt TEXT NOT NULL,
        opened_at DOUBLE PRECISION NOT NULL, closed_at DOUBLE PRECISION, model_answer TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS answers (
        poll_id BIGINT NOT NULL REFERENCES polls(id) ON DELETE CASCADE, student_id TEXT NOT NULL,
        answer TEXT NOT NULL, at DOUBLE PRECISION NOT NULL, UNIQUE (poll_id, student_id))""",
    """CREATE TABLE IF NOT EXISTS key_tries (
        address TEXT PRIMARY KEY, failures INTEGER NOT NULL, last_at DOUBLE PRECISION NOT NULL)""",
)
# The answer lands only while its poll is open: one statement, so a close between a check and the write cannot
# let a late answer in.
ANSWER = """INSERT INTO answers (poll_id, student_id, answer, at)
    SELECT {p}, {p}, {p}, {p} WHERE EXISTS (SELECT 1 FROM polls WHERE id = {p} AND closed_at IS NULL)
    ON CONFLICT (poll_id, student_id) DO UPDATE SET answer = excluded.answer, at = excluded.at"""
POLL_COLUMNS = "id, question, options, prompt, opened_at, closed_at, model_answer, texts"


def _text(value, what: str) -> str:
    if not isinstance(value, str):
        raise PollError(f"{what} must be text, not {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise PollError(f"{what} is longer than {MAX_TEXT} characters")
    return value


def _both(value, what: str) -> dict:
    """A text given once (the same in both languages) or as {"zh": ..., "en": ...}, as {"zh", "en"}."""
    if isinstance(value, dict):
        if set(value) != set(LANGS):
            raise PollError(f"{what} needs exactly the languages {LANGS}")
        return {lang: _text(value[lang], what) for lang in LANGS}
    value = _text(value, what)
    return {lang: value for lang in LANGS}


class PollStore(TeacherGate):
    """One class's polls. url: an SQLite file path, or a postgresql:// URL (needs psycopg)."""

    def __init__(self, url: str | Path, teacher_key: str | None, timeout: float = 10.0):
        self.url = str(url)
        self._key = teacher_key or ""
        self.timeout = timeout
        self.postgres = self.url.startswith(("postgresql://", "postgres://"))
        if self.postgres and not postgres_available():
            raise PollError("a postgresql:// poll store needs the psycopg driver and its pool: "
                            "pip install 'psycopg[binary,pool]' (docs/classroom.md)")
        if not self.postgres:
            Path(self.url).parent.mkdir(parents=True, exist_ok=True)
            try:
                conn = sqlite3.connect(self.url, timeout=self.timeout, isolation_level=None)
                try:                  # readers never wait for the writer; the mode stays with the file
                    conn.execute("PRAGMA journal_mode=WAL")
                finally:
                    conn.close()
            except sqlite3.Error as e:
                raise PollError(f"the poll store {self.url} cannot be opened: {e}") from None
        self._p = "%s" if self.postgres else "?"
        self._pool, self._pool_pid, self._pool_lock = None, None, threading.Lock()
        try:
            self._set_up()
        except PollError:
            self.close()            # a pool that cannot reach its server stops retrying
            raise

    def _set_up(self):
        with self._tx() as cur:
            if self.postgres:       # two processes creating the tables at once: one waits for the other
                cur.execute("SELECT pg_advisory_xact_lock(3939)")
            id_type = "BIGINT GENERATED BY DEFAULT AS IDENTITY" if self.postgres else "INTEGER"
            for statement in SCHEMA:
                cur.execute(statement.format(id_type=id_type))
            self._migrate(cur)

    def _migrate(self, cur):
        """A store made before polls spoke two languages gains the texts column (inside the set-up's transaction,
        which SQLite's BEGIN IMMEDIATE and PostgreSQL's advisory lock make one process's at a time); its polls and
        answers stay as they are, and read their one language in both."""
        if self.postgres:
            cur.execute("ALTER TABLE polls ADD COLUMN IF NOT EXISTS texts TEXT")
            return
        cur.execute("PRAGMA table_info(polls)")
        if "texts" not in {row[1] for row in cur.fetchall()}:
            cur.execute("ALTER TABLE polls ADD COLUMN texts TEXT")

    # -- connections: SQLite opens one per call (a file open); PostgreSQL borrows from psycopg's pool (up to PG_POOL
    # per process), because the server starts a backend process for every new connection (bench/RESULTS.md, 10b)
    @contextmanager
    def _tx(self):
        """One transaction; a database that cannot be reached or stays locked past the timeout is a PollError (the
        page says so instead of failing)."""
        errors = (sqlite3.OperationalError,)
        if self.postgres:
            import psycopg

            errors = (psycopg.OperationalError,)          # psycopg_pool.PoolTimeout is one
        try:
            with self._connection() as cur:
                yield cur
        except errors as e:
            raise PollError(f"the poll store is unavailable: {str(e).strip().splitlines()[0]}") from None

    def _pg_pool(self):
        """This process's pool (psycopg_pool.ConnectionPool), opened at first use; it takes a connection back rolled
        back after a failed transaction, or closes it when broken. Its worker threads do not survive a fork, so a
        forked child opens its own."""
        with self._pool_lock:
            if self._pool is None or self._pool_pid != os.getpid():
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(self.url, min_size=0, max_size=PG_POOL, timeout=self.timeout,
                                            kwargs=dict(autocommit=True, connect_timeout=max(1, int(self.timeout))),
                                            open=True, name=f"poll-store-{os.getpid()}")
                self._pool_pid = os.getpid()
            return self._pool

    def _pg_begin(self, stack: ExitStack):
        """A pooled connection in a new transaction (both entered on stack). One the server dropped while it sat in
        the pool (a restart, a failover) fails at BEGIN, before anything ran: it goes back (the pool closes it) and
        the next one is tried (a restart drops them all: up to PG_POOL, then a new one). Checking every connection
        before lending it (the pool's check=) costs a round trip a call: 27 % of an answer's time (bench/RESULTS.md,
        10d)."""
        import psycopg

        pool = self._pg_pool()
        for tries_left in range(PG_POOL, -1, -1):
            conn = pool.getconn()
            stack.callback(pool.putconn, conn)          # after the commit or rollback below
            try:
                stack.enter_context(conn.transaction())
                return conn
            except psycopg.OperationalError:
                if not tries_left:
                    raise

    def close(self) -> None:
        """Close the pool's connections (PostgreSQL; SQLite keeps none open)."""
        with self._pool_lock:
            if self._pool is not None and self._pool_pid == os.getpid():
                self._pool.close()
            self._pool = None

    @contextmanager
    def _connection(self):
        if self.postgres:
            with ExitStack() as stack:              # commits on success, rolls back on error, then gives it back
                yield stack.enter_context(self._pg_begin(stack).cursor())
            return
        conn = sqlite3.connect(self.url, timeout=self.timeout, isolation_level=None)
        try:
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a commit survives a killed process
            cur = conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                conn.rollback()
                raise
            conn.commit()
        finally:
            conn.close()

    def _sql(self, text: str) -> str:
        return text.replace("{p}", self._p)

    # -- roles
    def is_teacher(self, key: str | None) -> bool:
        """Constant-time comparison with the configured key; no key configured: no one is the teacher."""
        if not self._key or not isinstance(key, str) or not key:
            return False
        return hmac.compare_digest(key.encode("utf-8"), self._key.encode("utf-8"))

    def _require_teacher(self, key):
        if not self.is_teacher(key):
            raise NotTeacher("only the teacher may do this (the teacher key is missing or wrong)")

    # -- the teacher's side
    def open_poll(self, key, question, options, prompt: str = "", model_answer="") -> Poll:
        """A new open poll (any poll still open is closed first: one poll at a time per class). The question, each
        option and the model's answer: a text (the same in both languages) or {"zh": ..., "en": ...}."""
        self._require_teacher(key)
        options = tuple(options)
        if not 2 <= len(options) <= MAX_OPTIONS:
            raise PollError(f"a poll needs 2 to {MAX_OPTIONS} different options")
        opts = [_both(o, f"option {i + 1}") for i, o in enumerate(options)]
        if any(len({o[lang] for o in opts}) != len(opts) for lang in LANGS):
            raise PollError(f"a poll needs 2 to {MAX_OPTIONS} different options")
        q, a = _both(question, "the question"), _both(model_answer, "the model's answer")
        texts = {lang: {"question": q[lang], "options": [o[lang] for o in opts], "answer": a[lang]} for lang in LANGS}
        now = time.time()
        with self._tx() as cur:
            cur.execute(self._sql("UPDATE polls SET closed_at = {p} WHERE closed_at IS NULL"), (now,))
            cur.execute(self._sql("INSERT INTO polls (question, options, prompt, opened_at, model_answer, texts) "
                                  "VALUES ({p}, {p}, {p}, {p}, {p}, {p}) RETURNING id"),
                        (q["en"], json.dumps([o["en"] for o in opts], ensure_ascii=False),
                         _text(prompt, "the prompt"), now, a["en"], json.dumps(texts, ensure_ascii=False)))
            poll_id = cur.fetchone()[0]
        return self.poll(poll_id)

    def close_poll(self, key, poll_id: int) -> Poll:
        """Close (and so reveal) a poll; its answers stay for the report."""
        self._require_teacher(key)
        with self._tx() as cur:
            cur.execute(self._sql("UPDATE polls SET closed_at = {p} WHERE id = {p} AND closed_at IS NULL"),
                        (time.time(), int(poll_id)))
        return self.poll(poll_id)

    def clear(self, key, poll_id: int) -> int:
        """Remove a poll's answers (a fresh start on the same question); returns how many were removed."""
        self._require_teacher(key)
        with self._tx() as cur:
            cur.execute(self._sql("DELETE FROM answers WHERE poll_id = {p}"), (int(poll_id),))
            return cur.rowcount

    def export_csv(self, key, since: float = 0.0) -> str:
        """The session report: one row per poll opened at or after `since` and option, with its count."""
        self._require_teacher(key)
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["poll_id", "question", "prompt", "opened_at", "closed_at", "model_answer", "option", "count",
                    "answers"])
        for poll in self.polls(since):
            counts = self._counts(poll)
            total = sum(counts.values())
            for option, n in counts.items():
                w.writerow([poll.id, poll.question, poll.prompt, _iso(poll.opened_at), _iso(poll.closed_at),
                            poll.model_answer, option, n, total])
        return out.getvalue()

    # -- everyone
    def poll(self, poll_id: int) -> Poll:
        with self._tx() as cur:
            cur.execute(self._sql(f"SELECT {POLL_COLUMNS} FROM polls WHERE id = {{p}}"), (int(poll_id),))
            row = cur.fetchone()
        if row is None:
            raise PollError(f"there is no poll {poll_id}")
        return _poll(row)

    def current(self) -> Poll | None:
        """The open poll, else the latest closed one (its results shown to all), else None."""
        with self._tx() as cur:
            cur.execute(f"SELECT {POLL_COLUMNS} FROM polls ORDER BY (closed_at IS NULL) DESC, id DESC LIMIT 1")
            row = cur.fetchone()
        return _poll(row) if row else None

    def polls(self, since: float = 0.0) -> list[Poll]:
        with self._tx() as cur:
            cur.execute(self._sql(f"SELECT {POLL_COLUMNS} FROM polls WHERE opened_at >= {{p}} ORDER BY id"),
                        (since,))
            return [_poll(r) for r in cur.fetchall()]

    def answer(self, poll_id: int, student_id: str, answer: str) -> None:
        """Record (or replace) a student's answer to an open poll; returns only once it is committed."""
        student_id = _text(student_id, "the student id")
        if not student_id:
            raise PollError("the student id is empty")
        poll = self.poll(poll_id)
        if answer not in poll.options:
            raise PollError("that answer is not one of the poll's options")
        with self._tx() as cur:
            cur.execute(self._sql(ANSWER), (int(poll_id), student_id, answer, time.time(), int(poll_id)))
            accepted = cur.rowcount == 1
        if not accepted:
            raise PollError("the poll is closed")

    def my_answer(self, poll_id: int, student_id: str) -> str | None:
        with self._tx() as cur:
            cur.execute(self._sql("SELECT answer FROM answers WHERE poll_id = {p} AND student_id = {p}"),
                        (int(poll_id), student_id))
            row = cur.fetchone()
        return row[0] if row else None

    def results(self, poll_id: int, key=None) -> dict:
        """{option: count} in the poll's order; an open poll's counts only for the teacher."""
        poll = self.poll(poll_id)
        if poll.is_open:
            self._require_teacher(key)
        return self._counts(poll)

    def answered(self, poll_id: int) -> int:
        """How many students answered (shown to everyone: a number, not who or what)."""
        with self._tx() as cur:
            cur.execute(self._sql("SELECT COUNT(*) FROM answers WHERE poll_id = {p}"), (int(poll_id),))
            return int(cur.fetchone()[0])

    def _counts(self, poll: Poll) -> dict:
        with self._tx() as cur:
            cur.execute(self._sql("SELECT answer, COUNT(*) FROM answers WHERE poll_id = {p} GROUP BY answer"),
                        (poll.id,))
            found = {a: int(n) for a, n in cur.fetchall()}
        return {o: found.get(o, 0) for o in poll.options}


def _poll(row) -> Poll:
    pid, question, options, prompt, opened, closed, model_answer, texts = row
    return Poll(int(pid), question, tuple(json.loads(options)), prompt, float(opened),
                None if closed is None else float(closed), model_answer, json.loads(texts) if texts else None)


def _iso(t: float | None) -> str:
    return "" if t is None else time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))
