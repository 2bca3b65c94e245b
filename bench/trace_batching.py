"""New prompts traced together (ops.engine.batch.trace_together, classroom/tracer.py): N prompts traced one by one against
one padded pass of all N, the bundled model in float32, every tensor kept (as a page's trace is).

    python bench/trace_batching.py [--sizes 2,4,8] [--rounds 3] [--threads 1]

Rounds alternate one by one / together over the sizes. Reported: CPU seconds of the process (time.process_time: with
--threads 1 the whole work, and far less disturbed by other processes on a shared machine than wall time), wall
seconds, medians over the rounds; the peak resident memory above the model during the work (sampled every 2 ms from
/proc/self/statm, after handing freed heap back) and the bytes the traces hold; the traces are checked equal both ways (tokens, shapes).
"""
from __future__ import annotations

import argparse
import ctypes
import gc
import os
import statistics
import threading
import time

import _common as C  # noqa: I001
import torch

# 8 to 20 tokens each with the bundled tokenizer (printed), English and Chinese, code and prose
PROMPTS = ["The history of the printing press began in Europe", "def quicksort(xs):\n    return sorted(xs)",
           "上海是中国最大的城市之一，也是重要的港口", "Fibonacci numbers begin with one and one, then",
           "Explain what a KV cache is and why it helps decoding.", "The capital of France is Paris, and the capital of",
           "注意力机制让每个词元看向它前面的词元", "Once upon a time there was a small operator that"]


class PeakRSS:
    """The largest resident set, sampled every 2 ms by a thread, above the level when it starts."""

    def __enter__(self):
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)          # freed heap back to the OS first (glibc keeps it otherwise)
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.base = self.peak = self.rss()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()
        return self

    def rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self.page

    def sample(self):
        while not self.stop.wait(0.002):
            self.peak = max(self.peak, self.rss())

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.rss())

    @property
    def above(self) -> int:
        return self.peak - self.base


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="2,4,8")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    from ops import load_model
    from ops.engine import batch

    model = load_model()
    reqs = [model.prepare_trace([p]) for p in PROMPTS]
    print("tokens per prompt:", [len(r[2][0]) for r in reqs])
    model.trace_ids(reqs[0][2])                                   # warm
    sizes = [int(s) for s in a.sizes.split(",")]
    out = {(n, way): [] for n in sizes for way in ("one by one", "together")}
    for _ in range(a.rounds):
        for n in sizes:
            for way in ("one by one", "together"):
                c0, w0 = time.process_time(), time.perf_counter()
                with PeakRSS() as mem:
                    if way == "together":
                        traces = batch.trace_together(model, reqs[:n])
                    else:
                        traces = [model.trace_ids(r[2], prompts=r[0], texts=r[1]) for r in reqs[:n]]
                cpu, wall = time.process_time() - c0, time.perf_counter() - w0
                assert all(not isinstance(t, Exception) for t in traces)
                out[(n, way)].append((cpu, wall, mem.above, sum(t.nbytes for t in traces),
                                      [t.token_ids.tolist() for t in traces], [t.shapes() for t in traces]))
                del traces
    print(f"# {C.machine()}; medians of {a.rounds} rounds, float32, every tensor kept")
    print("| N | way | CPU s | wall s | peak RSS above the model, MB | traces hold, MB | CPU: together vs one by one |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        one, tog = out[(n, "one by one")], out[(n, "together")]
        assert one[0][4] == tog[0][4] and one[0][5] == tog[0][5], "a trace differs in its tokens or shapes"
        base = statistics.median(r[0] for r in one)
        for way, runs in (("one by one", one), ("together", tog)):
            cpu = statistics.median(r[0] for r in runs)
            print(f"| {n} | {way} | {cpu:.2f} | {statistics.median(r[1] for r in runs):.2f} | "
                  f"{statistics.median(r[2] for r in runs) / 2**20:.0f} | {runs[0][3] / 2**20:.0f} | "
                  f"{100 * (cpu / base - 1):+.0f} % |")


if __name__ == "__main__":
    main()
