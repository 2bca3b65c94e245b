"""Supporting figure for 4: how close matrix-vector products (M = 1, decoding) get to memory bandwidth,
per dtype and kernel, on the model's own shapes and on a large matrix.

    python bench/gemv.py [--quick]

Kernels: F.linear, torch.mm(x, W.t()), torch.mv(W, x), and oneDNN with the weight pre-packed
(torch.ops.mkldnn._reorder_linear_weight + torch.ops.mkldnn._linear_pointwise, what inductor uses).
Each cell is GB/s = weight bytes / median time; kernels are interleaved round by round.
"""
from __future__ import annotations

import time

import _common as C  # noqa: I001
import torch
import torch.nn.functional as F

SHAPES = {  # name -> (out, in, how many per decode step of the 0.5B model)
    "q/o_proj 896x896": (896, 896, 48),
    "gate/up 4864x896": (4864, 896, 48),
    "down 896x4864": (896, 4864, 24),
    "lm_head 151936x896": (151936, 896, 1),
    "large 16384x16384": (16384, 16384, 1),
}


def kernels(W, x):
    ks = {"F.linear": lambda: F.linear(x, W), "mm(x,W.t())": lambda: torch.mm(x, W.t()),
          "mv(W,x)": lambda: torch.mv(W, x[0])}
    if W.dtype == torch.bfloat16:
        try:
            Wp = torch.ops.mkldnn._reorder_linear_weight(W, 1)
            ks["onednn packed"] = lambda: torch.ops.mkldnn._linear_pointwise(x, Wp, None, "none", [], "")
        except Exception as e:  # noqa: BLE001
            print(f"  (oneDNN packed linear unavailable: {e})")
    return ks


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=15, quick=5)
    args = p.parse_args()
    n = C.repeats(args)
    print(C.machine())
    rows = []
    for name, (N, K, count) in SHAPES.items():
        for dtype in (torch.float32, torch.bfloat16):
            # enough copies that the set of weights exceeds the 300 MiB L3 this class of machine reports
            copies = max(1, int(4e8 // (N * K * dtype.itemsize)) + 1) if N * K < 1e8 else 1
            Ws = [torch.randn(N, K).to(dtype) for _ in range(copies)]
            x = torch.randn(1, K).to(dtype)
            ks = {k: [kernels(W, x)[k] for W in Ws] for k in kernels(Ws[0], x)}
            times = {k: [] for k in ks}
            for _ in range(2):
                for fs in ks.values():
                    for f in fs:
                        f()
            for _ in range(n):
                for k, fs in ks.items():
                    t0 = time.perf_counter()
                    for f in fs:
                        f()
                    times[k].append((time.perf_counter() - t0) / len(fs))
            nbytes = N * K * dtype.itemsize
            rows.append([name, str(dtype).replace("torch.", ""),
                         " ".join(f"{k} {nbytes / C.median(v) / 1e9:.1f}" for k, v in times.items())])
            del Ws, ks
    print()
    print(f"GB/s (weight bytes / median time of {n}), M = 1, {torch.get_num_threads()} threads; "
          "small matrices cycled over several copies so they come from memory, not cache")
    print(C.table(["shape", "dtype", "GB/s by kernel"], rows))


if __name__ == "__main__":
    main()
