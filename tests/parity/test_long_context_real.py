"""Long context, live (the Serving page): the bundled model with a YaRN rope_scaling (a pretended 64-token window,
factor 4) on a prompt longer than that window gives transformers' logits with the same config.

Bound 1e-3: the real-model parity bound of tests/parity/test_parity_real.py (our float32 pass against transformers'
on the weights transformers dequantizes itself). Measured 2026-12-06 on an x86-64 CPU: 0 (bitwise equal) in both
languages; transformers without the scaling is 6.47 (en) and 5.19 (zh) away, so the test cannot pass with it ignored."""
import copy

import pytest
import torch

from content.words import say
from ops.lab.serving_long_context import PRETEND, long_context_run

pytestmark = pytest.mark.real


def transformers_logits(reference, ids, params):
    """transformers' logits with rope_parameters = params: its own rotary embedding built from that config."""
    cfg = copy.deepcopy(reference.config)
    cfg.rope_parameters = dict(params, rope_theta=reference.config.rope_parameters["rope_theta"])
    rotary = reference.model.rotary_emb
    reference.model.rotary_emb = type(rotary)(cfg)
    try:
        with torch.no_grad():
            return reference(torch.tensor([ids])).logits[0]
    finally:
        reference.model.rotary_emb = rotary


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_yarn_run_equals_transformers(real_model, reference, lang):
    ids = real_model.tokenizer.encode(say("rope.long_prompt", lang))
    assert len(ids) > 2 * PRETEND["original_max_position_embeddings"]
    r = long_context_run(real_model, ids, keep_logits=True)
    want = transformers_logits(reference, ids, PRETEND)
    d = (r["logits"] - want).abs().max().item()
    assert d <= 1e-3, f"{lang}: the yarn run's logits differ from transformers' by {d}"
    assert r["max_logit_change"] > 100 * 1e-3            # the scaling really changes them
    assert r["freq"]["changed"] > 0 and r["layers"][-1]["plain"] != r["layers"][-1]["yarn"]
