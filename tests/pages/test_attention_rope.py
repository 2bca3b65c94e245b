"""The attention page's RoPE fold on a model whose config scales RoPE (yarn): the per-pair frequencies before and
after scaling, drawn and named with the live numbers, which are transformers' own, in both languages."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
import transformers
from apptest_utils import page_ok, texts

YARN = dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=8)


@pytest.fixture(scope="module")
def yarn_app(tiny_app_dense, tmp_path_factory):
    folder = tmp_path_factory.mktemp("yarn_app") / "m"
    shutil.copytree(tiny_app_dense, folder)
    cfg = json.loads((folder / "config.json").read_text())
    theta = (cfg.get("rope_parameters") or {}).get("rope_theta") or cfg.get("rope_theta") or 10000.0
    cfg["rope_parameters"] = dict(YARN, rope_theta=theta)
    (folder / "config.json").write_text(json.dumps(cfg))
    return str(folder)


def transformers_frequencies(folder: str):
    ref = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    rot, hd = ref.model.rotary_emb, 2 * len(ref.model.rotary_emb.inv_freq)
    unscaled = 1.0 / ref.config.rope_parameters["rope_theta"] ** (torch.arange(0, hd, 2).float() / hd)   # by hand
    return rot.inv_freq.float(), unscaled, rot.attention_scaling


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_rope_fold_shows_scaled_frequencies(yarn_app, lang):
    used, unscaled, scale = transformers_frequencies(yarn_app)
    pair = len(used) - 1                                   # the slowest pair: yarn divides it by the factor
    at = page_ok("attention", source=yarn_app, lang=lang, query=dict(pair=str(pair)), charts=5)
    body = texts(at)
    assert "yarn" in body
    assert f"{float(used[pair]):.4g}" in body, "the caption's frequency is not transformers' for that pair"
    assert f"{scale:.4f}" in body                          # YaRN's attention factor, named
    assert f"× {float(used[pair] / unscaled[pair]):.4g}" in body   # used / unscaled: 1/4 for the slowest pair
