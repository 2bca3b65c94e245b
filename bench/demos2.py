"""The interview's second round (issue 50) on one real model, each beside its reference, for bench/RESULTS.md; run by
bench/demos.py (python bench/demos.py --round 2), or alone: python bench/demos2.py [--models bundled,smollm2]

tree verification   tokens = plain greedy's; passes: plain / one-branch prompt lookup / the tree; tree sizes
many LoRAs          4 rows, 2 adapters + none, one batch: each row's tokens = its merged model's; logits max |diff|
4-bit weights       RTN / AWQ / GPTQ x g = 32, 64, 128: live-prompt output error, loss, next-token agreement, bytes
FP8                 per tensor / row / 128x128 block on every projection; tensor / token / channel / block on the
                    loudest layer's activations
decode step         profiler operators, inside / outside seconds, FLOPs and bytes, the computed graph saving
preemption          evicted after 8 of 24 tokens, recomputed: the same tokens; recompute FLOPs against swap bytes
"""
from __future__ import annotations

import argparse
import time

import _common as C  # noqa: I001
import torch

from content import interview as words, interview2 as words2
from ops import load_model
from ops.lab import (
    interview as iv,
    interview_fp8,
    interview_lora_batch as lb,
    interview_quant4 as q4,
    interview_step_time as stt,
    interview_tree_verify as tv,
)


def demos2(model, only: str = "tree,lora,quant4,fp8,step,preempt") -> None:
    c = model.config
    only = set(only.split(","))
    print(f"\n## {c.name}: round two")
    t0 = time.perf_counter()
    ids = lambda p: model.encode_prompts(p, False)[2][0]        # noqa: E731
    for prompt, label in ((words.CODE, "code"), (words.QUOTE, "quote")) if "tree" in only else ():
        r = tv.tree_runs(model, prompt, 32)
        acc = sum(t["accepted"] for t in r["trees"])
        print(f"tree [{label}]: same as greedy {r['same']}; passes plain {r['plain_passes']}, one-branch lookup "
              f"{r['line_passes']}, tree {r['tree_passes']}; {len(r['trees'])} trees, "
              f"{sum(t['nodes'] for t in r['trees'])} nodes, widest {max((t['leaves'] for t in r['trees']), default=0)}"
              f" leaves, {acc} accepted  ({time.perf_counter() - t0:.0f} s)")
    if "lora" in only:
        lora(model, t0)
    if "quant4" in only:
        quant(model, t0, ids)
    if "fp8" in only:
        fp8s(model, t0)
    if "step" in only:
        step(model, ids)
    if "preempt" in only:
        preempt(model, t0, ids)


def lora(model, t0):
    r = lb.lora_batch(model, [words.SHORT, words.SHORT, words.CODE, words.QUOTE], [0, 1, -1, 0], new_tokens=16)
    print(f"LoRA rank {r['rank']} on {r['targets']}: {r['adapter_params']:,} params per adapter "
          f"({r['adapter_params'] / r['model_params']:.2%} of the model)  ({time.perf_counter() - t0:.0f} s)")
    for x in r["rows"]:
        print(f"  row {x['row']} adapter {x['adapter']}: same tokens as merged {x['same']}, first logits max |diff| "
              f"{x['logits_max_diff']:.3g} (|logit| <= {x['scale']:.3g}): {x['text'][:50]!r}")


def quant(model, t0, ids):
    r = q4.compare(model, ids(words2.CALIBRATION), ids(words.CODE), ids(words2.EVAL_TEXT))
    print(f"4-bit: float32 loss {r['float_loss']:.4f} on {r['text_tokens']} tokens; layers {r['layers']} of "
          f"{r['n_layers']} quantized, calibration {r['calib_tokens']} tokens  ({time.perf_counter() - t0:.0f} s)")
    for x in r["rows"]:
        print(f"  {x['method']:4} g={x['group']:3}: live output error mean {x['mean_error']:.4f}, worst layer "
              f"{max(x['per_layer']):.4f}; loss {x['loss']:.4f}; next token agrees {x['agree']:.1%}; "
              f"{x['bytes'] / 1e6:.1f} MB vs bf16 {x['bf16_bytes'] / 1e6:.1f} MB"
              + (f"; mean alpha {x['alpha']:.2f}" if x["alpha"] is not None else ""))


def fp8s(model, t0):
    for w in interview_fp8.weight_errors(model):
        print(f"FP8 weights {w['name']:16}: rel error per tensor {w['tensor']:.4f}, per row {w['row']:.4f}, "
              f"128x128 blocks {w['block']:.4f}")
    tr = model.trace(words.QUOTE, chat=False)
    for a in interview_fp8.activation_errors(tr, iv.loudest_layer(tr)):
        print(f"FP8 {a['name']} (max/median {a['ratio']:.0f}x): rel error tensor {a['tensor']['rel']:.4f} "
              f"(zeros {a['tensor']['zeros']:.2%}), token {a['row']['rel']:.4f}, channel {a['column']['rel']:.4f}, "
              f"block {a['block']['rel']:.4f}  ({time.perf_counter() - t0:.0f} s)")


def step(model, ids):
    for path in ("eager", "bf16"):
        s = stt.step_profile(model, ids(words.CODE), path)
        print(f"decode step [{path}] at {s['context']} tokens: {s['operators']} operators, {1000 * s['unprofiled_s']:.1f}"
              f" ms unprofiled, profiled {1000 * s['wall_s']:.1f} ms = {1000 * s['inside_s']:.1f} inside + "
              f"{1000 * s['outside_s']:.1f} outside; {s['flops'] / 1e9:.2f} GFLOP, {s['bytes'] / 1e9:.3f} GB -> "
              f"{s['gb_s']:.1f} GB/s; a CUDA graph would save ~{s['graph_saves_us'] / 1000:.2f} ms of launches "
              f"(computed at {s['launch_us']:.0f} us each) against {s['gpu_bytes_us'] / 1000:.3f} ms of bf16 bytes on "
              f"an H200")


def preempt(model, t0, ids):
    p = stt.preempt(model, ids(words.CODE), 24, 8)
    print(f"preemption: evicted after {p['evict_at']} tokens ({p['cached']} cached), recomputed {p['recomputed']} "
          f"tokens in {p['recompute_here_s']:.2f} s here; same tokens {p['same']}; recompute {p['recompute_flops'] / 1e9:.1f}"
          f" GFLOP ({1e6 * p['recompute_s']:.1f} us at the H200's peak) vs swap {p['swap_bytes'] / 1e6:.2f} MB "
          f"({1e6 * p['swap_s']:.1f} us over PCIe 5.0 x16)  ({time.perf_counter() - t0:.0f} s)")


def main():
    from demos import smollm2_path
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="bundled,smollm2")
    ap.add_argument("--only", default="tree,lora,quant4,fp8,step,preempt")
    args = ap.parse_args()
    print(C.machine())
    torch.manual_seed(0)
    for name in args.models.split(","):
        demos2(load_model(None if name == "bundled" else str(smollm2_path()), dtype="float32"), args.only)


if __name__ == "__main__":
    main()
