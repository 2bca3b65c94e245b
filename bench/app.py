"""Figure 5: the app's server time for a re-render after a picker change (trace cached), and its memory.

    python bench/app.py [--quick]

Runs app.py in streamlit.testing.v1.AppTest (the server side of a page run, no browser), in this process:
  1. first run of app_pages/attention.py, which computes the trace (the reference the ratio is taken against);
  2. a picker change (the layer slider, then the head slider, alternating) and at.run(), the trace cached;
for the default prompt and for a prompt of about 512 tokens. Memory: this process's resident set
(VmRSS) with the model loaded and the S = 512 trace held, and its peak (VmHWM), from /proc/self/status.
"""
from __future__ import annotations

import os
import time

import _common as C  # noqa: I001

PAGE = "app_pages/attention.py"
PAGES = ["overview", "tokenize", "embedding", "rmsnorm", "residual", "mlp", "lm_head", "sampling", "tour",
         "practice", "scale"]


def long_prompt(tokenizer, n=512):
    text, base = "", ("Shanghai is a large city by the sea; people ride the metro, eat dumplings and walk "
                      "along the river at night. ")
    while len(tokenizer.encode(text + base)) <= n:
        text += base
    ids = tokenizer.encode(text)
    words = text.split(" ")
    while len(ids) < n and words:                       # top up word by word to exactly n where possible
        text += " " + words.pop(0)
        ids = tokenizer.encode(text)
    return text, len(ids)


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=7, quick=3)
    args = p.parse_args()
    n = C.repeats(args)
    os.environ.setdefault("OPERATOR_LAB_SESSION_MB", "4096")    # a 512-token full trace is ~2.1 GB
    print(C.machine())
    print(f"OPERATOR_LAB_SESSION_MB={os.environ['OPERATOR_LAB_SESSION_MB']}; RSS before anything "
          f"{C.rss_gb():.2f} GB")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(C.ROOT / "app.py"), default_timeout=600)
    t0 = time.perf_counter()
    at.run()
    t_first = time.perf_counter() - t0
    assert not at.exception, [e.value for e in at.exception]
    print(f"first app run (overview, loads the model): {t_first:.2f} s, RSS {C.rss_gb():.2f} GB")
    from ui import state

    model = state.load_model("default", "cpu", "float32")
    text, S512 = long_prompt(model.tokenizer)
    rows, mem = [], {}
    for label, prompt in [("default prompt", None), (f"{S512}-token prompt", text)]:
        if prompt is not None:
            at.session_state["prompt_text"] = prompt
        at.switch_page(PAGE)
        t0 = time.perf_counter()
        at.run()
        first = time.perf_counter() - t0
        assert not at.exception, [e.value for e in at.exception]
        times = []
        for r in range(n):
            key = "layer" if r % 2 == 0 else "head"
            sl = at.slider(key=key)
            sl.set_value(sl.max if sl.value != sl.max else sl.min)
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
            assert not at.exception, [e.value for e in at.exception]
        med = C.median(times)
        print(f"  {label}: first run {first:.2f} s; re-renders " + ", ".join(f"{x:.3f}" for x in times))
        rows.append([label, f"{first:.2f}", f"{med:.3f}", f"{min(times):.3f}..{max(times):.3f}", f"{med / first:.3f}x"])
        mem[label] = C.rss_gb()
    from ops.engine.store import STORE  # the session holds keys; the store holds the bytes
    held = STORE.nbytes / 1e9
    steady = C.rss_gb()

    # every other page with the same 512-token trace: a rerun after moving its first slider (or a plain rerun)
    page_rows = []
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py")
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        sliders, times = list(at.slider), []
        for r in range(n):
            if sliders:
                sl = at.slider[r % min(2, len(at.slider))]
                sl.set_value(sl.max if sl.value != sl.max else sl.min)
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
            assert not at.exception, [e.value for e in at.exception]
        page_rows.append([page, ", ".join(str(sl.key) for sl in sliders[:2]) or "(plain rerun)",
                          f"{C.median(times):.3f}", f"{max(times):.3f}"])
    print()
    print(f"server time of {PAGE}; re-render = median of {n} picker changes with the trace cached; "
          "ratio = re-render / first run (which computes the trace)")
    print(C.table(["prompt", "first run, computes trace (s)", "re-render median (s)", "range (s)", "ratio"], rows))
    print()
    print(C.table(["memory", "GB"], [
        ["model weights (float32)", f"{model.num_parameters * 4 / 1e9:.2f}"],
        ["the store of prompt data (traces, memos)", f"{held:.2f}"],
        ["RSS with model + the S=512 trace held (steady)", f"{mem[rows[-1][0]]:.2f}"],
        ["RSS after visiting every page with it", f"{steady:.2f} -> {C.rss_gb():.2f}"],
        ["peak RSS of the process (VmHWM)", f"{C.peak_rss_gb():.2f}"]]))
    print()
    print(f"every page, {S512}-token prompt, trace cached: re-render after a picker change (median and max of {n})")
    print(C.table(["page", "picker moved", "re-render median (s)", "max (s)"], page_rows))
    print("targets: re-render <= 0.3 s; steady memory <= 4 GB")


if __name__ == "__main__":
    main()
