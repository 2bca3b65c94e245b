"""The one cache of everything computed from a prompt: traces, recomputed tensors, memoised views and figures,
experiment runs. One process-wide store, shared by every session, bounded in bytes (it counts what it holds),
least recently used dropped first.

    STORE.get(key, compute)      compute() once per key for every thread; a thread asking while another computes
                                 the same key waits for that run; an error is not kept
    STORE.peek(key)              the value or None, without computing

Model weights are not here: they are not prompt data (ui.state.load_model, Model.weight_set). The budget is handed
in by the app (ops.configure, from settings.py); ops/ never reads the environment.
"""
from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from typing import Callable

import numpy as np
import torch

DEFAULT_BUDGET = 1024 * 2**20      # bytes, until ops.configure hands in the setting (a script, a test)
SAMPLE = 16                        # items of a long list measured; the rest are assumed alike (a rough estimate)


def sizeof(x, _seen: set | None = None) -> int:
    """Bytes x holds, roughly: tensors and arrays exactly (nbytes), a figure by its traces' and layout's data, a
    container by its items (a long list by its first SAMPLE items, scaled), any other object by its attributes or
    sys.getsizeof; a model or tokenizer it points at counts nothing (loaded once, held by the model cache). Objects
    met twice count once."""
    seen = set() if _seen is None else _seen
    if id(x) in seen:
        return 0
    seen.add(id(x))
    if hasattr(x, "weight_set") or hasattr(x, "encode") and hasattr(x, "decode"):
        return 0                                       # a model or a tokenizer a result points at: not prompt data
    if isinstance(x, torch.Tensor):
        return x.numel() * x.element_size()
    if isinstance(x, np.ndarray):
        return x.nbytes
    nbytes = getattr(type(x), "nbytes", None)
    if isinstance(nbytes, property):                   # a Trace (recipes hold no bytes), a Derived recipe
        return x.nbytes
    if isinstance(x, (str, bytes, int, float, bool, complex)) or x is None:
        return sys.getsizeof(x)
    if isinstance(x, dict):
        return sys.getsizeof(x) + sum(sizeof(k, seen) + sizeof(v, seen) for k, v in x.items())
    if isinstance(x, (list, tuple, set, frozenset)):
        items = list(x)
        head = sum(sizeof(v, seen) for v in items[:SAMPLE])
        return sys.getsizeof(x) + (head * len(items) // SAMPLE if len(items) > SAMPLE else head)
    if hasattr(x, "_data") and hasattr(x, "_layout"):  # a Plotly figure: its traces and layout as plain dicts
        return sizeof(x._data, seen) + sizeof(x._layout, seen)
    if hasattr(x, "memory_usage"):                     # a pandas frame
        return int(x.memory_usage(deep=True).sum())
    if hasattr(x, "__dict__"):
        return sys.getsizeof(x) + sizeof(vars(x), seen)
    if hasattr(x, "__slots__"):
        return sys.getsizeof(x) + sum(sizeof(getattr(x, s, None), seen) for s in x.__slots__)
    return sys.getsizeof(x)


class Store:
    """A byte-bounded LRU map, thread-safe, with one computation per key at a time (a lock per key being computed).
    The newest value always stays unless it alone is over the budget: then it is returned but not kept."""

    def __init__(self, budget: int = DEFAULT_BUDGET):
        self.budget, self.nbytes = int(budget), 0
        self.values: OrderedDict = OrderedDict()      # key -> (value, bytes), least recently used first
        self.busy: dict = {}                          # key -> the lock held while that key is computed
        self.lock = threading.Lock()

    def _hit(self, key):
        """(value, bytes) as most recently used, or None."""
        with self.lock:
            hit = self.values.get(key)
            if hit is not None:
                self.values.move_to_end(key)
            return hit

    def peek(self, key):
        hit = self._hit(key)
        return None if hit is None else hit[0]

    def get(self, key, compute: Callable):
        hit = self._hit(key)
        if hit is not None:
            return hit[0]
        with self.lock:
            busy = self.busy.setdefault(key, threading.Lock())
        try:
            with busy:
                hit = self._hit(key)                  # computed by the thread this one waited for
                if hit is not None:
                    return hit[0]
                return self.put(key, compute())
        finally:
            with self.lock:
                self.busy.pop(key, None)

    def put(self, key, value):
        """Keep value under key (the least recently used go until it fits); returns value either way."""
        size = sizeof(value)
        with self.lock:
            if key in self.values:
                self.nbytes -= self.values.pop(key)[1]
            if size > self.budget:
                return value
            self.values[key] = (value, size)
            self.nbytes += size
            self._evict()
        return value

    def _evict(self):
        """Drop the least recently used until the bytes held fit the budget (under the lock)."""
        while self.values and self.nbytes > self.budget:
            self.nbytes -= self.values.popitem(last=False)[1][1]

    def set_budget(self, budget: int):
        with self.lock:
            self.budget = int(budget)
            self._evict()

    def keys(self, prefix: tuple = ()) -> list:
        with self.lock:
            return [k for k in self.values if k[:len(prefix)] == prefix]

    def clear(self):
        with self.lock:
            self.values.clear()
            self.nbytes = 0

    def __len__(self) -> int:
        return len(self.values)


STORE = Store()
