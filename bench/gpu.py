"""Figure 6 (GPU machines only): Qwen2.5-32B's shapes with random bfloat16 weights on one CUDA GPU.

    python bench/gpu.py [--quick] [--config Qwen2.5-32B-Instruct]

Real 32B weights cannot be fetched here (no network), so the weights are random (randn * 0.02, built on the
GPU directly, HF names from ops.loading.expected_shapes): speed and memory depend on the shapes only.
Measures: prefill of 512 tokens (Model.forward, nothing recorded), decode ms per token (Model.forward with
weights="bf16", attention="sdpa" and a KV cache, the fast path; the eager configuration too) vs the bound weight bytes / HBM bandwidth (measured in this run
with a large device-to-device copy), and a full trace's memory (GPU peak and the CPU-side trace bytes).
Without CUDA it prints "no GPU: skipped" and exits 0. --cpu-smoke runs the same code on a tiny config on
the CPU, to check the script itself.
"""
from __future__ import annotations

import _common as C  # noqa: I001

import sys
import time

import torch


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def random_weights(config, device, dtype):
    from ops.loading import expected_shapes

    g = torch.Generator(device=device).manual_seed(0)
    w = {}
    for name, shape in expected_shapes(config).items():
        if name.endswith("norm.weight"):
            w[name] = torch.ones(shape, device=device, dtype=dtype)
        else:
            w[name] = torch.randn(shape, device=device, dtype=dtype, generator=g).mul_(0.02)
    return w


def copy_bandwidth(device, gib, n):
    """GB/s of dst.copy_(src) counting bytes read + written, median of n."""
    src = torch.empty(int(gib * 2**30), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    sync(device)
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        dst.copy_(src)
        sync(device)
        ts.append(time.perf_counter() - t0)
    del src, dst
    return 2 * gib * 2**30 / C.median(ts) / 1e9


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=20, quick=5)
    p.add_argument("--config", default="Qwen2.5-32B-Instruct")
    p.add_argument("--cpu-smoke", action="store_true", help="tiny config on the CPU: checks the script only")
    p.add_argument("--prefill", type=int, default=512)
    args = p.parse_args()
    n = C.repeats(args)
    from ops import Model
    from ops.costs import reference_configs
    from ops.model import KVCache

    config = reference_configs()[args.config]
    if args.cpu_smoke:
        device = "cpu"
        config = config.replace(num_hidden_layers=2, hidden_size=256, intermediate_size=512, num_attention_heads=8,
                                num_key_value_heads=2, vocab_size=1024)
        args.prefill = min(args.prefill, 64)
    elif not torch.cuda.is_available():
        print("no GPU: skipped (torch.cuda.is_available() is False)")
        return 0
    else:
        device = "cuda"
    print(C.machine())
    if device == "cuda":
        print(f"GPU: {torch.cuda.get_device_name()}, {torch.cuda.get_device_properties(0).total_memory / 2**30:.0f} GiB")
    print(f"config {config.name}: {config.num_hidden_layers} layers, H={config.hidden_size}, I={config.intermediate_size}, "
          f"heads {config.num_attention_heads}/{config.num_key_value_heads}, V={config.vocab_size}; RANDOM bfloat16 "
          "weights (real ones cannot be fetched here)")
    dtype = torch.bfloat16
    t0 = time.perf_counter()
    weights = random_weights(config, device, dtype)
    sync(device)
    t_build = time.perf_counter() - t0
    model = Model(config, weights, tokenizer=None, device=device, dtype="bfloat16")
    shared = all(model.weights[k].data_ptr() == v.data_ptr() for k, v in weights.items())
    fast_shared = all(model.fast_weights()[k].data_ptr() == v.data_ptr() for k, v in weights.items())
    del weights
    nbytes = sum(t.numel() * t.element_size() for t in model.weights.values()) \
        - (config.vocab_size - 1) * config.hidden_size * 2 * (not config.tie_word_embeddings)
    bw = copy_bandwidth(device, 0.05 if args.cpu_smoke else 4, n)
    bound_ms = nbytes / (bw * 1e9) * 1e3
    print(f"weights built in {t_build:.1f} s; Model kept the caller's tensors (no copy): {shared}; "
          f"fast path shares them too: {fast_shared}; copy bandwidth {bw:.0f} GB/s")

    S = args.prefill
    ids = torch.randint(0, config.vocab_size, (1, S), device=device)
    pos = torch.arange(S, device=device)[None]
    valid = torch.ones(1, S, dtype=torch.bool, device=device)
    new = n

    def prefill():
        cache = KVCache(config, 1, S + new + 2, device, dtype)
        sync(device)
        t0 = time.perf_counter()
        model.forward(ids, pos, valid, cache=cache, last_only=True)
        sync(device)
        return time.perf_counter() - t0, cache

    prefill()
    pre = [prefill()[0] for _ in range(3)]

    def decode(fast):
        how = dict(weights="bf16", attention="sdpa") if fast else {}
        cache = KVCache(config, 1, S + new + 2, device, dtype)
        model.forward(ids, pos, valid, cache=cache, last_only=True, **how)
        tok = torch.zeros(1, 1, dtype=torch.long, device=device)
        ts = []
        for _ in range(new):
            sync(device)
            t0 = time.perf_counter()
            L = cache.length
            model.forward(tok, torch.tensor([[L]], device=device), torch.ones(1, L + 1, dtype=torch.bool, device=device),
                          cache=cache, last_only=True, **how)
            sync(device)
            ts.append(time.perf_counter() - t0)
        return C.median(ts) * 1e3

    d_fast, d_eager = decode(True), decode(False)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    tr = model.trace_ids(ids[0:1].tolist())
    t_trace = time.perf_counter() - t0
    peak = (torch.cuda.max_memory_allocated() - base) / 1e9 if device == "cuda" else float("nan")
    print()
    print(C.table(["figure", "value", "bound / note"], [
        [f"prefill {S} tokens (forward, no record)", f"{C.median(pre) * 1e3:.0f} ms",
         f"{2 * model.num_parameters * S / C.median(pre) / 1e12:.0f} TFLOP/s achieved"],
        ["decode ms/token, fast path (SDPA, no record)", f"{d_fast:.1f} ms", f"bound {bound_ms:.1f} ms "
         f"({nbytes / 1e9:.1f} GB / {bw:.0f} GB/s) -> {100 * bound_ms / d_fast:.0f}% of bound"],
        ["decode ms/token, eager forward", f"{d_eager:.1f} ms", f"{100 * bound_ms / d_eager:.0f}% of bound"],
        [f"full trace of S={S} (every tensor, copied to the CPU)", f"{t_trace:.1f} s",
         f"{tr.nbytes / 1e9:.2f} GB on the CPU; GPU peak above the weights {peak:.2f} GB"],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
