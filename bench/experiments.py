"""Figure 5: the experiments engine on the bundled model: a full head sweep (every head, and every layer's
attention and MLP, ablated one at a time) at S = 16 and S = 64 tokens, its cost per variant against one
plain trace measured in the same process, a patching sweep, and the head atlas's label counts.

    python bench/experiments.py [--quick] [--lengths 16,64] [--no-atlas]

A variant of the sweep is one ablated run measured at the last position; the sweep batches the variants
that start at the same layer and starts each from the clean trace's residual stream there (ops/lab/experiments_sweeps.py).
"per variant / trace" = (sweep seconds / variants) / (one plain full-capture trace's seconds). A matmul
probe (256 x 896 @ 896 x 4864, float32) gives the machine's throughput at the time, since the 2 cores may
be shared with other work.
"""
from __future__ import annotations

import time

import _common as C  # noqa: I001  (puts the repo root on sys.path)
import torch


def gflops_probe() -> float:
    a, b = torch.randn(256, 896), torch.randn(4864, 896)
    a @ b.T
    t0 = time.perf_counter()
    for _ in range(5):
        a @ b.T
    return 5 * 2 * 256 * 896 * 4864 / (time.perf_counter() - t0) / 1e9


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=3, quick=1)
    p.add_argument("--lengths", default="16,64")
    p.add_argument("--no-atlas", action="store_true")
    args = p.parse_args()
    n = C.repeats(args)
    print(C.machine())
    import ops
    from ops.lab import atlas, experiments_sweeps

    model = ops.load_model()
    c = model.config
    L, nh = c.num_hidden_layers, c.num_attention_heads
    rows = []
    for S in [int(s) for s in args.lengths.split(",")]:
        g = torch.Generator().manual_seed(S)
        ids = torch.randint(1000, 30000, (S,), generator=g).tolist()
        model.trace_ids([ids])                                          # warm-up
        trace_s = C.median([C.timed(lambda: model.trace_ids([ids]))[0] for _ in range(n)])
        trace = model.trace_ids([ids])
        target = int(trace.logits[0, -1].argmax())
        probe = gflops_probe()
        secs, res = C.timed(lambda: experiments_sweeps.head_sweep(model, trace, 0, -1, target))
        variants = L * (nh + 2)
        print(f"  S={S}: trace {trace_s:.2f} s, head sweep {secs:.1f} s ({variants} variants), "
              f"largest head effect {float(res['heads'].abs().max()):.3f}", flush=True)
        rows.append([S, "head sweep", variants, f"{secs:.1f}", f"{trace_s:.2f}", f"{secs / variants:.3f}",
                     f"{secs / variants / trace_s:.3f}", f"{probe:.0f}"])
        if S == 16:
            corrupted = list(ids)
            corrupted[S // 2] = (corrupted[S // 2] + 1) % 30000
            ct = model.trace_ids([corrupted])
            secs, _ = C.timed(lambda: experiments_sweeps.patch_sweep(model, trace, ct, target))
            rows.append([S, "patch sweep (layer x position)", L * S, f"{secs:.1f}", f"{trace_s:.2f}",
                         f"{secs / (L * S):.3f}", f"{secs / (L * S) / trace_s:.3f}", f"{gflops_probe():.0f}"])
    print()
    print(f"median of {n} plain traces; sweeps run once; target <= 60 s for the head sweep at S = 16")
    print(C.table(["S", "sweep", "variants", "sweep (s)", "one trace (s)", "per variant (s)",
                   "per variant / trace", "matmul GFLOP/s at the time"], rows))
    if not args.no_atlas:
        secs, scores = C.timed(lambda: atlas.head_scores(model))
        labels, _ = atlas.label_heads(scores)
        print(f"\nhead atlas ({L} x {nh} heads, induction test n = 32, seed 0) in {secs:.1f} s: label counts "
              f"{atlas.label_counts(labels)}")
        for k, s in scores.items():
            i = int(s.argmax())
            print(f"  strongest {k}: L{i // nh} H{i % nh} ({float(s.flatten()[i]):.2f})")


if __name__ == "__main__":
    main()
