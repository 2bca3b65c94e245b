"""Shared helpers for the benchmark scripts: machine description, timing, tables.

Every figure is measured side by side with its reference in the same run, alternating
(ours, reference, ours, reference, ...), and the median of the repeats is quoted.
"""
from __future__ import annotations

import argparse
import datetime
import gc
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def build_native():
    """The native library, built (once per machine) as the app builds it at start: ops.native.load() never builds."""
    from ops.fast import native
    from ops.models.bundled import cache_dir

    return native.build(cache_dir() / "native")


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                return " ".join(f for f in ("avx512f", "avx512_bf16", "amx_bf16", "amx_tile") if f in flags)
    except OSError:
        pass
    return ""


def machine() -> str:
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"machine: nproc {os.cpu_count()}, CPU {cpu_model()} [{cpu_flags()}], torch {torch.__version__}, "
            f"torch threads {torch.get_num_threads()}, python {platform.python_version()}, "
            f"date {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}, load avg at start {load:.2f}")


def parser(description: str, repeats: int, quick: int) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help=f"fewer repeats ({quick} instead of {repeats})")
    p.add_argument("--repeats", type=int, default=None, help="repeats per side (overrides --quick)")
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's own)")
    p.set_defaults(_repeats=repeats, _quick_repeats=quick)
    return p


def setup(description: str, repeats_default: int = 3, quick: int = 1) -> int:
    """Parse the common flags, print the machine, silence transformers; returns the number of repeats."""
    args = parser(description, repeats=repeats_default, quick=quick).parse_args()
    print(machine())
    quiet_transformers()
    return repeats(args)


def repeats(args) -> int:
    """The number of repeats; also applies --threads (every script calls this first)."""
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)
    if args.repeats:
        return args.repeats
    return args._quick_repeats if args.quick else args._repeats


def timed(fn):
    """(seconds, result) of one call, after a garbage collection so one side's garbage is not the other's."""
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def alternate(ours, ref, n: int, label: str = "", verbose: bool = True):
    """Run ours() and ref() alternately n times each; return (our times, reference times)."""
    a, b = [], []
    for r in range(n):
        first, second = (ours, ref) if r % 2 == 0 else (ref, ours)   # swap who goes first each round
        t1, _ = timed(first)
        t2, _ = timed(second)
        ta, tb = (t1, t2) if r % 2 == 0 else (t2, t1)
        a.append(ta)
        b.append(tb)
        if verbose:
            print(f"  {label} repeat {r + 1}/{n}: ours {ta:.3f} s, reference {tb:.3f} s", flush=True)
    return a, b


def median(xs):
    return statistics.median(xs)


def table(header: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"
    out = [line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    return "\n".join(out + [line(r) for r in cells[1:]])


def peak_rss_gb() -> float:
    """Peak resident memory of this process (VmHWM), in GB."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def rss_gb() -> float:
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024 / 1e9
    except OSError:
        pass
    return float("nan")


def quiet_transformers():
    import warnings

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    warnings.filterwarnings("ignore")
    try:
        import transformers

        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
    except Exception:
        pass


def load_reference(source: str = "cache", dtype="float32"):
    """transformers' Qwen2ForCausalLM with the bundled model's weights, eager attention.

    source "gguf": from_pretrained(dir, gguf_file=...) on the bundled GGUF itself (slow: transformers
    dequantizes it every time); "cache": from Operator Lab's cache folder, which holds the same GGUF
    dequantized to float32 (same numbers, loads in seconds). The scripts print the logits' max |diff|
    against ours, which shows the weights are the same."""
    import torch
    from transformers import AutoModelForCausalLM

    quiet_transformers()
    from ops.models import bundled

    t0 = time.perf_counter()
    if source == "gguf":
        path = bundled.bundled_gguf_path()
        ref = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=getattr(torch, dtype),
                                                   attn_implementation="eager")
    else:
        folder = bundled.prepare_bundled()
        ref = AutoModelForCausalLM.from_pretrained(str(folder), dtype=getattr(torch, dtype),
                                                   attn_implementation="eager")
    ref.eval()
    return ref, time.perf_counter() - t0


def load_both(source: str = "cache"):
    """(ours: ops.load_model(), transformers' reference from `source`), printing how long the reference took."""
    import ops

    model = ops.load_model()
    ref, secs = load_reference(source)
    print(f"reference loaded from {source} in {secs:.1f} s")
    return model, ref


def plain_greedy(ref):
    """transformers' generation config set to plain greedy decoding of exactly max_new_tokens (no early stop)."""
    ref.generation_config.eos_token_id = None
    ref.generation_config.pad_token_id = 151643
    ref.generation_config.do_sample = False
    for k in ("temperature", "top_p", "top_k", "repetition_penalty"):
        setattr(ref.generation_config, k, None)
    return ref


def greedy_reference(ref, ids, new: int):
    """transformers' greedy decoding of `new` tokens after ids (1, S): (seconds, decode tokens/s, token ids).
    Decode speed leaves the prefill out: a prefill-only run is timed first and subtracted."""
    import torch
    with torch.inference_mode():
        t0 = time.perf_counter()
        ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=1, min_new_tokens=1)
        t1 = time.perf_counter()
        out = ref.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new)
        t2 = time.perf_counter()
    return t2 - t1, (new - 1) / max(t2 - t1 - (t1 - t0), 1e-9), out[0, ids.shape[1]:].tolist()
