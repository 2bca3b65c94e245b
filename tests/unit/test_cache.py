"""The one store of prompt data (ops.engine.store): bounded in bytes, least recently used first, one computation per
key for every thread and session, memoised figures counted, a value over the budget returned but not kept."""
from __future__ import annotations

import sys
import threading

import numpy as np
import plotly.graph_objects as go
import pytest
import torch

from ops.engine.store import STORE, Store, sizeof

KB = 4096                                        # a float32 tensor of 1024 elements: 4096 bytes, counted exactly


def vec(n: int = 1024) -> torch.Tensor:
    return torch.zeros(n)


def test_budget_honoured_and_least_recently_used_goes_first():
    s = Store(budget=5 * KB)
    for k in range(5):
        s.put(("k", k), vec())
    s.get(("k", 0), lambda: pytest.fail("recomputed"))               # used again: now the newest
    for k in range(5, 50):
        s.put(("k", k), vec())
        assert s.nbytes <= s.budget                                   # after every insert
    assert s.nbytes == 5 * KB and s.keys() == [("k", k) for k in range(45, 50)]
    s = Store(budget=3 * KB)
    for k in range(3):
        s.put(("k", k), vec())
    s.peek(("k", 0))                                                  # read: most recently used
    s.put(("k", 3), vec())
    assert s.keys() == [("k", 2), ("k", 0), ("k", 3)]                 # 1, the least recently used, went


def test_a_value_over_the_budget_is_returned_not_kept():
    s = Store(budget=2 * KB)
    s.put(("small",), vec())
    big = s.get(("big",), lambda: vec(10_000))
    assert big.shape == (10_000,) and s.peek(("big",)) is None
    assert s.keys() == [("small",)] and s.nbytes == KB                # and it pushed nothing out


def test_sizes_counted():
    """Tensors and arrays by nbytes; a figure by its data (a 200 x 200 heatmap's z as float64: 320,000 bytes at
    least, and well under what its JSON takes); a container by its items; a shared tensor once."""
    t = vec()
    assert sizeof(t) == KB and sizeof(np.zeros(1000)) == 8000
    assert sizeof([t, t]) == sys.getsizeof([t, t]) + KB               # the same tensor counted once
    z = np.random.default_rng(0).standard_normal((200, 200))
    fig = go.Figure(go.Heatmap(z=z))
    assert 200 * 200 * 8 <= sizeof(fig) < len(fig.to_json()) + 200 * 200 * 8
    lists = go.Figure(go.Heatmap(z=z.tolist()))                       # z as Python lists: estimated from a sample
    assert 200 * 200 * 8 <= sizeof(lists) <= 200 * 200 * 64


def test_memoised_figures_are_counted():
    s = Store(budget=10**9)
    fig = s.get(("memo", 0, "attention", "en"), lambda: go.Figure(go.Heatmap(z=np.ones((100, 100)))))
    assert isinstance(fig, go.Figure) and s.nbytes >= 100 * 100 * 8


def test_one_computation_per_key_across_threads():
    """Eight threads (eight sessions) ask for the same two keys at once: each is computed once, and every thread
    gets the same object; the bytes held stay counted right."""
    s, calls, lock = Store(budget=10**6), [], threading.Lock()
    start = threading.Barrier(8)

    def compute(k):
        with lock:
            calls.append(k)
        return vec()

    got = [[] for _ in range(8)]

    def session(i):
        start.wait()
        for r in range(50):
            k = ("k", r % 2)
            got[i].append(s.get(k, lambda k=k: compute(k)))

    threads = [threading.Thread(target=session, args=(i,)) for i in range(8)]
    [th.start() for th in threads]
    [th.join() for th in threads]
    assert sorted(calls) == [("k", 0), ("k", 1)]
    assert all(g[0] is got[0][0] and g[1] is got[0][1] for g in got)
    assert s.nbytes == 2 * KB


def test_threads_under_a_small_budget_stay_in_it():
    s = Store(budget=8 * KB)

    def work(i):
        for r in range(200):
            s.get(("k", i, r % 13), vec)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    [th.start() for th in threads]
    [th.join() for th in threads]
    assert s.nbytes == sum(v[1] for v in s.values.values()) <= s.budget and len(s) == 8


def test_an_error_is_not_kept():
    s = Store()
    with pytest.raises(ValueError):
        s.get(("bad",), lambda: (_ for _ in ()).throw(ValueError("no")))
    assert s.get(("bad",), lambda: 1) == 1 and not s.busy


def test_two_sessions_on_one_prompt_compute_once(monkeypatch):
    """Two sessions (two callers of ui.state.shared_trace, as get_trace calls it) on one prompt: the tiny model's
    trace is computed once, counted at the one function, and both get the one object from the one store."""
    from tests.parity.test_parity_tiny import tiny_pair
    from ui import state

    model, _ = tiny_pair("qwen2")
    monkeypatch.setattr(STORE, "budget", 10**9)
    STORE.clear()
    runs = []

    def trace():
        runs.append(1)
        return model.trace_ids([[1, 2, 3, 4]])

    key = ("trace", id(model), "tiny", "cpu", "float32", ("one prompt",), False)
    a, b = state.shared_trace(key, trace), state.shared_trace(key, trace)
    assert a is b and len(runs) == 1 and STORE.nbytes >= a.nbytes > 0
    STORE.clear()


def test_a_model_a_result_points_at_is_not_counted():
    """A memo may hold the model it ran (ops.models.tiny.moe_trace): its weights are the model cache's, not the
    store's, and counting them would push the result out of a budget it fits in."""
    from tests.parity.test_parity_tiny import tiny_pair

    model, _ = tiny_pair("qwen2")
    t = vec()
    assert sizeof((t, model, model.tokenizer)) == sizeof((t, None, None))
