"""The Serving page's long-context topic, live, on the tiny app model: the fold runs the loaded model with a YaRN
rope_scaling on the passage (longer than the pretended window), its yarn logits are transformers' with the same
config (bound 1e-4, the tiny-model parity bound; measured 1.8e-7), and the page says so in both languages. The tiny
model's small random weights move its logits only 8.9e-4 (en) and 1.0e-3 (zh) under the scaling: the test asks for
more than 5e-4, so a run that ignored the scaling fails it."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
import transformers
from apptest_utils import open_page, open_tab, texts

from content import serving_page
from content.words import say
from ops import load_model
from ops.lab.serving_long_context import PRETEND, long_context_run


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_yarn_run_equals_transformers_tiny(tiny_app_dense, lang):
    model = load_model(tiny_app_dense)
    ids = model.tokenizer.encode(say("rope.long_prompt", lang))
    r = long_context_run(model, ids, keep_logits=True)
    ref = transformers.AutoModelForCausalLM.from_pretrained(tiny_app_dense, dtype=torch.float32,
                                                            attn_implementation="eager").eval()
    cfg = copy.deepcopy(ref.config)
    cfg.rope_parameters = dict(PRETEND, rope_theta=ref.config.rope_parameters["rope_theta"])
    ref.model.rotary_emb = type(ref.model.rotary_emb)(cfg)          # transformers' own yarn frequencies
    with torch.no_grad():
        want = ref(torch.tensor([ids])).logits[0]
    assert (r["logits"] - want).abs().max() < 1e-4
    assert r["max_logit_change"] > 5e-4, "the yarn run is the plain run: the scaling was ignored"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_long_context_fold_on_the_page(tiny_app_dense, lang):
    at = open_page("serving", source=tiny_app_dense, lang=lang)
    at = open_tab(at, "tabs-serving-topics", serving_page.labels(lang)["tabs"][4])
    body = texts(at)
    assert not at.exception
    window = PRETEND["original_max_position_embeddings"]
    assert f'"original_max_position_embeddings": {window}' in body
    assert say("rope.long_top_yarn", lang) in body
    real = json.loads((Path(tiny_app_dense) / "config.json").read_text())["max_position_embeddings"]
    assert f"{real:,} {'个 token' if lang == 'zh' else 'tokens'}" in body      # the loaded model's window, not Qwen's
    assert "Qwen2.5" not in body.split('"original_max_position_embeddings"')[1][:200]
