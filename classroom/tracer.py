"""The server's trace batcher: one thread per process traces the new prompts that sessions ask for at the same moment
as one padded forward pass (ops.engine.batch.trace_together), each session receiving its own trace, equal to its
trace alone (tests/unit/test_trace_batch.py).

A session hands in its prompt's rows (submit: after the input policy and its own memory budget, Model.prepare_trace,
in its own thread) and waits for its trace (TraceTicket.wait). The thread waits `window` seconds from the oldest
request for others to arrive (or until the rows reach the cap), then takes the oldest request's model and, in arrival
order, the requests that fit: at most `cap` rows, and a padded batch whose trace estimate (every row as long as the
longest) stays within `budget` bytes, the memory one session's trace may take; the oldest request always goes,
whatever its size (its own budget was checked). The rest wait for the next pass. The pass runs in a run slot
(classroom.jobs.RUN_SLOTS), as a trace alone does.

A session that leaves (Streamlit stops its script: on_layer raises) while its request waits is taken out of the queue
at once; once its pass runs, the trace it would have had is dropped. A failure in one request reaches only its
session (trace_together runs a failed pass again request by request). One trace per (model, prompts) stays shared by
every session (ui.state.shared_trace): only the session computing a key submits it.
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from ops.engine import batch, inputs

from .batcher import Queue

WINDOW_S = 0.1           # how long the oldest request waits for others (bench/trace_batching.py)
POLL_S = 0.25            # how often a waiting session redraws its progress (and is found gone)
KEEP = 512               # passes remembered (the Serving page and the tests read them)


@dataclass(frozen=True)
class PassRecord:
    """One trace pass as the Serving page shows it: requests (sessions), rows (prompts), seconds (in its run slot),
    when it ended (time.monotonic)."""
    requests: int
    rows: int
    seconds: float
    ended: float


@dataclass
class TraceTicket:
    """One session's trace request: handed in, taken into a pass, done (result: a Trace or an exception)."""
    model: object
    prompts: list
    texts: list
    rows: list
    arrived: float = field(default_factory=time.monotonic)
    done: threading.Event = field(default_factory=threading.Event)
    taken: bool = False
    layer: int = -1                  # the last layer its pass has run (-1: not started)
    result: object = None

    @property
    def width(self) -> int:
        return max(map(len, self.rows))

    def wait(self, tracer: Tracer, on_layer=None, poll_s: float = POLL_S):
        """The trace, once its pass has run; its exception raised here. on_layer(i) is called about every poll_s
        seconds with the last layer its pass has run (-1 while it waits), and once more with the last layer when the
        pass is done (a poll may miss the end); if on_layer raises (the session left), the request leaves the queue (or
        its trace is dropped) and the exception goes on."""
        while not self.done.wait(poll_s):
            if on_layer is None:
                continue
            try:
                on_layer(self.layer)
            except BaseException:
                tracer.withdraw(self)
                raise
        if isinstance(self.result, BaseException):
            raise self.result
        if on_layer is not None:
            on_layer(self.model.config.num_hidden_layers - 1)
        return self.result


class Tracer(Queue):
    def __init__(self, cap: int, budget: int, window: float = WINDOW_S, spawn=None, slot=None):
        """cap: rows per pass; budget: bytes the padded batch's trace may take (inputs.estimate_trace_bytes).
        spawn: see classroom.batcher.Queue. slot: a context manager held around each pass (classroom.jobs.RUN_SLOTS);
        None: none."""
        super().__init__(cap, spawn)
        self.budget, self.window = budget, window
        self._slot = slot or contextlib.nullcontext()
        self.steps: deque[PassRecord] = deque(maxlen=KEEP)     # the passes, oldest first

    @property
    def passes(self) -> list[int]:
        """Requests per pass, oldest first."""
        return [r.requests for r in self.records()]

    def records(self) -> list[PassRecord]:
        with self._cond:
            return list(self.steps)

    # ---- the sessions' side ------------------------------------------------------------------------------
    def submit(self, model, prompts: list, texts: list, rows: list) -> TraceTicket:
        """Queue a trace of these prompts (Model.prepare_trace's three lists); the thread starts with the first."""
        return self._queue(TraceTicket(model, prompts, texts, rows))

    def queued(self) -> int:
        with self._cond:
            return len(self._waiting)

    # ---- the thread's side ---------------------------------------------------------------------------------
    def fits(self, tickets: list[TraceTicket]) -> bool:
        """Whether these requests may share a pass: at most cap rows, and the padded batch's trace within budget."""
        rows = sum(len(t.rows) for t in tickets)
        width = max(t.width for t in tickets)
        return rows <= self.cap and inputs.estimate_trace_bytes(tickets[0].model.config, rows, width) <= self.budget

    def take(self) -> list[TraceTicket]:
        """The next pass's requests: the oldest one, then those of its model that fit, in arrival order."""
        with self._cond:
            if not self._waiting:
                return []
            first = self._waiting[0]
            tickets = [first]
            for t in list(self._waiting)[1:]:
                if t.model is first.model and self.fits(tickets + [t]):
                    tickets.append(t)
            for t in tickets:
                self._waiting.remove(t)
                t.taken = True
            return tickets

    def run(self, tickets: list[TraceTicket]) -> None:
        """One pass of these requests; each gets its own trace or exception."""
        def on_layer(i):
            for t in tickets:
                t.layer = i
        try:
            with self._slot:
                start = time.monotonic()
                results = batch.trace_together(tickets[0].model, [(t.prompts, t.texts, t.rows) for t in tickets],
                                               on_layer)
            seconds = time.monotonic() - start
        except Exception as e:                   # trace_together catches per request; this is a last guard
            results, seconds = [e] * len(tickets), None
        with self._cond:
            if seconds is not None:
                self.steps.append(PassRecord(len(tickets), sum(len(t.rows) for t in tickets), seconds,
                                             time.monotonic()))
        for t, r in zip(tickets, results):
            t.result = r
            t.done.set()

    def gather(self, stop: threading.Event, idle_s: float = 0.5) -> bool:
        """Wait for work: a request, then until `window` seconds after the oldest one arrived, or until the rows
        waiting reach the cap. False when stop is set."""
        with self._cond:
            while not self._waiting:
                if stop.is_set():
                    return False
                self._cond.wait(idle_s)
            while self._waiting and sum(len(t.rows) for t in self._waiting) < self.cap:
                left = self._waiting[0].arrived + self.window - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return True

    def loop(self, stop: threading.Event):
        """The thread: gather, run one pass, again, until stop is set."""
        while self.gather(stop):
            self.run_once()
