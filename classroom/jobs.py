"""Server machinery shared by every session: slots that bound how many runs and decode steps go at once, the decode
batcher that runs the sessions' decode steps of one moment together (classroom/batcher.py), the trace batcher that
traces their new prompts of one moment together (classroom/tracer.py), the record of runs under way
(so background work waits for a quiet moment), background threads joined at exit, and handing freed heap pages
back to the OS.

Importing this module starts, reads and registers nothing: app.py sizes the slots from the settings
(configure), and the exit hook is registered with the first background thread."""
from __future__ import annotations

import atexit
import threading
import time

from ops.engine.batch import can_join
from settings import current as server_settings

from .batcher import Batcher
from .tracer import Tracer


class Slots:
    """A bounded semaphore whose size is a server setting (`setting`, a field of settings.Settings), fixed once:
    by configure() as the app starts, or from the settings at first use (a test, a script)."""

    def __init__(self, setting: str):
        self.setting, self._semaphore, self._lock = setting, None, threading.Lock()

    def size(self, n: int) -> None:
        """Fix the size, unless it is fixed already (a held slot must be released into the semaphore it came from)."""
        with self._lock:
            if self._semaphore is None:
                self._semaphore = threading.BoundedSemaphore(n)

    def __enter__(self):
        if self._semaphore is None:
            self.size(getattr(server_settings(), self.setting))
        self._semaphore.acquire()
        return self

    def __exit__(self, *exc):
        self._semaphore.release()


# model runs at once across all sessions: on a small machine a class's requests queue instead of thrashing
RUN_SLOTS = Slots("concurrent_runs")
# decode steps at once across all sessions (app_pages/generate.py): a step is ~600 short torch calls, each handing the
# GIL back and forth, so thirty generations stepping together in one process all crawl; a few at a time do not
DECODE_SLOTS = Slots("concurrent_decodes")
_MADE = (RUN_SLOTS, DECODE_SLOTS)


def configure(s) -> None:
    """Size the slots this module made from the settings (settings.Settings); app.py calls it at start, before
    any page runs."""
    for slots in _MADE:
        slots.size(getattr(s, slots.setting))


class Runs:
    """The script runs under way in this process (app.py enters this around each), so background work can wait
    for a quiet moment: a job of the load-time thread starts only when no page has run for `quiet` seconds."""

    def __init__(self):
        self.running, self.last, self.lock = 0, 0.0, threading.Lock()

    def __enter__(self):
        with self.lock:
            self.running += 1

    def __exit__(self, *exc):
        with self.lock:
            self.running -= 1
            self.last = time.monotonic()

    def wait_quiet(self, quiet: float = 0.5, give_up: float = 600.0):
        """Return once no run is under way and none ended in the last `quiet` seconds (or after give_up)."""
        end = time.monotonic() + give_up
        while time.monotonic() < end and not STOPPING.is_set():
            with self.lock:
                if self.running == 0 and time.monotonic() - self.last >= quiet:
                    return
            time.sleep(0.1)


RUNS = Runs()


_BATCHER: list = []                     # the process's decode batcher, made at its first use
_BATCHER_LOCK = threading.Lock()


def batcher() -> Batcher | None:
    """This process's decode batcher (classroom/batcher.py), its cap the OPERATOR_LAB_DECODE_BATCH setting fixed at
    first use; None when that setting is 0 (every step alone, in a decode slot)."""
    if not _BATCHER:
        with _BATCHER_LOCK:
            if not _BATCHER:
                cap = server_settings().decode_batch
                spawn = lambda loop: background(loop, (STOPPING,), "decode-batcher")  # noqa: E731
                _BATCHER.append(Batcher(cap, spawn=spawn) if cap else None)
    return _BATCHER[0]


_TRACER: list = []                      # the process's trace batcher, made at its first use


def tracer() -> Tracer | None:
    """This process's trace batcher (classroom/tracer.py): its rows per pass the OPERATOR_LAB_TRACE_BATCH setting, its
    padded batch within one trace's budget (OPERATOR_LAB_SESSION_MB), both fixed at first use; each pass in a
    run slot. None when that setting is 0 (every trace alone, in a run slot)."""
    if not _TRACER:
        with _BATCHER_LOCK:
            if not _TRACER:
                s = server_settings()
                spawn = lambda loop: background(loop, (STOPPING,), "trace-batcher")  # noqa: E731
                budget = int(s.session_mb * 2**20)
                _TRACER.append(Tracer(s.trace_batch, budget, spawn=spawn, slot=RUN_SLOTS) if s.trace_batch else None)
    return _TRACER[0]


def decode_step(decoder, on_wait=None, more: bool = False):
    """One forward pass of decoder (a token, or several verified drafts). A decode step past the prefill on the int8
    or float32 path goes to the process's batcher, which runs it together with the other sessions' steps of that
    moment (the same token as alone; on_wait(place) as it waits, see classroom.batcher.Ticket.wait; more: this session
    asks for its next step as soon as this one is done, so the next step waits for it). Anything else (a
    prefill, a draft's verifying pass, bf16, or the batcher off) runs here in one of the server's decode slots
    (DECODE_SLOTS): thirty steps at once in one process each hand the GIL back and forth many times a step and all
    crawl (bench/RESULTS_load.md)."""
    b = batcher()
    if b is not None and can_join(decoder):
        b.submit(decoder, more).wait(b, on_wait)
        return
    with DECODE_SLOTS:
        decoder.advance()


def decode_to_end(decoder, draw, every: float = 0.2, on_wait=None):
    """decode_step until the decoder is done, calling draw() at most once every `every` seconds on the way. Drawn at
    every token, the browser's work took cores from the decoding itself where both share a small machine
    (bench/RESULTS.md, "Figures once in code comments")."""
    shown = time.perf_counter()
    while not decoder.done:
        decode_step(decoder, on_wait, more=True)
        if time.perf_counter() - shown > every:
            draw()
            shown = time.perf_counter()


STOPPING = threading.Event()            # set at exit: the load-time jobs not yet started are skipped
_THREADS: list[threading.Thread] = []
_EXIT_HOOK: list = []                   # the exit hook, once registered


def background(target, args: tuple, name: str) -> threading.Thread:
    """A daemon thread the process waits for at exit (a thread inside a torch or OpenMP call when the interpreter
    tears down aborts the process: "terminate called without an active exception")."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    if not _EXIT_HOOK:                             # the first thread: from now on the exit waits for them
        atexit.register(_wait_for_background)
        _EXIT_HOOK.append(_wait_for_background)
    _THREADS[:] = [t for t in _THREADS if t.is_alive()] + [thread]     # finished ones need no wait
    thread.start()
    return thread


def _wait_for_background(timeout: float = 60.0):
    STOPPING.set()
    end = time.monotonic() + timeout
    for thread in _THREADS:
        thread.join(max(0.0, end - time.monotonic()))


def trim_heap():
    """Give the heap pages the run's temporaries freed back to the OS (glibc keeps them otherwise).
    A long-lived server holding traces wants its resident set small; elsewhere (not glibc) this does nothing."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
