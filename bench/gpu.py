"""Figure 6 (GPU machines): the bundled model and Qwen2.5-32B's shapes (random weights) in bfloat16 on one CUDA GPU.

    python bench/gpu.py [--quick] [--models bundled,32b] [--prefill 512] [--results bench/RESULTS.md]

For each model: a prefill of 512 tokens (Model.forward, nothing recorded), decode ms per token on the fast path
(weights="bf16", attention="sdpa", a KV cache) and on the eager one, each against its bound = the weight bytes one
decode step reads (ops.fast.quant.decode_bytes) / HBM bandwidth (a large device-to-device copy, measured in this run),
and a trace of the 512 tokens with a capture filter (the embedding, the first and last layers, the final norm and
the logits; every kept tensor copied to the CPU): its time, the CPU bytes it keeps and the GPU's peak above the weights.
The bundled model is the real one (ops.load_model(device="cuda", dtype="bfloat16")); 32B weights cannot be fetched
here (no network), so its are random (randn * 0.02, made on the GPU, HF names from ops.models.checkpoints.expected_shapes):
speed and memory depend on the shapes only. 32B in bfloat16 is 65.5 GB: it needs a GPU with 80 GB.
A CUDA run writes its table into bench/RESULTS.md (--results; --results "" writes nothing), in the section between
the two "bench/gpu.py" markers, with the GPU and the CPU named. Without CUDA it prints "no GPU: skipped" and exits 0.
--cpu-smoke runs all of it on the CPU (the bundled model, a 2-layer config in 32B's place, a prefill of 32) to check
the script itself; tests/unit/test_gpu_bench.py does, writing to a temporary file.
"""
from __future__ import annotations

import datetime
import gc
import re
import sys
import time
from pathlib import Path

import _common as C  # noqa: I001
import torch

BEGIN, END = "<!-- bench/gpu.py: begin -->", "<!-- bench/gpu.py: end -->"


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def random_weights(config, device, dtype):
    from ops.models.checkpoints import expected_shapes

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


def build(which: str, device: str, smoke: bool):
    """(label, Model) in bfloat16 on `device`."""
    from ops import Model, load_model
    from ops.arith.costs import reference_configs

    if which == "bundled":
        model = load_model(device=device, dtype="bfloat16")
        return f"{model.config.name or 'bundled'} (real weights)", model
    config = reference_configs()["Qwen2.5-32B-Instruct"]
    if smoke:
        config = config.replace(num_hidden_layers=2, hidden_size=256, intermediate_size=512, num_attention_heads=8,
                                num_key_value_heads=2, vocab_size=1024)
    weights = random_weights(config, device, torch.bfloat16)
    model = Model(config, weights, tokenizer=None, device=device, dtype="bfloat16")
    return f"{config.name} shapes{' (smoke: 2 small layers)' if smoke else ''} (random weights)", model


def measure(model, S: int, new: int, bw: float) -> dict:
    """Prefill, decode (fast and eager) against the bound, and a capture-filtered trace of S tokens."""
    from ops.engine.decode import KVCache
    from ops.fast import quant

    config, device, dtype = model.config, model.device, model.dtype
    ids = torch.randint(0, config.vocab_size, (1, S), device=device)
    pos = torch.arange(S, device=device)[None]
    valid = torch.ones(1, S, dtype=torch.bool, device=device)

    def prefill():
        cache = KVCache(config, 1, S + new + 2, device, dtype)
        sync(device)
        t0 = time.perf_counter()
        model.forward(ids, pos, valid, cache=cache, last_only=True)
        sync(device)
        return time.perf_counter() - t0

    prefill()
    pre = C.median([prefill() for _ in range(3)])

    def decode(fast: bool) -> float:
        how = dict(weights="bf16", attention="sdpa") if fast else {}
        cache = KVCache(config, 1, S + new + 2, device, dtype)
        model.forward(ids, pos, valid, cache=cache, last_only=True, **how)
        tok = torch.zeros(1, 1, dtype=torch.long, device=device)
        ts = []
        for _ in range(new):
            sync(device)
            t0 = time.perf_counter()
            L = cache.length
            keys = torch.ones(1, L + 1, dtype=torch.bool, device=device)
            model.forward(tok, torch.tensor([[L]], device=device), keys, cache=cache, last_only=True, **how)
            sync(device)
            ts.append(time.perf_counter() - t0)
        return C.median(ts) * 1e3

    fast, eager = decode(True), decode(False)
    nbytes = quant.decode_bytes(model.weight_set("bf16"))
    L = config.num_hidden_layers
    capture = ["tokens.ids", "embed.out", "layers.0.*", f"layers.{L - 1}.*", "final_norm.out", "logits"]
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    t0 = time.perf_counter()
    tr = model.trace_ids(ids[0:1].tolist(), capture=capture)
    t_trace = time.perf_counter() - t0
    peak = f"{(torch.cuda.max_memory_allocated() - base) / 1e9:.2f} GB" if device.startswith("cuda") else "- (CPU)"
    emb, head = model.weights["model.embed_tokens.weight"], model.weights["lm_head.weight"]
    gathered = 0 if emb.data_ptr() == head.data_ptr() else emb.numel()   # the embedding is a gather, not a product
    return dict(params=model.num_parameters - gathered, prefill_s=pre, fast_ms=fast, eager_ms=eager, bytes=nbytes,
                bound_ms=nbytes / (bw * 1e9) * 1e3, trace_s=t_trace, trace_gb=tr.nbytes / 1e9,
                trace_names=len(tr.names()), peak=peak, capture=", ".join(capture))


def rows_of(label: str, m: dict, S: int, bw: float) -> list[list[str]]:
    return [
        [label, f"prefill {S} tokens (forward, nothing recorded)", f"{m['prefill_s'] * 1e3:.0f} ms",
         f"{2 * m['params'] * S / m['prefill_s'] / 1e12:.1f} TFLOP/s (2 x {m['params'] / 1e9:.2f} B weights x {S} "
         "tokens; attention's own products not counted)"],
        ["", "decode ms/token, fast path (bf16 weights, SDPA, KV cache)", f"{m['fast_ms']:.2f} ms",
         f"bound {m['bound_ms']:.2f} ms ({m['bytes'] / 1e9:.2f} GB / {bw:.0f} GB/s): "
         f"{100 * m['bound_ms'] / m['fast_ms']:.0f}% of bound"],
        ["", "decode ms/token, eager (the traced configuration)", f"{m['eager_ms']:.2f} ms",
         f"{100 * m['bound_ms'] / m['eager_ms']:.0f}% of bound"],
        ["", f"trace of {S} tokens, capture filter ({m['capture']})", f"{m['trace_s']:.2f} s",
         f"{m['trace_names']} tensors, {m['trace_gb']:.2f} GB on the CPU; GPU peak above the weights {m['peak']}"],
    ]


def write_results(path: Path, text: str) -> None:
    """Put `text` between the markers in `path` (replacing what was there), or append it with the markers."""
    old = path.read_text() if path.exists() else ""
    block = f"{BEGIN}\n{text.rstrip()}\n{END}"
    if BEGIN in old and END in old:
        new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, old, count=1, flags=re.S)
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    path.write_text(new)


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=20, quick=5)
    p.add_argument("--models", default="bundled,32b", help="comma-separated: bundled, 32b")
    p.add_argument("--cpu-smoke", action="store_true",
                   help="everything on the CPU, 32B's place taken by 2 small layers")
    p.add_argument("--prefill", type=int, default=512)
    p.add_argument("--results", default=None,
                   help='file to write the table into (default: bench/RESULTS.md on a CUDA run; "" writes nothing)')
    args = p.parse_args()
    n = C.repeats(args)
    if not args.cpu_smoke and not torch.cuda.is_available():
        print("no GPU: skipped (torch.cuda.is_available() is False)")
        return 0
    device = "cpu" if args.cpu_smoke else "cuda"
    S = min(args.prefill, 32) if args.cpu_smoke else args.prefill
    new = min(n, 4) if args.cpu_smoke else n
    machine = C.machine()
    print(machine)
    gpu = "CPU smoke run, no GPU"
    if device == "cuda":
        prop = torch.cuda.get_device_properties(0)
        gpu = f"{torch.cuda.get_device_name()}, {prop.total_memory / 2**30:.0f} GiB, CUDA {torch.version.cuda}"
    print(f"GPU: {gpu}")
    bw = copy_bandwidth(device, 0.05 if args.cpu_smoke else 4, n)
    print(f"device copy bandwidth (read + write): {bw:.0f} GB/s")
    rows = []
    for which in [w.strip() for w in args.models.split(",") if w.strip()]:
        if which not in ("bundled", "32b"):
            print(f"unknown model {which!r}: use bundled and/or 32b")
            return 2
        t0 = time.perf_counter()
        label, model = build(which, device, args.cpu_smoke)
        sync(device)
        print(f"{label}: built / loaded in {time.perf_counter() - t0:.1f} s", flush=True)
        rows += rows_of(label, measure(model, S, new, bw), S, bw)
        del model
        gc.collect()
        if device == "cuda":
            torch.cuda.empty_cache()
    table = C.table(["model", "figure", "value", "bound / note"], rows)
    print()
    print(table)
    default = "" if args.cpu_smoke else str(C.ROOT / "bench" / "RESULTS.md")
    target = args.results if args.results is not None else default
    if target:
        when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        write_results(Path(target), f"### GPU run, {when} (`python bench/gpu.py`, {new} decode steps, median)\n\n"
                                    f"GPU: {gpu}. Host {machine.removeprefix('machine: ')}. bfloat16 everywhere; "
                                    f"device copy bandwidth {bw:.0f} GB/s.\n\n{table}")
        print(f"written into {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
