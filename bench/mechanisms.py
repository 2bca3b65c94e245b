"""Does each speed mechanism pay its rent? The int8 decoding speed a user sees on the Generate page, with and
without the native int8 product, interleaved round by round in one process.

    python bench/mechanisms.py [--repeats 3] [--new 48]

Variants of generate(fast="int8"), greedy, the same prompt, the same tokens (checked):
  native       the int8 product in C (ops/fast/native/int8_linear.c)
  no C         PyTorch's own int8 product (aten._weight_int8pack_mm): what a machine without a compiler gets
Each prints decode tok/s (median of the repeats) and the ratio of "native" to it. A mechanism stays if it buys at
least 1.15x (the project's rule: bench/RESULTS.md, "What each speed mechanism buys"). Two more were measured this
way and deleted for buying less: the int8 set in 2 MiB pages and the decode step's RMSNorm / RoPE / attention in C.

    python bench/mechanisms.py --first-visits [--repeats 2]

The load-time background work (ui/state.py: the bf16 / int8 weight sets and the pages' shared first-visit results),
judged by what it buys: a page's first visit in the server (Streamlit's test runner, the bundled model, the default
English prompt), with that work done before the visit and without it, alternating page by page.
"""
from __future__ import annotations

import statistics
import time

import _common as C  # noqa: I001
import torch

PROMPT = "Write a Python function that checks whether a number is prime, with a short explanation."


def decode_rate(model, weights, ids: list[int], new: int) -> tuple[float, list[int]]:
    """Decode tokens per second of a greedy run (prefill excluded) through model.forward with this int8 set."""
    from ops.engine.decode import KVCache

    model._copies["int8"] = weights                      # the set forward(weights="int8") reads

    cache = KVCache(model.config, 1, len(ids) + new + 1, model.cache_devices, weights.dtype)
    x, out, t0 = torch.tensor([ids]), [], 0.0
    with torch.inference_mode():
        for step in range(new + 1):
            past, S = cache.length, x.shape[1]
            logits = model.forward(x, torch.arange(past, past + S)[None], torch.ones(1, past + S, dtype=torch.bool),
                                   cache=cache, last_only=True, weights="int8", attention="sdpa")[0, -1]
            tok = int(logits.argmax())
            out.append(tok)
            x = torch.tensor([[tok]])
            if step == 0:
                t0 = time.perf_counter()                # the prefill is done: time the decode steps only
    return new / (time.perf_counter() - t0), out


FIRST_PAGES = ("tokenize", "atlas", "compare", "experiments", "precision", "serving")


def first_visits(repeats: int):
    from streamlit.testing.v1 import AppTest

    from ui import experiments_state as lab, session, state

    state.PREBUILD = False                       # the bench does the background work itself, or not at all
    app = str(C.ROOT / "app.py")

    def visit(page: str) -> float:
        at = AppTest.from_file(app, default_timeout=600)
        at.query_params["lang"] = "en"
        at.query_params["prompt"] = session.DEFAULT_PROMPT
        at.run()
        at.switch_page(f"app_pages/{page}.py")
        t0 = time.perf_counter()
        at.run()
        assert not at.exception, at.exception
        return time.perf_counter() - t0

    visit("overview")                            # the model loaded and the default prompt traced, for both sides
    model = state.load_model("default", "cpu", "float32")
    times = {(p, side): [] for p in FIRST_PAGES for side in ("ahead", "none")}
    for r in range(repeats):
        for page in FIRST_PAGES:
            for side in ("none", "ahead"):
                lab._atlas.clear()
                lab._shared.clear()
                model._copies.clear()
                model.tokenizer.__dict__.pop("merges", None)
                if side == "ahead":
                    for name in state.ahead_sets(model):
                        model.weight_set(name)
                    for job in lab.first_visits(model, "default", "cpu", "float32", sets=True):
                        job()
                times[(page, side)].append(visit(page))
            print(f"round {r + 1} {page}: none {times[(page, 'none')][-1]:.2f} s, "
                  f"ahead {times[(page, 'ahead')][-1]:.2f} s", flush=True)
    print(f"\nfirst visit in the server, median of {repeats} (ratio = none / ahead):")
    for page in FIRST_PAGES:
        a, n = statistics.median(times[(page, "ahead")]), statistics.median(times[(page, "none")])
        print(f"  {page:12s} without {n:6.2f} s   with {a:6.2f} s   {n / a:5.2f}x")


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=3, quick=1)
    p.add_argument("--new", type=int, default=48)
    p.add_argument("--first-visits", action="store_true")
    args = p.parse_args()
    repeats = args.repeats or (args._quick_repeats if args.quick else args._repeats)
    print(C.machine())
    if args.first_visits:
        return first_visits(repeats)
    from ops import load_model
    from ops.fast import native, quant

    model = load_model()
    lib = C.build_native()
    print(f"native library: {'built' if lib else 'not available: ' + native.why_not()}")
    ids = model.tokenizer.encode(model.tokenizer.apply_chat_template(PROMPT))
    variants = {"native": quant.int8_copy(model), "no C": quant.int8_copy(model, kernel="int8pack_mm")}
    rates = {k: [] for k in variants}
    tokens = {}
    decode_rate(model, variants["native"], ids, 4)                    # warm caches and threads
    for r in range(repeats):
        for k, W in variants.items():
            rate, out = decode_rate(model, W, ids, args.new)
            rates[k].append(rate)
            tokens.setdefault(k, out)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in rates.items()), flush=True)
    base = statistics.median(rates["native"])
    print(f"\ndecode tok/s, int8, {args.new} greedy tokens, median of {repeats} (ratio = native / variant):")
    for k, v in rates.items():
        m = statistics.median(v)
        same = "same tokens" if tokens[k] == tokens["native"] else "TOKENS DIFFER"
        print(f"  {k:12s} {m:7.2f} tok/s   native/this = {base / m:5.2f}x   ({same}; runs {', '.join(f'{x:.1f}' for x in v)})")


if __name__ == "__main__":
    main()
