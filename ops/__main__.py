"""A small terminal front end.

    python -m ops trace "I like shanghai"          # the pipeline as a table of names and shapes
    python -m ops generate "Write a haiku" -n 48   # streams the answer
    python -m ops generate "Write a haiku" --fast int8   # int8 weights (or bf16; default: the model's own)
"""
from __future__ import annotations

import argparse
import sys


def progress(fraction: float, message: str):
    print(f"\r[{fraction:6.1%}] {message[:70]:<70}", end="", file=sys.stderr, flush=True)
    if fraction >= 1.0:
        print(file=sys.stderr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ops",
                                description="Operator Lab: run a Qwen2.5 model operator by operator")
    p.add_argument("--model", default=None, help="a model folder or .gguf file (default: the bundled model)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--dtype", default=None, help="float32 (default), bfloat16, float16")
    p.add_argument("--cache", default=None, help="the folder of prepared models (default: the user cache folder)")
    sub = p.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("trace", help="print every traced tensor's name and shape")
    tr.add_argument("prompts", nargs="+", help="one or more prompts (a batch)")
    tr.add_argument("--chat", action="store_true", help="wrap prompts in the chat template")
    tr.add_argument("--layers", default="0", help="which layers to list: '0', '0,5', or 'all'")
    ge = sub.add_parser("generate", help="stream a completion")
    ge.add_argument("prompt")
    ge.add_argument("-n", "--max-new-tokens", type=int, default=64)
    ge.add_argument("--raw", action="store_true", help="no chat template")
    ge.add_argument("--temperature", type=float, default=0.0)
    ge.add_argument("--top-k", type=int, default=0)
    ge.add_argument("--top-p", type=float, default=1.0)
    ge.add_argument("--repetition-penalty", type=float, default=1.0)
    ge.add_argument("--seed", type=int, default=0)
    ge.add_argument("--fast", default="float32", choices=["float32", "bf16", "int8"],
                    help="weights to decode with: float32 (the model's own, the traced path), "
                         "bf16 or int8 (fast paths)")
    args = p.parse_args(argv)

    from . import ConfigError, InputError, LoadError, SamplingError, configure, load_model
    from .engine import inputs
    from .fast import native
    from .models import bundled
    if args.cache:
        configure(cache=args.cache, limits=inputs.LIMITS)
    if getattr(args, "fast", "") == "int8":      # the int8 product in C where it builds (once per machine)
        native.build(bundled.cache_dir() / "native")
    try:
        model = load_model(args.model, device=args.device, dtype=args.dtype, progress=progress)
        if args.command == "trace":
            return print_trace(model, args)
        out = model.generate(args.prompt, chat=not args.raw, max_new_tokens=args.max_new_tokens,
                             temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                             repetition_penalty=args.repetition_penalty, seed=args.seed,
                             fast=None if args.fast == "float32" else args.fast,
                             on_token=lambda step: print(model.tokenizer.decode([step.token_id],
                                                                                skip_special_tokens=True), end="",
                                                                                flush=True))
        print()
        steps = out.steps
        decode = [s.seconds for s in steps if s.phase == "decode"]
        tps = len(decode) / sum(decode) if decode else float("nan")
        print(f"-- {len(out.token_ids)} tokens, stopped at {out.stopped}; path {out.path} ({out.weight_dtype} weights, "
              f"{out.compute_dtype} activations); prefill {steps[0].seconds * 1000:.0f} ms "
              f"for {len(out.prompt_ids)} tokens, decode {tps:.1f} tokens/s, KV cache {steps[-1].kv_bytes / 2**20:.2f} "
              "MiB",
              file=sys.stderr)
        return 0
    except (LoadError, ConfigError, InputError, SamplingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def print_trace(model, args) -> int:
    trace = model.trace(args.prompts, chat=args.chat, warn=lambda m: print(f"warning: {m}", file=sys.stderr))
    L = model.config.num_hidden_layers
    keep = set(range(L)) if args.layers == "all" else {int(x) for x in args.layers.split(",") if x.strip()}
    c = model.config
    print(f"{c.name or 'model'} ({c.model_type}): B={trace.B} S={trace.S} H={c.hidden_size} L={L} "
          f"nh={c.num_attention_heads} nkv={c.num_key_value_heads} hd={c.head_dim} V={c.vocab_size}")
    for b in range(trace.B):
        ids = trace.token_ids[b, :trace.lengths[b]].tolist()
        print(f"row {b}: {ids}  {model.tokenizer.pieces(ids)}")
    width = max(len(n) for n in trace.names())
    hidden = 0
    for name, shape in trace.shapes().items():
        if name.startswith("layers.") and int(name.split(".")[1]) not in keep:
            hidden += 1
            continue
        print(f"{name:<{width}}  {list(shape)}")
    if hidden:
        print(f"... and {hidden} tensors of the other layers (--layers all lists them)")
    top = trace.logits[0, trace.lengths[0] - 1].topk(5)
    print("next token after row 0:", ", ".join(f"{model.tokenizer.decode([i])!r} ({v:.3f})"
                                                 for v, i in zip(top.values.tolist(), top.indices.tolist())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
