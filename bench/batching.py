"""Continuous batching: what one decode step of B sessions costs against a step of one (ops/engine/batch.py).

    python bench/batching.py [--sizes 1,2,4,8,16] [--rounds 5] [--path int8] [--threads 1]

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
    a = ap.parse_args()
    C.build_native()
    torch.set_num_threads(a.threads)
    from ops import load_model
    from ops.engine import batch

    model = load_model()
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


if __name__ == "__main__":
    main()
