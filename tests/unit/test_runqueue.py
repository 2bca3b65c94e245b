"""The sweep queue: first come first served, a bounded wait list, places reported, leavers removed."""
import threading
import time

import pytest

from classroom.runqueue import QueueFull, RunQueue


def wait_until(cond, timeout=60.0):
    """Poll the queue's state until cond() holds; the timeout only stops a hang (it is not what is tested)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return False


def hold_turns(q: RunQueue, n: int, go: threading.Event) -> list:
    """n threads that each take a turn (running or waiting) and keep it until `go` is set."""
    def hold():
        with q.turn():
            go.wait(60)

    threads = [threading.Thread(target=hold) for _ in range(n)]
    for th in threads:
        th.start()
    return threads


def test_fifo_order_and_places():
    q = RunQueue(running=1, waiting=4)
    order, places = [], {"b": [], "c": []}
    release_a = threading.Event()

    def holder():
        with q.turn():
            order.append("a")
            release_a.wait(60)

    def waiter(name):
        with q.turn(on_wait=lambda place, queued: places[name].append((place, queued)), poll_s=0.02):
            order.append(name)

    ta = threading.Thread(target=holder)
    ta.start()
    assert wait_until(lambda: q.state() == (1, 0))
    tb = threading.Thread(target=waiter, args=("b",))
    tb.start()
    assert wait_until(lambda: q.state() == (1, 1))
    tc = threading.Thread(target=waiter, args=("c",))
    tc.start()
    assert wait_until(lambda: q.state() == (1, 2) and places["c"])
    release_a.set()
    for th in (ta, tb, tc):
        th.join(60)
    assert order == ["a", "b", "c"]
    assert places["b"][0][0] == 1 and (2, 2) in places["c"]       # c saw itself second of two
    assert q.state() == (0, 0)


def test_full_queue_refuses_at_once():
    q = RunQueue(running=1, waiting=1)
    go = threading.Event()
    threads = hold_turns(q, 2, go)
    assert wait_until(lambda: q.state() == (1, 1))
    with pytest.raises(QueueFull, match="1 runs are already waiting"):
        with q.turn():
            pass
    go.set()
    for th in threads:
        th.join(60)
    assert q.state() == (0, 0)


def test_a_waiter_stopped_by_its_page_leaves_the_queue():
    q = RunQueue(running=1, waiting=3)
    go = threading.Event()
    (t,) = hold_turns(q, 1, go)
    assert wait_until(lambda: q.state() == (1, 0))

    class Stopped(Exception):
        pass

    def on_wait(place, queued):
        raise Stopped

    with pytest.raises(Stopped):
        with q.turn(on_wait=on_wait):
            pass
    assert q.state() == (1, 0)        # the stopped waiter is gone; the holder still runs
    go.set()
    t.join(60)
    assert q.state() == (0, 0)


def test_bad_sizes():
    with pytest.raises(ValueError):
        RunQueue(running=0)
