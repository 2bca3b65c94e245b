"""Continuous batching: what one decode step of B sessions costs against a step of one (ops/engine/batch.py).

    python bench/batching.py [--sizes 1,2,4,8,16] [--rounds 5] [--path int8] [--threads 1]
    python bench/batching.py --sessions 8 --tokens 16 [--rounds 3]     # sessions generating at once, batcher off/on

The bundled model, B decodings of different prompts past their prefill, stepped together (batch.step_together),
rounds alternating over the sizes; B = 1 is Decoder.step alone (Model.forward, batch 1). Reported: the step's
CPU seconds on this thread (time.thread_time: with --threads 1 the whole step's work, and far less disturbed by
other processes on a shared machine than wall time) and wall seconds, medians over the rounds, and per token.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import _common as C  # noqa: I001
import torch

PROMPTS = ["The history of the printing press began in", "def quicksort(xs):\n    ", "上海是中国最大的城市之一",
           "1, 1, 2, 3, 5, 8,", "Explain what a KV cache is.", "The capital of France is", "import numpy as np\n",
           "Once upon a time"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--path", default="int8", choices=["int8", "eager"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sessions", type=int, default=0, help="instead: this many sessions generating at once")
    ap.add_argument("--tokens", type=int, default=16, help="tokens per session (--sessions)")
    a = ap.parse_args()
    C.build_native()
    torch.set_num_threads(a.threads)
    from ops import load_model
    from ops.engine import batch

    model = load_model()
    if a.sessions:
        return sessions(model, a)
    sizes = [int(s) for s in a.sizes.split(",")]
    fast = None if a.path == "eager" else a.path

    def fresh(n):
        ds = [model.decoder(PROMPTS[i % len(PROMPTS)], chat=False, max_new_tokens=64, fast=fast, stop_at_eos=False)
              for i in range(n)]
        for d in ds:
            d.step()
        return ds
    cpu, wall = {n: [] for n in sizes}, {n: [] for n in sizes}
    pools = {n: fresh(n) for n in sizes}
    for _ in range(a.rounds):
        for n in sizes:
            ds = pools[n]
            c0, w0 = time.thread_time(), time.perf_counter()
            if n == 1:
                ds[0].step()
            else:
                assert all(not isinstance(r, Exception) for r in batch.step_together(ds))
            cpu[n].append(time.thread_time() - c0)
            wall[n].append(time.perf_counter() - w0)
    one = statistics.median(cpu[sizes[0]])
    print(f"# {C.cpu_model()}, torch threads {a.threads}, path {a.path}, load avg {os.getloadavg()[0]:.1f}")
    print("| B | CPU ms per step | x batch of 1 | CPU ms per token | wall ms per step |")
    print("|---|---|---|---|---|")
    for n in sizes:
        m = statistics.median(cpu[n]) * 1000
        print(f"| {n} | {m:.1f} | {m / one / 1000:.2f} | {m / n:.1f} | {statistics.median(wall[n]) * 1000:.1f} |")


def sessions(model, a):
    """--sessions: S threads (as Streamlit runs sessions), each generating `tokens` tokens of its own prompt after its
    prefill, at once: every step alone in one of 2 decode slots (OPERATOR_LAB_DECODE_BATCH=0, the server before), or
    through the batcher (classroom/batcher.py), alternating round by round. Process CPU seconds (all threads) and wall
    seconds for all the sessions' tokens; the tokens are checked equal both ways."""
    import threading

    from classroom.batcher import Batcher

    fast = None if a.path == "eager" else a.path
    out = {"slots": [], "batcher": []}
    texts = {}
    for _ in range(a.rounds):
        for mode in out:
            ds = [model.decoder(PROMPTS[i % len(PROMPTS)] + " " * (i // len(PROMPTS)), chat=False,
                                max_new_tokens=a.tokens, fast=fast, stop_at_eos=False) for i in range(a.sessions)]
            for d in ds:
                d.step()
            stop, slots = threading.Event(), threading.BoundedSemaphore(2)
            b = Batcher(8, spawn=lambda loop: threading.Thread(target=loop, args=(stop,), daemon=True).start())

            def run(d):
                while not d.done:
                    if mode == "batcher":
                        b.submit(d, more=True).wait(b)
                    else:
                        with slots:
                            d.step()
            threads = [threading.Thread(target=run, args=(d,)) for d in ds]
            c0, w0 = time.process_time(), time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            out[mode].append((time.process_time() - c0, time.perf_counter() - w0))
            stop.set()
            if mode == "batcher":
                rows = [r.rows for r in b.records()]
                print(f"batcher: {len(rows)} steps, rows per step {sum(rows) / len(rows):.2f} (most {max(rows)})")
            texts.setdefault(mode, [d.token_ids for d in ds])
    assert texts["slots"] == texts["batcher"], "the batcher changed a session's tokens"
    n = a.sessions * (a.tokens - 1)
    print(f"# {C.cpu_model()}, torch threads {a.threads}, path {a.path}, {a.sessions} sessions x {a.tokens - 1} decode "
          f"steps, load avg {os.getloadavg()[0]:.1f}; medians of {a.rounds} rounds")
    print("| decode steps | CPU s | CPU ms per token | wall s | tokens/s (wall) |")
    print("|---|---|---|---|---|")
    for mode, runs in out.items():
        cpu, wall = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        print(f"| {mode} | {cpu:.2f} | {1000 * cpu / n:.1f} | {wall:.2f} | {n / wall:.1f} |")


if __name__ == "__main__":
    main()
