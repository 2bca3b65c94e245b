"""A bounded first-come-first-served queue for heavy runs (experiment sweeps) shared by every session.

At most `running` holders at a time; at most `waiting` more may queue; anyone beyond gets QueueFull at once.
A waiter learns its place (1 = next) through on_wait(place, queued) about every `poll_s` seconds, so a page
can show it. If on_wait raises (Streamlit stops a script that way when the user clicks), the waiter leaves
the queue and the exception goes on.

    with SWEEPS.turn(on_wait=lambda place, queued: bar.progress(0, f"place {place} of {queued}")):
        run_the_sweep()
"""
from __future__ import annotations

import itertools
import threading
from collections import deque
from contextlib import contextmanager

from content.words import say
from ops.errors import InputError


class QueueFull(InputError):
    """Too many runs are already waiting (str(): English; text(lang) for a page)."""

    def __init__(self, waiting: int, limit: int):
        self.waiting, self.limit = waiting, limit
        super().__init__(self.text("en"))

    def text(self, lang: str) -> str:
        return say("classroom.queue_full", lang, n=self.waiting, limit=self.limit)


class RunQueue:
    def __init__(self, running: int = 1, waiting: int = 8):
        if running < 1 or waiting < 0:
            raise ValueError(f"running must be >= 1 and waiting >= 0, got {running}, {waiting}")
        self.running, self.waiting = running, waiting
        self._cond = threading.Condition()
        self._queue: deque[int] = deque()      # tickets not yet running, in arrival order
        self._active: set[int] = set()
        self._tickets = itertools.count()

    def state(self) -> tuple[int, int]:
        """(running now, waiting now)."""
        with self._cond:
            return len(self._active), len(self._queue)

    def _place(self, ticket: int) -> int:
        return self._queue.index(ticket) + 1

    @contextmanager
    def turn(self, on_wait=None, poll_s: float = 0.5):
        with self._cond:
            if len(self._active) >= self.running and len(self._queue) >= self.waiting:
                raise QueueFull(len(self._queue), self.waiting)
            ticket = next(self._tickets)
            self._queue.append(ticket)
        try:
            with self._cond:
                while not (len(self._active) < self.running and self._queue[0] == ticket):
                    place, queued = self._place(ticket), len(self._queue)
                    if on_wait is not None:
                        self._cond.release()          # never call out while holding the lock
                        try:
                            on_wait(place, queued)
                        finally:
                            self._cond.acquire()
                    if not (len(self._active) < self.running and self._queue[0] == ticket):
                        self._cond.wait(poll_s)
                self._queue.popleft()
                self._active.add(ticket)
                self._cond.notify_all()
        except BaseException:
            with self._cond:
                if ticket in self._queue:
                    self._queue.remove(ticket)
                self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self._active.discard(ticket)
                self._cond.notify_all()
