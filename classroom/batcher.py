"""The server's decode batcher: one thread per process runs the next decode steps of every session generating at
that moment as one forward pass (ops/engine/batch.py): continuous batching, on the traffic of the room.

A session's decode step (classroom.jobs.decode_step) hands its Decoder in (submit) and waits for its own step
(Ticket.wait): the same token, the same GenerationStep, as its step alone. The thread takes what is waiting: the
oldest ticket's group (one model, one path), up to `cap` of them, the rest wait for the next step, each told its
place. Before a step it waits at most `window` seconds for the decodings running to their end (submit(more=True))
to come back with their next step: they come back at once, or after drawing their text, and a room's generations
then step together rather than in the groups they happened to start in (on a loaded machine a woken session thread
may wait tens of ms for a core: waiting 20 ms for the last step's rows, 8 sessions stepped 1.6 rows a step; waiting
200 ms for those running to their end, 3.6; bench/RESULTS_load.md). One that does not come back within the window
(its user left) is not in the next step, and no longer waited for.

A session that leaves (Streamlit stops its script: on_wait raises) while its ticket waits is taken out of the queue
at once; while its step runs, it waits for the step to end, so no step ever writes into a decoding whose session
has moved on. A failure in one decoding's step reaches that session only (its Ticket.wait raises it).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field

from ops.engine import batch

WINDOW_S = 0.2           # at most this long to wait for the generating sessions to come back (bench/batching.py)
POLL_S = 0.25            # how often a waiting session is asked whether it is still there (on_wait)
KEEP = 512               # steps kept for the Serving page's figures


@dataclass
class Ticket:
    """One session's next decode step: handed in, taken into a step, done (result: GenerationStep or exception)."""
    decoder: object
    more: bool = False               # its session will come back with the next step at once (running to the end)
    done: threading.Event = field(default_factory=threading.Event)
    taken: bool = False
    result: object = None

    def wait(self, batcher: Batcher, on_wait=None, poll_s: float = POLL_S):
        """The step, once run; its exception raised here. on_wait(place) is called about every poll_s seconds while
        it waits (place 0: in the step now running or the next one; n: n-th beyond the batch cap); if on_wait raises
        (the session left), the ticket leaves the queue, or, already taken, waits for its step to end, and the
        exception goes on."""
        while not self.done.wait(poll_s):
            if on_wait is None:
                continue
            try:
                on_wait(batcher.place(self))
            except BaseException:
                if not batcher.withdraw(self):
                    self.done.wait()
                raise
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@dataclass(frozen=True)
class StepRecord:
    """One batched step as the Serving page shows it: rows, seconds, when it ended (time.monotonic)."""
    rows: int
    seconds: float
    ended: float


class Queue:
    """What the decode batcher and the trace batcher (classroom/tracer.py) share: tickets waiting in arrival order
    under one condition, and the thread that serves them, started with the first ticket."""

    def __init__(self, cap: int, spawn=None):
        """spawn(loop): starts a thread running loop() (classroom/jobs.py hands in its joined-at-exit background
        thread); None: no thread, whoever made it calls run_once() (the tests)."""
        if cap < 1:
            raise ValueError(f"a batch holds at least one request, got cap={cap}")
        self.cap, self._spawn = cap, spawn
        self._cond = threading.Condition()
        self._waiting: deque = deque()
        self._thread: threading.Thread | None = None

    def _queue(self, ticket):
        with self._cond:
            self._waiting.append(ticket)
            self._cond.notify_all()
        if self._spawn is not None and self._thread is None:
            with self._cond:
                if self._thread is None:
                    self._thread = self._spawn(self.loop)
        return ticket

    def withdraw(self, ticket) -> bool:
        """Take a ticket that has not been taken yet out of the queue (True), else False."""
        with self._cond:
            if ticket.taken or ticket not in self._waiting:
                return False
            self._waiting.remove(ticket)
            self._cond.notify_all()
            return True

    def run_once(self) -> int:
        """Take and run one batch (no waiting): the tickets it ran. take() and run() are the subclass's."""
        tickets = self.take()
        if tickets:
            self.run(tickets)
        return len(tickets)


class Batcher(Queue):
    def __init__(self, cap: int, window: float = WINDOW_S, spawn=None):
        """cap: decodings per step; window: see the module's docstring; spawn: see Queue."""
        super().__init__(cap, spawn)
        self.window = window
        self._live: dict = {}                  # id(decoder) -> decoder: running to its end, coming back
        self.running = 0                       # rows of the step running now (0: none)
        self.steps: deque[StepRecord] = deque(maxlen=KEEP)

    # ---- the sessions' side ------------------------------------------------------------------------------
    def submit(self, decoder, more: bool = False) -> Ticket:
        """Queue decoder's next step (batch.can_join(decoder) must hold); the thread starts with the first.
        more: its session will ask for the next step as soon as this one is done (the next step waits for it)."""
        return self._queue(Ticket(decoder, more))

    def place(self, ticket: Ticket) -> int:
        """0: in the running or the next step; n: the n-th waiting beyond the batch cap."""
        with self._cond:
            if ticket.taken or ticket not in self._waiting:
                return 0
            return max(0, list(self._waiting).index(ticket) + 1 - self.cap)

    def waited_for(self) -> int:
        """Decodings running to their end that the next step waits for."""
        with self._cond:
            return len(self._live)

    def queued(self) -> int:
        """Tickets waiting (not yet taken into a step)."""
        with self._cond:
            return len(self._waiting)

    # ---- the thread's side ---------------------------------------------------------------------------------
    def take(self) -> list[Ticket]:
        """The next step's tickets: the oldest one's group, up to cap, in arrival order (taken out of the queue)."""
        with self._cond:
            if not self._waiting:
                return []
            tickets = self._next_group()[:self.cap]
            for t in tickets:
                self._waiting.remove(t)
                t.taken = True
            self.running = len(tickets)
            return tickets

    def run(self, tickets: list[Ticket]) -> None:
        """One step of these tickets' decodings; each ticket gets its own result."""
        t0 = time.perf_counter()
        try:
            results = batch.step_together([t.decoder for t in tickets])
        except Exception as e:                 # step_together catches per row; this is a last guard
            results = [e] * len(tickets)
        seconds = time.perf_counter() - t0
        with self._cond:
            self.steps.append(StepRecord(len(tickets), seconds, time.monotonic()))
            for t in tickets:
                if t.more and batch.can_join(t.decoder):
                    self._live[id(t.decoder)] = t.decoder
                else:
                    self._live.pop(id(t.decoder), None)
            self.running = 0
        for t, r in zip(tickets, results):
            t.result = r
            t.done.set()

    def gather(self, stop: threading.Event, idle_s: float = 0.5) -> bool:
        """Wait for work: something waiting, then up to `window` seconds for the decodings running to their end to
        come back (as many as the cap allows), no longer once the next step is full (cap tickets of one group
        waiting: new arrivals fill it as well as those coming back); those that did not come back are no longer
        waited for. False when stop is set."""
        with self._cond:
            while not self._waiting:
                if stop.is_set():
                    return False
                self._cond.wait(idle_s)
            end = time.monotonic() + self.window
            back = lambda: {id(t.decoder) for t in self._waiting} & self._live.keys()
            while (len(back()) < min(self.cap, len(self._live)) and not self._full()
                   and (left := end - time.monotonic()) > 0):
                self._cond.wait(left)
            self._live = {k: self._live[k] for k in back()}
            return True

    def _full(self) -> bool:
        """The next step is full already: the oldest ticket's group has `cap` tickets waiting (under the lock)."""
        return not self._waiting or len(self._next_group()) >= self.cap     # all withdrawn: nothing to wait for

    def _next_group(self) -> list[Ticket]:
        """The waiting tickets of the oldest one's group (one model, one path), in arrival order (under the lock)."""
        key = batch.group(self._waiting[0].decoder)
        return [t for t in self._waiting if batch.group(t.decoder) == key]

    def loop(self, stop: threading.Event):
        """The thread: gather, run one step, again, until stop is set."""
        while self.gather(stop):
            self.run_once()

    def records(self) -> list[StepRecord]:
        with self._cond:
            return list(self.steps)
