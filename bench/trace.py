"""Figure 3: a full-capture trace of S tokens vs transformers' forward with every hidden state and attention map.

    python bench/trace.py [--quick] [--ref-from gguf|cache]

Ours: Model.trace_ids (float32, eager, every trace-contract tensor kept on the CPU: q/k/v, RoPE, scores,
probs, context, MLP parts, residuals, logits). Reference: Qwen2ForCausalLM(ids, output_hidden_states=True,
output_attentions=True), attn_implementation="eager", float32, same weights. Ours records far more
tensors than the reference returns (scores, q/k/v, MLP parts ...), so this is a conservative comparison.
"""
from __future__ import annotations

import _common as C  # noqa: I001  (puts the repo root on sys.path)
import torch


def main():
    p = C.parser(__doc__.splitlines()[0], repeats=5, quick=2)
    p.add_argument("--ref-from", default="cache", choices=["cache", "gguf"])
    p.add_argument("--lengths", default="16,128,512")
    args = p.parse_args()
    n = C.repeats(args)
    print(C.machine())
    model, ref = C.load_both(args.ref_from)
    rows = []
    for S in [int(s) for s in args.lengths.split(",")]:
        g = torch.Generator().manual_seed(S)
        ids = torch.randint(0, 151_000, (1, S), generator=g)
        holder = {}

        def ours():
            holder["trace"] = None                      # let the previous trace go first
            holder["trace"] = model.trace_ids(ids.tolist())

        def reference():
            holder["out"] = None
            with torch.inference_mode():
                holder["out"] = ref(ids, output_hidden_states=True, output_attentions=True, use_cache=False)

        ours()
        reference()                                     # warm-up both, and check the numbers agree
        diff = (holder["trace"].logits.float() - holder["out"].logits.float()).abs().max().item()
        pd = (holder["trace"]["layers.5.attn.probs"] - holder["out"].attentions[5]).abs().max().item()
        a, b = C.alternate(ours, reference, n, label=f"S={S}")
        nbytes = holder["trace"].nbytes
        holder.clear()
        ta, tb = C.median(a), C.median(b)
        best = f"{min(a):.3f} / {min(b):.3f} = {min(a) / min(b):.2f}x"
        rows.append([S, f"{ta:.3f}", f"{tb:.3f}", f"{ta / tb:.2f}x", best, f"{nbytes / 1e9:.2f}",
                     f"{diff:.1e} / {pd:.1e}"])
    print()
    print(f"median of {n} alternating repeats; ratio = ours / transformers (lower is better, target <= 1.0 at 128, "
          "512); best of each beside it (the repeats least disturbed by a noisy machine)")
    print(C.table(["S", "ours trace (s)", "transformers fwd+hidden+attn (s)", "ratio", "best: ours / theirs",
                   "our trace GB", "max|diff| logits / probs L5"], rows))


if __name__ == "__main__":
    main()
