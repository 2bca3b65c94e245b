"""The interview's second round: its texts (calibration and evaluation for the 4-bit demo) and its tables, labelled
in either language from assets/words/interview2.<lang>.json. No streamlit, no model: rows in, rows out."""
from __future__ import annotations

from content.words import say
from ops.arith import costs
from ops.arith.costs import human

# calibration inputs for AWQ's scale search and GPTQ's Hessian: prose (English and Chinese) and code (Python, SQL,
# JavaScript), none of the evaluation text; a few hundred tokens, so GPTQ's Hessian is not fitted to ~70 tokens
CALIBRATION = (costs.ASSETS / "quant4" / "calibration.txt").read_text("utf-8")
# the short text the 4-bit models are scored on (next-token loss and agreement with float32)
EVAL_TEXT = (costs.ASSETS / "quant4" / "eval_text.txt").read_text("utf-8")


def w(name: str, lang: str, **f) -> str:
    return say(f"interview2.{name}", lang, **f)


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def tree_rows(runs: dict, lang: str) -> list[dict]:
    """runs: label -> ops.lab.interview_tree_verify.tree_runs()."""
    return [{w("col_prompt", lang): label, w("col_same", lang): _mark(r["same"]),
             w("col_passes", lang): f"{r['plain_passes']} / {r['line_passes']} / {r['tree_passes']}",
             w("col_trees", lang): len(r["trees"]), w("col_nodes", lang): sum(t["nodes"] for t in r["trees"]),
             w("col_accepted", lang): sum(t["accepted"] for t in r["trees"])} for label, r in runs.items()]


def tree_result(r: dict, lang: str) -> str:
    return w("tree_result", lang, same=_mark(r["same"]), n=len(r["plain"]), plain=r["plain_passes"],
             line=r["line_passes"], tree=r["tree_passes"], saved=r["plain_passes"] - r["tree_passes"])


def lora_rows(r: dict, lang: str, prompts: list[str]) -> list[dict]:
    """One row per batch row: its prompt (prompts[row], the list the batch ran), its adapter, equal to the merged
    model or not, and what it wrote."""
    return [{w("col_row", lang): x["row"], w("col_prompt", lang): _line(prompts[x["row"]], 40),
             w("col_adapter", lang): w("col_none", lang) if x["adapter"] < 0
             else f"#{x['adapter']}", w("col_same", lang): _mark(x["same"]),
             w("col_diff", lang): f"{x['logits_max_diff']:.3g}", w("col_text", lang): _line(x["text"])}
            for x in r["rows"]]


def _line(text: str, cut: int | None = None) -> str:
    """text on one line; cut to `cut` characters with an ellipsis that says so (never silently mid-word)."""
    one = " ".join(text.split())
    return one if cut is None or len(one) <= cut else one[:cut].rstrip() + "…"


def lora_prompts(prompts: list[str], new_tokens: int, lang: str) -> str:
    """The LoRA demo's own prompts, each once with the rows that run it, and how many tokens each row writes."""
    rows: dict[str, list[int]] = {}
    for k, p in enumerate(prompts):
        rows.setdefault(p, []).append(k)
    return say("interview_demos.lora_prompts", lang, n=new_tokens) + "\n" + "\n".join(
        f"- {w('col_row', lang)} {', '.join(map(str, ks))}: `{_line(p, 90)}`" for p, ks in rows.items())


def prompts_shown(prompts: dict, lang: str) -> str:
    """The demo's own prompts, named: {label: text} -> one line each (a demo's table names them by label only)."""
    return w("prompts_shown", lang) + "\n" + "\n".join(f"- {k}: `{v.strip()[:90].replace(chr(10), ' ')}`"
                                                        for k, v in prompts.items())


def lora_result(r: dict, lang: str) -> str:
    return w("lora_result", lang, n=len({x["adapter"] for x in r["rows"] if x["adapter"] >= 0}),
             params=f"{r['adapter_params']:,}", share=f"{r['adapter_params'] / r['model_params']:.2%}",
             total=f"{r['model_params']:,}", same=_mark(all(x["same"] for x in r["rows"])))


def quant4_rows(r: dict, lang: str) -> list[dict]:
    return [{w("col_method", lang): x["method"].upper(), w("col_group", lang): x["group"],
             w("col_err", lang): f"{x['mean_error']:.4f} / {max(x['per_layer']):.4f}",
             w("col_loss", lang): f"{x['loss']:.4f}", w("col_agree", lang): f"{x['agree']:.1%}",
             w("col_bytes", lang): f"{human(x['bytes'], 'B')} ({human(x['bf16_bytes'], 'B')})",
             w("col_alpha", lang): "—" if x["alpha"] is None else f"{x['alpha']:.2f}"} for x in r["rows"]]


def quant4_note(r: dict, lang: str) -> str:
    return w("quant4_note", lang, loss=f"{r['float_loss']:.4f}", tokens=r["text_tokens"], calib=r["calib_tokens"],
             layers=", ".join(map(str, r["layers"])), k=len(r["layers"]), n=r["n_layers"])


def fp8_weight_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{w("col_tensor_name", lang): r["name"], w("col_per_tensor", lang): f"{r['tensor']:.4f}",
             w("col_per_row", lang): f"{r['row']:.4f}", w("col_block", lang): f"{r['block']:.4f}"} for r in rows]


def fp8_act_rows(rows: list[dict], lang: str) -> list[dict]:
    def cell(e):
        return f"{e['rel']:.4f} ({e['zeros']:.1%})"
    return [{w("col_tensor_name", lang): r["name"], w("col_ratio", lang): f"{r['ratio']:.0f}×",
             w("col_per_tensor", lang): cell(r["tensor"]), w("col_per_row", lang): cell(r["row"]),
             w("col_per_channel", lang): cell(r["column"]), w("col_block", lang): cell(r["block"])} for r in rows]


def step_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{w("col_path", lang): s["path"], w("col_ops", lang): s["operators"],
             w("col_ms", lang): f"{1000 * s['inside_s']:.1f} + {1000 * s['outside_s']:.1f}",
             w("col_flops", lang): f"{s['flops']:.3g}", w("col_bytes_step", lang): human(s["bytes"], "B"),
             w("col_rate", lang): f"{s['gb_s']:.1f}", w("col_graph", lang): f"{s['graph_saves_us']:,.0f} µs",
             w("col_top", lang): ", ".join(f"{n.removeprefix('aten::')} {k}" for n, k in s["top"][:4])} for s in rows]


def step_note(s: dict, lang: str) -> str:
    return w("step_note", lang, plain=f"{1000 * s['unprofiled_s']:.1f}", gb=f"{s['gb_s']:.1f}",
             gpu=f"{s['gpu_bytes_us']:.0f}", ops=s["operators"], launch=f"{s['launch_us']:.0f}",
             launches=f"{s['graph_saves_us']:,.0f}")


def preempt_rows(p: dict, ref: dict, lang: str) -> list[dict]:
    def row(name, live, big=""):
        return {w("col_what", lang): w(name, lang), w("col_value", lang): live, w("row_ref", lang): big}
    return [row("row_evicted", p["evict_at"]), row("row_cached", p["cached"], f"{ref['tokens']:,}"),
            row("row_recomputed", p["recomputed"]), row("row_here", f"{p['recompute_here_s']:.2f}"),
            row("row_rflops", f"{p['recompute_flops']:.3g}", f"{ref['recompute_flops']:.3g}"),
            row("row_rtime", f"{1e6 * p['recompute_s']:.1f} µs", f"{1e3 * ref['recompute_s']:.0f} ms"),
            row("row_swap", human(p["swap_bytes"], "B"), human(ref["swap_bytes"], "B")),
            row("row_stime", f"{1e6 * p['swap_s']:.1f} µs", f"{1e3 * ref['swap_s']:.1f} ms")]


# ---- computed from the configs (ops/arith/interview_math.py) -------------------------------------------------------
def capacity_text(r: dict, lang: str) -> str:
    if not r["feasible"]:
        return w("cap_infeasible", lang, pre=f"{r['t_prefill_s']:.3g}", step=f"{1000 * r['step_s']:.3g}")
    return w("cap_result", lang, pre=f"{r['t_prefill_s']:.3g}", batch=r["batch"], fit=r["kv_fit"],
             step=f"{1000 * r['step_s']:.3g}", n=f"{r['in_system']:.1f}", exact=f"{r['gpus_exact']:.2f}",
             gpus=r["gpus"], good=f"{r['goodput_per_gpu']:.2f}")


def tp_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{w("col_tp", lang): r["tp"], w("col_weights_ms", lang): f"{1000 * r['weights_s']:.3f}",
             w("col_comm_ms", lang): f"{1000 * r['comm_s']:.3f}", w("col_step_ms", lang): f"{1000 * r['step_s']:.3f}",
             w("col_gpu_ms", lang): f"{1000 * r['gpu_s']:.3f}"} for r in rows]


def tier_rows(r: dict, lang: str) -> list[dict]:
    return [{w("col_tier", lang): k, w("col_load_ms", lang): f"{1000 * s:.3g}",
             w("col_vs", lang): f"{s / r['recompute_s']:.2g}×"} for k, s in r["tiers"].items()]


def ep_rows(rows: list[dict], lang: str) -> list[dict]:
    return [{w("col_ep", lang): r["ep"], w("col_a2a", lang): human(r["bytes_per_step"], "B"),
             w("col_imb", lang): f"{r['imbalance']:.2f}×"} for r in rows]
