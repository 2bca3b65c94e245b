"""The first visits a student waits for: Precision, Compare, Experiments and Head atlas, each opened cold (no
background first-visit work, the shared results and the bf16 / int8 weight copies dropped), in Streamlit's test
runner on the bundled model, with a prompt of the bench's own (not a default the background work warms).

    python bench/first_visits.py [--repeats 1] [--lang zh] [--prompt "..."]

For each page: the whole run's seconds, then each step the page's progress bar named (ops.lab.steps, as the
page reported it) with the seconds until the next report, and /proc/loadavg before and after: other processes
on the machine change these figures, so the load is printed beside each.
"""
from __future__ import annotations

import statistics
import time

import _common as C  # noqa: I001

PAGES = ("precision", "compare", "experiments", "atlas")
PROMPT = "周末我想去公园散步，因为天气"


def loadavg() -> str:
    return open("/proc/loadavg").read().split()[0]


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=1, quick=1)
    p.add_argument("--lang", default="zh")
    p.add_argument("--prompt", default=PROMPT)
    p.add_argument("--pages", default=",".join(PAGES))
    args = p.parse_args()
    from streamlit.testing.v1 import AppTest

    from ui import experiments_state as lab, state

    state.PREBUILD = False                       # no background first-visit work: the cold visit a student meets
    real_bar, steps = lab.progress_bar, []

    def timed_bar():                             # the page's own bar, its reports also kept with their time
        box, report = real_bar()

        def both(done, total, step, fields):
            steps.append((time.perf_counter(), step, " ".join(map(str, fields.values()))[:24], done, total))
            report(done, total, step, fields)
        return box, both
    lab.progress_bar = timed_bar
    app = str(C.ROOT / "app.py")

    def visit(page: str) -> float:
        at = AppTest.from_file(app, default_timeout=900)
        at.query_params["lang"] = args.lang
        at.query_params["prompt"] = args.prompt
        at.run()
        at.switch_page(f"app_pages/{page}.py")
        t0 = time.perf_counter()
        at.run()
        assert not at.exception, at.exception
        return time.perf_counter() - t0

    print(C.machine())
    t0 = time.perf_counter()
    visit("overview")                            # the model loaded and the prompt traced (every page needs them)
    print(f"model + prompt's trace (overview): {time.perf_counter() - t0:.1f} s, load {loadavg()}")
    model = state.load_model("default", "cpu", "float32")
    times = {page: [] for page in args.pages.split(",")}
    for r in range(C.repeats(args)):
        for page in times:
            lab._atlas.clear()
            lab._shared.clear()
            model._copies.clear()
            steps.clear()
            before = loadavg()
            times[page].append(visit(page))
            end = time.perf_counter()
            print(f"\nround {r + 1} {page}: {times[page][-1]:.1f} s (load {before} -> {loadavg()})")
            starts = [k for k, s in enumerate(steps) if k == 0 or s[1:3] != steps[k - 1][1:3]]
            for j, k in enumerate(starts):
                t_next = steps[starts[j + 1]][0] if j + 1 < len(starts) else end
                _, step, dtype, done, total = steps[k]             # dtype: the step's fields
                print(f"    {step:12s} {dtype:24s} {t_next - steps[k][0]:6.1f} s   (from step {done} of {total})")
    print(f"\nfirst visit, cold, median of {C.repeats(args)}:")
    for page, xs in times.items():
        print(f"  {page:12s} {statistics.median(xs):6.1f} s")


if __name__ == "__main__":
    main()
