"""Continuous batching (ops/engine/batch.py, classroom/batcher.py): decode steps of several decodings run as one forward
pass give each decoding the tokens and logits of its decoding alone, whatever joins and leaves between steps; a
session that leaves frees its place; a failure in one decoding reaches that session only.

The reference is each decoding stepped alone by Decoder.step (Model.forward, batch 1). The int8 path is compared bit
for bit: the native kernel does the same multiply-adds per row whatever the rows beside it
(ops/fast/native/int8_linear.c). float32 goes through F.linear on B rows, which may round differently from one row:
on this tiny model the logits differed by at most 1.4e-5 (max |logit| ~6); the bound is the engine's parity bound for
logits, 1e-4 (tests/parity/test_parity_tiny.py). Steps are driven by Batcher.run_once in the test's own thread, or by
the batcher's thread with the test waiting on events: no sleeps, no clocks.
"""
from __future__ import annotations

import threading

import pytest
from conftest import scaled_tiny_model

from classroom.batcher import Batcher
from ops.engine import batch
from ops.engine.sampling import SamplingParams
from ops.errors import InputError
from ops.fast import native

PATHS = ["int8", "eager"]
# (prompt, settings, tokens): different lengths, greedy and three seeded samplings
ROWS = [("the cat sat", SamplingParams(), 9),
        ("in the hall he sat on the mat and the", SamplingParams(temperature=0.8, top_k=20, seed=3), 6),
        ("x", SamplingParams(temperature=1.2, top_p=0.9, repetition_penalty=1.3, seed=7), 11),
        ("on the mat", SamplingParams(temperature=0.7, min_p=0.1, seed=11), 8)]


@pytest.fixture(scope="module")
def tiny():
    return scaled_tiny_model()


def decoder(model, path, row):
    prompt, params, n = row
    return model.decoder(prompt, chat=False, max_new_tokens=n, params=params, fast=None if path == "eager" else path,
                         stop_at_eos=False)


def alone(model, path, row):
    d = decoder(model, path, row)
    while not d.done:
        d.step()
    return d


def same_logits(path, a, b):
    """Each step's top candidates and their raw logits: bit for bit on int8 (native kernel), else within 1e-4."""
    exact = path == "int8" and native.load() is not None
    for sa, sb in zip(a.steps, b.steps, strict=True):
        assert sa.candidates == sb.candidates
        diff = max(abs(x - y) for x, y in zip(sa.stages["logits"], sb.stages["logits"]))
        assert diff == 0 if exact else diff < 1e-4, f"{path}: logits differ by {diff}"


@pytest.mark.parametrize("path", PATHS)
def test_batched_decode_equals_each_alone_with_joins_and_leaves(tiny, path, monkeypatch):
    refs = [alone(tiny, path, r) for r in ROWS]
    # the batched pass itself, not its row-by-row fallback (which a broken pass fell back to unseen, every step alone)
    monkeypatch.setattr(batch, "alone", lambda d: pytest.fail("the batched pass failed; its rows ran alone"))
    ds = [decoder(tiny, path, r) for r in ROWS]
    b = Batcher(cap=8)
    joins = {0: [0], 2: [1, 2], 5: [3]}                 # step number -> decodings that join then (after a prefill)
    sizes, active = [], []
    for step in range(20):
        for j in joins.get(step, []):
            ds[j].step()                                 # its prefill, alone, as the Generate page does it
            active.append(ds[j])
        active = [d for d in active if not d.done]       # those done leave
        if not active and step > 5:
            break
        tickets = [b.submit(d) for d in active]
        sizes.append(b.run_once())
        for t in tickets:
            assert t.done.is_set() and t.wait(b).phase == "decode"
    assert max(sizes) == 4 and 1 in sizes                # all four stepped together at some point, one alone at others
    for ref, d in zip(refs, ds):
        assert d.token_ids == ref.token_ids and d.forward_passes == ref.forward_passes
        same_logits(path, ref, d)


def test_paths_and_models_step_apart(tiny):
    """A step holds one model's one path: int8 and float32 decodings waiting together run as two steps."""
    b = Batcher(cap=8)
    ds = [decoder(tiny, p, ROWS[0]) for p in ("int8", "eager", "int8")]
    for d in ds:
        d.step()
    tickets = [b.submit(d) for d in ds]
    assert b.run_once() == 2 and tickets[0].done.is_set() and tickets[2].done.is_set()
    assert not tickets[1].done.is_set() and b.run_once() == 1 and tickets[1].done.is_set()


def test_only_plain_decode_steps_join(tiny):
    d = decoder(tiny, "int8", ROWS[0])
    assert not batch.can_join(d)                         # its prefill runs alone
    d.step()
    assert batch.can_join(d)
    assert not batch.can_join(decoder(tiny, "bf16", ROWS[0]))
    drafted = tiny.decoder("the cat sat", chat=False, max_new_tokens=4, fast="int8", draft="prompt-lookup")
    drafted.step()
    assert not batch.can_join(drafted)                   # a verifying pass runs several tokens


class Left(BaseException):
    """What Streamlit raises in a script whose user left (a BaseException, as its StopException is)."""


def leave(place):
    raise Left


def test_a_session_that_leaves_frees_its_place(tiny):
    b = Batcher(cap=2)
    ds = [decoder(tiny, "int8", r) for r in ROWS[:3]]
    for d in ds:
        d.step()
    t0, t1, t2 = (b.submit(d) for d in ds)
    assert [b.place(t) for t in (t0, t1, t2)] == [0, 0, 1]     # the third waits beyond the cap of 2
    with pytest.raises(Left):
        t2.wait(b, on_wait=leave, poll_s=0)              # its user leaves while it waits: out of the queue at once
    assert b.queued() == 2
    assert b.run_once() == 2 and len(ds[2].steps) == 1   # the step ran the two left; the one that left got nothing
    b.submit(ds[0])                                      # the first goes on; the second's user has left
    t3 = b.submit(decoder_after_prefill(tiny, ROWS[3]))  # a newcomer takes the place
    assert b.place(t3) == 0 and b.run_once() == 2 and t3.wait(b).phase == "decode"


def decoder_after_prefill(model, row):
    d = decoder(model, "int8", row)
    d.step()
    return d


def test_a_session_that_leaves_during_its_step_waits_for_it(tiny):
    """Taken into a step, a leaving session's wait ends only once its step has run: no step writes into a decoding
    whose session has moved on."""
    b = Batcher(cap=4)
    d = decoder_after_prefill(tiny, ROWS[0])
    t = b.submit(d)
    taken = b.take()
    runner = threading.Thread(target=b.run, args=(taken,))
    runner.start()
    with pytest.raises(Left):
        t.wait(b, on_wait=leave, poll_s=0)
    assert t.done.is_set() and len(d.steps) == 2
    runner.join()


@pytest.mark.parametrize("where", ["sampling", "pass"])
def test_a_failure_in_one_sequence_reaches_only_its_session(tiny, where):
    refs = [alone(tiny, "int8", r) for r in ROWS[:3]]
    ds = [decoder_after_prefill(tiny, r) for r in ROWS[:3]]
    bad = ds[1]
    if where == "sampling":
        def broken(*a, **k):
            raise InputError("this row's sampling failed")
        bad.pick = broken
    else:                                                # its cache cannot take a key: the shared pass fails
        bad.cache.k[0] = bad.cache.k[0][:, :, :0]
    b = Batcher(cap=4)
    tickets = [b.submit(d) for d in ds]
    assert b.run_once() == 3
    with pytest.raises(Exception):
        tickets[1].wait(b)
    for i in (0, 2):
        assert tickets[i].wait(b).token_id == refs[i].token_ids[1]
    while not (ds[0].done and ds[2].done):               # the others go on to their end, as alone
        for d in (ds[0], ds[2]):
            if not d.done:
                b.submit(d)
        b.run_once()
    assert ds[0].token_ids == refs[0].token_ids and ds[2].token_ids == refs[2].token_ids


def test_the_thread_serves_sessions_generating_at_once(tiny):
    """Three sessions in their own threads, as Streamlit runs them, each stepping to its end through the batcher's
    thread: each gets its tokens alone."""
    refs = [alone(tiny, "int8", r) for r in ROWS[:3]]
    stop, threads = threading.Event(), []

    def spawn(loop):
        th = threading.Thread(target=loop, args=(stop,))
        th.start()
        threads.append(th)
        return th

    b = Batcher(cap=8, spawn=spawn)
    ds = [decoder_after_prefill(tiny, r) for r in ROWS[:3]]
    errors = []

    def session(d):
        try:
            while not d.done:
                b.submit(d).wait(b)
        except Exception as e:
            errors.append(e)
    sessions = [threading.Thread(target=session, args=(d,)) for d in ds]
    for s in sessions:
        s.start()
    for s in sessions:
        s.join()
    stop.set()
    threads[0].join()
    assert not errors and [d.token_ids for d in ds] == [r.token_ids for r in refs]
    assert sum(r.rows for r in b.records()) == sum(len(r.token_ids) - 1 for r in refs)   # every decode step, once


def test_the_serving_view_of_the_batcher_by_hand():
    """ops/lab/serving_batching.batching_view on steps worked by hand: sizes 1 (40, 60 ms), 4 (100 ms), 8 (160, 200 ms)."""
    from classroom.batcher import StepRecord
    from ops.lab.serving_batching import batching_view

    recs = [StepRecord(1, 0.04, 10.0), StepRecord(4, 0.10, 50.0), StepRecord(1, 0.06, 70.0), StepRecord(8, 0.16, 90.0),
            StepRecord(8, 0.20, 95.0)]
    v = batching_view(recs, now=100.0, span=30.0)
    assert v["rows_now"] == 8 and v["last_ms"] == pytest.approx(200) and v["one_ms"] == pytest.approx(50)
    assert v["tokens_per_s"] == pytest.approx((1 + 8 + 8) / 30)              # the steps that ended at t >= 70
    assert [(r["rows"], r["steps"]) for r in v["by_rows"]] == [(1, 2), (4, 1), (8, 2)]
    eight = v["by_rows"][2]
    assert eight["ms"] == pytest.approx(180) and eight["ms_per_token"] == pytest.approx(22.5)
    assert eight["vs_one"] == pytest.approx(3.6)
    assert batching_view(recs[1:2], now=100.0, running=3)["rows_now"] == 3          # a step running now
    assert batching_view(recs[1:2], now=100.0)["by_rows"][0]["vs_one"] is None       # no step of one to compare
    assert batching_view([], now=0.0)["by_rows"] == []


def test_a_step_waits_for_the_sessions_running_to_their_end():
    """After a step of A and B (both running to their end), the next step waits for both: a thread gathering while
    only A is back runs once B is back too, as one step of two. One that does not come back within the window is no
    longer waited for (window 0 here: the gather returns at once)."""
    model = scaled_tiny_model()
    a, b_ = decoder_after_prefill(model, ROWS[0]), decoder_after_prefill(model, ROWS[1])
    b = Batcher(cap=8, window=600.0)
    b.submit(a, more=True), b.submit(b_, more=True)
    assert b.run_once() == 2 and b.waited_for() == 2
    stop = threading.Event()
    b.submit(a, more=True)
    stepper = threading.Thread(target=lambda: b.gather(stop) and b.run_once())
    stepper.start()
    b.submit(b_, more=True)
    stepper.join()
    assert b.records()[-1].rows == 2
    quick = Batcher(cap=8, window=0.0)
    quick.submit(a, more=True), quick.submit(b_, more=True)
    quick.run_once()
    quick.submit(a, more=True)
    assert quick.gather(stop) and quick.waited_for() == 1 and quick.run_once() == 1




def test_a_full_step_does_not_wait_for_the_sessions_still_to_come_back():
    """A and B ran a step and run to their end; before A or B is back, two new decodings fill a step of cap 2: the
    gather returns without waiting out its window (600 s; the join's 60 s only bounds a failing test), and the step
    runs the two that are here."""
    model = scaled_tiny_model()
    a, b_, c, d = (decoder_after_prefill(model, r) for r in ROWS)
    b = Batcher(cap=2, window=600.0)
    b.submit(a, more=True), b.submit(b_, more=True)
    assert b.run_once() == 2 and b.waited_for() == 2
    b.submit(c), b.submit(d)
    gathered = []
    gathering = threading.Thread(target=lambda: gathered.append(b.gather(threading.Event())), daemon=True)
    gathering.start()
    gathering.join(60)
    assert gathered == [True] and b.run_once() == 2
    assert b.records()[-1].rows == 2 and b.waited_for() == 0
