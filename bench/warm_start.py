"""Figure 2: loading the bundled model from Operator Lab's cache to ready-to-trace, vs transformers' GGUF load.

    python bench/warm_start.py [--quick]

Ours: ops.load_model() with the cache already prepared (config + tokenizer + float32 safetensors -> Model).
Reference: AutoModelForCausalLM.from_pretrained(dir, gguf_file=name) + AutoTokenizer.from_pretrained(dir,
gguf_file=name) on the same bundled GGUF (transformers dequantizes it on every load). Also shown, for
context: transformers loading the float32 safetensors folder our cache holds. Alternating, in one process,
imports done before timing.
"""
from __future__ import annotations

import _common as C  # noqa: I001
import torch


def main():
    n = C.setup(__doc__.splitlines()[0])
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import ops
    from ops.models import bundled

    gguf = bundled.bundled_gguf_path()
    folder = bundled.prepare_bundled()
    ready = {}

    def ours():
        m = ops.load_model()
        ready["ours"] = m.tokenizer is not None and m.weights["lm_head.weight"].shape[0] > 0
        del m

    def reference():
        m = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        del m, tok

    def hf_folder():
        m = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(str(folder))
        del m, tok

    ours()                                    # warm-up: page cache, first-import costs
    a, b = C.alternate(ours, reference, n, label="warm start")
    c = [C.timed(hf_folder)[0] for _ in range(n)]
    ta, tb, tc = C.median(a), C.median(b), C.median(c)
    print()
    print(f"median of {n} alternating repeats (the reference dequantizes the GGUF every time, so it is slow "
          "and few repeats are used)")
    print(C.table(["what", "ours: ops.load_model() from cache (s)", "transformers (s)", "ratio"], [
        ["vs transformers GGUF load + tokenizer", f"{ta:.2f}", f"{tb:.2f}", f"{ta / tb:.3f}x"],
        ["(context) vs transformers on our float32 safetensors folder", f"{ta:.2f}", f"{tc:.2f}", f"{ta / tc:.2f}x"],
    ]))
    print("targets: warm <= 3 s and <= 0.1x transformers' GGUF load")


if __name__ == "__main__":
    main()
