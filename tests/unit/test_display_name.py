"""A model's name as the UI shows it: clean, from the GGUF metadata and file name or the HF config."""
from __future__ import annotations

import pytest

from ops.arith import costs
from ops.engine.config import ModelConfig
from ops.models.gguf import display_name

SMOLLM2 = {"general.name": "Smollm2 135M 8k Lc100K Mix1 Ep2", "general.basename": "smollm2",
           "general.size_label": "135M", "general.finetune": "8k-lc100k-mix1-ep2"}


@pytest.mark.parametrize("metadata, path, want", [
    (SMOLLM2, "/x/SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct"),        # the file's own casing
    (SMOLLM2, "/x/model.gguf", "smollm2-135M"),                                       # basename + size label
    ({"general.name": "Qwen2.5 Coder 0.5B Instruct"}, "/x/anything-q8_0.gguf", "Qwen2.5 Coder 0.5B Instruct"),
    ({}, "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf", "qwen2.5-0.5b-instruct"),         # no metadata: the file
    ({}, "C:/m/Foo-7B.IQ3_XS.gguf", "Foo-7B"),
    ({}, "bar-F16.gguf", "bar"),
])
def test_display_name(metadata, path, want):
    assert display_name(metadata, path) == want


def test_the_smollm2_name_is_not_the_title_cased_folder():
    assert display_name(SMOLLM2, "SmolLM2-135M-Instruct.Q4_1.gguf") != SMOLLM2["general.name"]


@pytest.mark.parametrize("name_or_path, want", [
    ("HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct"), ("/data/models/qwen-tiny/", "qwen-tiny"),
    ("C:\\models\\Qwen2.5-7B", "Qwen2.5-7B"), ("Qwen2.5-0.5B", "Qwen2.5-0.5B"), ("", ""),
])
def test_hf_config_name_is_the_last_part_of_name_or_path(name_or_path, want):
    d = costs.reference_config("Qwen2.5-0.5B-Instruct").to_dict()
    d.pop("name", None)
    d["_name_or_path"] = name_or_path
    assert ModelConfig.from_dict(d).name == want


def test_smollm2_gguf_name(smollm2_gguf_path):
    """The real SmolLM2 GGUF (header only): general.name is the title-cased folder; the UI gets the clean name."""
    from ops.models.gguf import gguf_config, open_gguf

    f = open_gguf(smollm2_gguf_path)
    assert gguf_config(f).name == "SmolLM2-135M-Instruct"
