"""int8 weight-only decoding: the kernel, the speed against transformers' float32, and the numerics.

    python bench/int8.py [--quick] [--skip-kernels] [--skip-speed] [--skip-numerics]

1. Kernels, M = 1 (one decoding token), on the model's own shapes (q|k|v, o, gate|up, down, the LM head
   151,936 x 896), weights cycled over enough copies to come from memory, not cache: int8 weight-only candidates (ours, ops/fast/native/int8_linear.c, 16 lanes wide where the CPU has AVX-512F and then also 8 wide
   ("native AVX2"); torch.ops.aten._weight_int8pack_mm; int8 -> bf16 then torch.mv; int8 -> bf16 then F.linear)
   beside the bf16 fast path's kernel (torch.mv on bf16) and float32 F.linear, interleaved round by round.
   The "decode step" row weighs each shape by how often one step runs it (24 layers + 1 LM head).
2. Speed: greedy 64 tokens after a chat prompt (stop_at_eos=False), alternating round by round: transformers'
   Qwen2ForCausalLM.generate in float32 (the reference), ours float32 (the traced path), fast="bf16",
   fast="int8" (int8 GEMVs in C where ops/fast/native builds; bench/mechanisms.py measures it without). The bound of each path = GEMV bandwidth
   measured in this run / bytes one decode step reads (ops.fast.quant.decode_bytes of the weight set the path ran:
   int8 rows + scales + the rest in bf16).
3. Numerics on 5 prompts (English, Chinese, code, digits, chat): first-step logits max|diff| and KL of the
   first next-token distribution against float32, how many of 64 greedy tokens equal float32's (same
   position), and the token where each path first parts from float32's text.
"""
from __future__ import annotations

import time

import _common as C  # noqa: I001
import torch
import torch.nn.functional as F
from generate import NEW, PROMPT, gemv_bandwidth

SHAPES = {  # name -> (out, in, products per decode step of Qwen2.5-0.5B)
    "q|k|v 1152x896": (1152, 896, 24),
    "o_proj 896x896": (896, 896, 24),
    "gate|up 9728x896": (9728, 896, 24),
    "down 896x4864": (896, 4864, 24),
    "lm_head 151936x896": (151936, 896, 1),
}
PROMPTS = {  # name -> (prompt, chat template?)
    "English": ("The history of the printing press began in", False),
    "Chinese": ("上海是中国最大的城市之一，它的历史", False),
    "code": ("def quicksort(xs):\n    ", False),
    "digits": ("1, 1, 2, 3, 5, 8, 13, 21, 34, 55,", False),
    "chat": ("Explain what a KV cache is and why it speeds up decoding.", True),
}


def int8_kernels(q, s, x):
    from ops.fast import quant
    p = quant.pack("native", q)                                 # the native kernel reads rows in blocks of 8
    return {"native": lambda: quant.native_mm(x, p, s), "int8pack_mm": lambda: quant.int8pack_mm(x, q, s),
            "int8->bf16 + mv": lambda: quant.dequant_mv(x, q, s),
            "int8->bf16 + F.linear": lambda: quant.dequant_linear(x, q, s)}


def kernel_table(n: int):
    """Section 1: microseconds per product and GB/s of the bytes each kernel must read."""
    from ops.fast import native, quant
    names = ["native", "int8pack_mm", "int8->bf16 + mv", "int8->bf16 + F.linear", "bf16 mv (fast path)", "fp32 F.linear"]
    picked = "native" if quant.pick_kernel("cpu", torch.bfloat16) == "native" else "int8pack_mm"
    widest = native.isa(512) if picked == "native" else 0       # native's default: AVX-512F where the CPU has it
    width = {"native": widest}
    if widest == 512:                                            # the same kernel 8 lanes wide, beside it
        names.insert(1, "native AVX2")
        width["native AVX2"] = 256
    rows, step = [], {k: 0.0 for k in names}
    for label, (N, K, count) in SHAPES.items():
        copies = max(1, int(2.5e8 // (N * K)) + 1)             # > 200 MB of int8 per kernel: past the L3
        Ws = [torch.randn(N, K) / K ** 0.5 for _ in range(copies)]
        x32 = torch.randn(1, K)
        x16 = x32.bfloat16()
        per = {k: [] for k in names}
        for W in Ws:
            q, s = quant.quantize(W)
            W16 = W.bfloat16()
            ks = int8_kernels(q, s, x16)
            ks["native AVX2"] = ks["native"]                        # the width is set before each timed run
            ks["bf16 mv (fast path)"] = (lambda W16=W16: torch.mv(W16, x16[0]))
            ks["fp32 F.linear"] = (lambda W=W: F.linear(x32, W))
            for k in names:
                per[k].append(ks[k])
        nbytes = {k: N * K * (4 if "fp32" in k else 2 if "bf16 mv" in k else 1) + (2 * N if "int8" in k or "native" in k else 0)
                  for k in names}
        times = {k: [] for k in names}
        for r in range(n + 1):
            for k in (names if r % 2 == 0 else names[::-1]):
                if widest:
                    native.isa(width.get(k, widest))
                t0 = time.perf_counter()
                for f in per[k]:
                    f()
                if r:                                           # round 0 warms up
                    times[k].append((time.perf_counter() - t0) / len(per[k]))
        med = {k: C.median(v) for k, v in times.items()}
        for k in names:
            step[k] += count * med[k]
        rows.append([label, *(f"{1e6 * med[k]:.0f} µs · {nbytes[k] / med[k] / 1e9:.1f} GB/s" for k in names),
                     f"{med['bf16 mv (fast path)'] / med[picked]:.2f}x"])
        del Ws, per
    rows.append(["decode step (all of the above)", *(f"{1e3 * step[k]:.1f} ms" for k in names),
                 f"{step['bf16 mv (fast path)'] / step[picked]:.2f}x"])
    print()
    print(f"Kernels, M = 1, median of {n} interleaved rounds, {torch.get_num_threads()} threads "
          "(GB/s of the bytes each kernel must read: int8 + bf16 scales, bf16, or float32)")
    print(C.table(["shape", *names, f"{picked} vs bf16 mv"], rows))
    if widest:
        native.isa(widest)
    best = min((k for k in names if "bf16 mv" not in k and "fp32" not in k), key=lambda k: step[k])
    print(f"fastest int8 kernel per decode step: {best} (ops/fast/quant.py picks {quant.pick_kernel('cpu', torch.bfloat16)})")


def int8_gemv_bandwidth(n=7, gib=0.5):
    """GB/s of the int8 kernel the model picks on one (N, 16384) int8 matrix of about `gib` GiB (+ bf16 scales)."""
    from ops.fast import quant
    kernel = quant.pick_kernel("cpu", torch.bfloat16)
    mm = quant.KERNELS[kernel]
    K = 16384
    N = int(gib * 2**30 / K)
    q = quant.pack(kernel, torch.randint(-128, 128, (N, K), dtype=torch.int8))
    s = torch.rand(N, dtype=torch.bfloat16)
    x = torch.randn(1, K, dtype=torch.bfloat16)
    mm(x, q, s)
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        mm(x, q, s)
        ts.append(time.perf_counter() - t0)
    return (N * K + 2 * N) / C.median(ts) / 1e9


def first_step(model, ids, weights, attention):
    """Logits (V,) float32 of the prompt's last position on a weight set (one prefill, no cache)."""
    S = ids.shape[1]
    with torch.inference_mode():
        return model.forward(ids, torch.arange(S)[None], torch.ones(1, S, dtype=torch.bool), last_only=True,
                             weights=weights, attention=attention)[0, -1].float()


def numerics(model):
    """Section 3."""
    from ops.engine.decode import PATHS
    paths = {p: PATHS[p] for p in ("bf16", "int8")}          # (weights, attention), as generate runs them
    rows = []
    for name, (prompt, chat) in PROMPTS.items():
        ids = torch.tensor([model.encode_prompts(prompt, chat=chat)[2][0]])
        l32 = first_step(model, ids, "model", "eager")
        p32 = torch.log_softmax(l32, -1)
        g32 = model.generate(prompt, chat=chat, max_new_tokens=NEW, stop_at_eos=False)
        for path in paths:
            lp = first_step(model, ids, *paths[path])
            kl = float((p32.exp() * (p32 - torch.log_softmax(lp, -1))).sum())
            g = model.generate(prompt, chat=chat, max_new_tokens=NEW, stop_at_eos=False, fast=path)
            same = sum(a == b for a, b in zip(g.token_ids, g32.token_ids))
            part = next((i for i, (a, b) in enumerate(zip(g.token_ids, g32.token_ids)) if a != b), None)
            where = "never" if part is None else (
                f"token {part + 1}: {model.tokenizer.decode(g32.token_ids[part:part + 1])!r} -> "
                f"{model.tokenizer.decode(g.token_ids[part:part + 1])!r} after "
                f"{model.tokenizer.decode(g32.token_ids[max(0, part - 4):part])!r}")
            rows.append([name, f"{path} ({g.weight_dtype} weights, {g.compute_dtype} activations)",
                         f"{(lp - l32).abs().max().item():.3f}", f"{kl:.2e}", f"{same}/{NEW}", where])
        print(f"  {name}: float32 says {g32.text[:60]!r}...", flush=True)
    print()
    print(f"Numerics vs our float32 (traced path), {NEW} greedy tokens, stop_at_eos=False")
    print(C.table(["prompt", "path", "first-step logits max|diff|", "KL(p32 ‖ p) first token", "tokens equal to fp32's",
                   "first parts from float32 at"], rows))


def speed(model, ref_from: str, n: int):
    """Section 2."""
    from ops.fast import quant
    ref, secs = C.load_reference(ref_from)
    print(f"reference loaded from {ref_from} in {secs:.1f} s")
    C.plain_greedy(ref)                                # exactly NEW tokens, like stop_at_eos=False
    prompt_ids = model.encode_prompts(PROMPT, chat=True)[2][0]
    ids = torch.tensor([prompt_ids])
    keys = {"ours float32": False, "ours bf16": "bf16", "ours int8": "int8"}
    res = {k: [] for k in ["transformers float32", *keys]}
    dec = {k: [] for k in res}
    tokens = {}

    def ours(key):
        def run():
            t0 = time.perf_counter()
            g = model.generate(PROMPT, chat=True, max_new_tokens=NEW, stop_at_eos=False, fast=keys[key])
            res[key].append(time.perf_counter() - t0)
            steps = [s.seconds for s in g.steps[1:]]
            dec[key].append(len(steps) / sum(steps))
            tokens[key] = g.token_ids
        return run

    def reference():
        key = "transformers float32"
        seconds, tok_s, tokens[key] = C.greedy_reference(ref, ids, NEW)
        res[key].append(seconds)
        dec[key].append(tok_s)

    t0 = time.perf_counter()
    model.weight_set("int8")
    build = time.perf_counter() - t0
    runs = [reference, ours("ours int8"), ours("ours bf16"), ours("ours float32")]
    for f in runs:                                      # warm-up
        f()
    for k in res:
        res[k].clear()
        dec[k].clear()
    bw = {"float32": [], "bfloat16": [], "int8": []}
    for r in range(n):
        for f in (runs if r % 2 == 0 else runs[::-1]):
            C.timed(f)
        bw["float32"].append(gemv_bandwidth(torch.float32)[0])
        bw["bfloat16"].append(gemv_bandwidth(torch.bfloat16)[0])
        bw["int8"].append(int8_gemv_bandwidth())
        print(f"  round {r + 1}/{n}: " + ", ".join(f"{k} {NEW / v[-1]:.2f} tok/s" for k, v in res.items())
              + ", GEMV GB/s " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in bw.items()), flush=True)
    ref_tps = NEW / C.median(res["transformers float32"])
    sets = {"transformers float32": ("model", "float32"), "ours float32": ("model", "float32"),
            "ours bf16": ("bf16", "bfloat16"), "ours int8": ("int8", "int8")}
    best_bw = max(C.median(v) for v in bw.values())
    rows = []
    for k, v in res.items():
        ws, dt = sets[k]
        nbytes = quant.decode_bytes(model.weight_set(ws))
        gbps = C.median(bw[dt])
        tps, dtps = NEW / C.median(v), C.median(dec[k])
        bound, mem_bound = gbps * 1e9 / nbytes, best_bw * 1e9 / nbytes
        rows.append([k, f"{tps:.2f}", f"{tps / ref_tps:.2f}x", f"{dtps:.2f}", f"{nbytes / 1e6:.0f}", f"{gbps:.1f}",
                     f"{bound:.2f}", f"{100 * dtps / bound:.0f}%", f"{100 * dtps / mem_bound:.0f}%",
                     "yes" if tokens[k] == tokens["ours float32"] else
                     f"first {next(i for i, (a, b) in enumerate(zip(tokens[k], tokens['ours float32'])) if a != b)}"])
    print()
    print(f"Speed: {NEW} greedy tokens after a {len(prompt_ids)}-token chat prompt; median of {n} alternating rounds; "
          f"{torch.get_num_threads()} threads; int8 set built in {build:.2f} s (once per model)")
    print(C.table(["run", "tok/s (64, incl. prefill)", "vs transformers fp32", "decode tok/s", "weight MB read/token",
                   "GEMV GB/s (its dtype, this run)", "bound tok/s", "decode % of bound",
                   f"% of best GEMV bound ({best_bw:.1f} GB/s)", "same 64 tokens as ours fp32"], rows))
    print("targets: int8 >= 2.5x transformers float32 tok/s; int8 decode >= 80% of the int8 bandwidth bound")
    ref = None                                          # free its 2.5 GB before the next section


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=3, quick=1)
    p.add_argument("--ref-from", default="cache", choices=["cache", "gguf"])
    p.add_argument("--skip-kernels", action="store_true")
    p.add_argument("--skip-speed", action="store_true")
    p.add_argument("--skip-numerics", action="store_true")
    args = p.parse_args()
    n = C.repeats(args)
    print(C.machine())
    C.build_native()
    if not args.skip_kernels:
        kernel_table(max(5, 3 * n))
    if args.skip_speed and args.skip_numerics:
        return
    import ops
    model = ops.load_model()
    if not args.skip_speed:
        speed(model, args.ref_from, n)
    if not args.skip_numerics:
        numerics(model)


if __name__ == "__main__":
    main()
