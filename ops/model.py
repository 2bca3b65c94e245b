"""The runner: a Qwen2-family decoder run operator by operator, recording every step by name.

Reads top to bottom like the pipeline: embedding -> L x (norm, attention, residual, norm, MLP/MoE,
residual) -> final norm -> LM head. Each step calls record(name, tensor) with a trace-contract name.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial

import torch
import torch.nn.functional as F

from . import functional as fn
from .config import ModelConfig
from .sampling import SamplingParams, make_generator, sample_stages
from .tokenizer import MODEL_DEFAULT
from .trace import Derived, Trace, capture_filter, recipe_inputs

from . import inputs
# input policy and limits live in ops/inputs.py (OPERATOR_LAB_MAX_TOKENS, classroom limits, sanitising)
from .inputs import MAX_BATCH, InputError, PromptTooLong, TraceTooBig, token_limit  # noqa: F401


def pick_device(device: str | None = None) -> str:
    """Chosen once: CUDA when asked for or available, else CPU."""
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError("device 'cuda' was asked for, but PyTorch sees no CUDA GPU on this machine")
    if device != "cpu" and not device.startswith("cuda"):
        raise InputError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return device


def _gemv_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """F.linear, but one row (decoding a single token) goes through torch.mv: for bfloat16 on the CPU
    torch's matrix-vector kernel streams the weights 1.4-1.6x faster than the matrix-matrix one that
    F.linear picks, with the same result (bench/RESULTS.md, figure 4)."""
    if x.numel() != x.shape[-1] or x.device.type != "cpu":
        return F.linear(x, weight, bias)
    y = torch.mv(weight, x.reshape(-1))
    if bias is not None:
        y = y + bias
    return y.reshape(*x.shape[:-1], weight.shape[0])


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def pick_dtype(dtype, device: str) -> torch.dtype:
    if dtype is None:
        return torch.float32
    if isinstance(dtype, str):
        if dtype not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        dtype = DTYPES[dtype]
    if dtype == torch.float16 and device == "cpu":
        raise InputError("float16 is for CUDA; on the CPU use float32 or bfloat16")
    return dtype


class KVCache:
    """Keys and values of every layer, preallocated for `capacity` positions.  k[i]: (B, nkv, capacity, hd)"""

    def __init__(self, config: ModelConfig, B: int, capacity: int, device, dtype):
        shape = (B, config.num_key_value_heads, capacity, config.head_dim)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(config.num_hidden_layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(config.num_hidden_layers)]
        self.length = 0        # positions filled so far
        self.positions = None  # (B, length) position id of every cached key

    def update(self, i: int, k: torch.Tensor, v: torch.Tensor):
        """Write this call's (B, nkv, S, hd) keys/values after the cached ones; return all (B, nkv, T, hd)."""
        end = self.length + k.shape[2]
        self.k[i][:, :, self.length:end] = k
        self.v[i][:, :, self.length:end] = v
        return self.k[i][:, :, :end], self.v[i][:, :, :end]

    def advance(self, n: int):
        self.length += n

    @property
    def nbytes(self) -> int:
        """Bytes actually holding keys and values (filled positions only)."""
        k = self.k[0]
        return 2 * len(self.k) * k.shape[0] * k.shape[1] * self.length * k.shape[3] * k.element_size()


@dataclass
class GenerationStep:
    token_id: int
    piece: str
    phase: str                      # "prefill" (the first token, whole prompt) or "decode"
    seconds: float
    kv_tokens: int                  # positions in the KV cache after this step
    kv_bytes: int
    candidates: list[int]           # top token ids by raw logit, for showing the stages
    stages: dict                    # stage name -> values at `candidates` (logits ... probs)
    chosen_prob: float


@dataclass
class Generation:
    prompt: str
    text: str                       # the generated text only
    token_ids: list[int]            # generated ids (the stop token included when reached)
    prompt_ids: list[int]
    steps: list[GenerationStep] = field(default_factory=list)
    stopped: str = "max_new_tokens"  # or "eos"
    fast: bool = False              # True: the bfloat16 fast path (Model.fast_forward), not the traced float32 one
    compute_dtype: str = "float32"  # dtype the weights were read in while generating


class Model:
    def __init__(self, config: ModelConfig, weights: dict, tokenizer=None, device=None, dtype=None):
        self.config = config
        self.tokenizer = tokenizer
        self.device = pick_device(device)
        self.dtype = pick_dtype(dtype, self.device)
        self.weights = {n: t.to(self.device, self.dtype) for n, t in weights.items()}
        if "lm_head.weight" not in self.weights:            # tied: the LM head is the embedding table
            self.weights["lm_head.weight"] = self.weights["model.embed_tokens.weight"]

    def w(self, name: str) -> torch.Tensor | None:
        return self.weights.get(name)

    @property
    def num_parameters(self) -> int:
        """Every distinct weight tensor counted once (a tied LM head is not counted twice)."""
        seen = {}
        for t in self.weights.values():
            seen[t.data_ptr()] = t.numel()
        return sum(seen.values())

    # ---- one forward pass -------------------------------------------------
    @torch.inference_mode()
    def forward(self, ids: torch.Tensor, positions: torch.Tensor, key_valid: torch.Tensor,
                cache: KVCache | None = None, record=None, last_only: bool = False) -> torch.Tensor:
        """ids, positions (B, S); key_valid (B, T) covers cached + new keys. Returns logits (B, S|1, V)."""
        c = self.config
        rec = record or (lambda name, t: None)
        ids, positions, key_valid = ids.to(self.device), positions.to(self.device), key_valid.to(self.device)
        past = cache.length if cache else 0
        k_positions = torch.arange(past + ids.shape[1], device=self.device)[None].expand(ids.shape[0], -1)
        if past:                                                    # per-row key positions after the prompt
            k_positions = torch.cat([cache.positions, positions], dim=1)
        mask = fn.attention_mask(key_valid, positions, k_positions, dtype=torch.float32)   # (B, 1, S, T)
        cos, sin = fn.rope_cos_sin(positions, c.head_dim, c.rope_theta)                     # (B, S, hd)

        rec("tokens.ids", ids)
        x = fn.embedding(ids, self.w("model.embed_tokens.weight"))                          # (B, S, H)
        rec("embed.out", x)
        for i in range(c.num_hidden_layers):
            x = self.layer(i, x, cos, sin, mask, cache, rec)
        if cache is not None:
            cache.positions = k_positions
            cache.advance(ids.shape[1])
        x = fn.rms_norm(x, self.w("model.norm.weight"), c.rms_norm_eps)
        rec("final_norm.out", x)
        if last_only:
            x = x[:, -1:]
        logits = fn.lm_head(x, self.w("lm_head.weight"))                                    # (B, S, V)
        rec("logits", logits)
        return logits

    def layer(self, i, x, cos, sin, mask, cache, rec):
        c, p, n = self.config, f"model.layers.{i}.", f"layers.{i}."
        h = fn.rms_norm(x, self.w(p + "input_layernorm.weight"), c.rms_norm_eps)
        rec(n + "attn_norm.out", h)
        a = self.attention(i, h, cos, sin, mask, cache, rec)
        x = x + a
        rec(n + "resid_mid", x)
        h = fn.rms_norm(x, self.w(p + "post_attention_layernorm.weight"), c.rms_norm_eps)
        rec(n + "mlp_norm.out", h)
        m = self.moe(i, h, rec) if c.is_moe_layer(i) else self.mlp(i, h, rec)
        x = x + m
        rec(n + "resid_out", x)
        return x

    def attention(self, i, h, cos, sin, mask, cache, rec):
        c, p, n = self.config, f"model.layers.{i}.self_attn.", f"layers.{i}.attn."
        B, S, _ = h.shape
        nh, nkv, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        q = fn.linear(h, self.w(p + "q_proj.weight"), self.w(p + "q_proj.bias")).view(B, S, nh, hd).transpose(1, 2)
        k = fn.linear(h, self.w(p + "k_proj.weight"), self.w(p + "k_proj.bias")).view(B, S, nkv, hd).transpose(1, 2)
        v = fn.linear(h, self.w(p + "v_proj.weight"), self.w(p + "v_proj.bias")).view(B, S, nkv, hd).transpose(1, 2)
        if c.has_qk_norm:                                       # Qwen3: per-head RMSNorm of q and k
            q = fn.rms_norm(q, self.w(p + "q_norm.weight"), c.rms_norm_eps)
            k = fn.rms_norm(k, self.w(p + "k_norm.weight"), c.rms_norm_eps)
        rec(n + "q", q)                                         # (B, nh, S, hd)
        rec(n + "k", k)                                         # (B, nkv, S, hd)
        rec(n + "v", v)
        q = fn.apply_rope(q, cos, sin)
        k = fn.apply_rope(k, cos, sin)
        rec(n + "q_rope", q)
        rec(n + "k_rope", k)
        if cache is not None:
            k, v = cache.update(i, k, v)                        # (B, nkv, T, hd)
        k, v = fn.repeat_kv(k, c.n_rep), fn.repeat_kv(v, c.n_rep)   # (B, nh, T, hd)
        scores = fn.attention_scores(q, k, mask)                # (B, nh, S, T)
        rec(n + "scores", scores)
        probs = fn.softmax(scores)
        rec(n + "probs", probs)
        ctx = fn.attention_context(probs, v)                    # (B, S, nh*hd)
        rec(n + "context", ctx)
        out = fn.linear(ctx, self.w(p + "o_proj.weight"), self.w(p + "o_proj.bias"))   # (B, S, H)
        rec(n + "out", out)
        return out

    def mlp(self, i, h, rec):
        p, n = f"model.layers.{i}.mlp.", f"layers.{i}.mlp."
        gate, up, act, out = fn.swiglu(h, self.w(p + "gate_proj.weight"), self.w(p + "up_proj.weight"),
                                       self.w(p + "down_proj.weight"))
        rec(n + "gate", gate)
        rec(n + "up", up)
        rec(n + "act", act)
        rec(n + "out", out)
        return out

    def moe(self, i, h, rec):
        c, p, n = self.config, f"model.layers.{i}.mlp.", f"layers.{i}."
        B, S, H = h.shape
        experts = [tuple(self.w(f"{p}experts.{e}.{m}_proj.weight") for m in ("gate", "up", "down"))
                   for e in range(c.num_experts)]
        shared = None
        if c.shared_expert_intermediate_size:
            shared = tuple(self.w(f"{p}shared_expert.{m}_proj.weight") for m in ("gate", "up", "down"))
        out, probs, idx, weight = fn.moe(h.reshape(-1, H), self.w(p + "gate.weight"), experts,
                                         c.num_experts_per_tok, c.norm_topk_prob, shared,
                                         self.w(p + "shared_expert_gate.weight"))
        rec(n + "moe.router_probs", probs.view(B, S, -1))
        rec(n + "moe.topk_idx", idx.view(B, S, -1))
        rec(n + "moe.topk_weight", weight.view(B, S, -1))
        out = out.view(B, S, H)
        rec(n + "mlp.out", out)
        return out

    # ---- prompts -> ids -----------------------------------------------------
    def encode_prompts(self, prompts, chat: bool = False, system: str | None = MODEL_DEFAULT, truncate: bool = False,
                       warn=None):
        """Sanitise (ops/inputs.py policy), validate and tokenise; returns (prompts, texts, ids per row).

        Over the token limit: PromptTooLong, or with truncate=True each prompt is cut to the first tokens
        that fit. warn(message) is called for every change made to a prompt (default: warnings.warn)."""
        import warnings
        warn = warn or (lambda m: warnings.warn(m, UserWarning, stacklevel=3))
        if isinstance(prompts, str):
            prompts = [prompts]
        prompts = list(prompts)
        if not prompts:
            raise InputError("no prompt given: type at least one line of text")
        batch = inputs.batch_limit()
        if len(prompts) > batch:
            raise InputError(f"{len(prompts)} prompts given; a batch holds at most {batch}")
        limit = token_limit(self.config)
        overhead = self.tokenizer.chat_overhead(system) if chat else 0
        texts, rows, clean = [], [], []
        for j, prompt in enumerate(prompts):
            if not isinstance(prompt, str) or not prompt.strip():
                raise InputError(f"prompt {j + 1} is empty: type some text")
            san = inputs.sanitize(prompt)
            if san.changed:
                warn(f"prompt {j + 1}: " + san.message())
            prompt = san.text
            if not prompt.strip():
                raise InputError(f"prompt {j + 1} is empty after removing control characters: type some text")
            if len(prompt) > inputs.MAX_CHARS and not truncate:
                raise PromptTooLong(f"prompt {j + 1} is {len(prompt):,} characters; at most {inputs.MAX_CHARS:,} are "
                                    f"read. Shorten it, or truncate to the first {limit} tokens.", j, -1, limit)
            text = self.tokenizer.apply_chat_template(prompt, system=system) if chat else prompt
            ids = self.tokenizer.encode(text) if len(prompt) <= inputs.MAX_CHARS else None
            if ids is None or len(ids) > limit:
                if not truncate:
                    raise PromptTooLong(f"prompt {j + 1} is {len(ids)} tokens; this server's limit is {limit} tokens "
                                        f"(OPERATOR_LAB_MAX_TOKENS). Shorten it, or truncate to the first {limit} "
                                        "tokens (truncate=True).", j, len(ids), limit)
                if limit - overhead < 1:
                    raise InputError(f"the chat template alone is {overhead} tokens, over the limit of {limit}")
                prompt = inputs.truncate_text(self.tokenizer, prompt, limit - overhead)
                warn(f"prompt {j + 1} truncated to its first {limit - overhead} tokens (the limit is {limit})")
                text = self.tokenizer.apply_chat_template(prompt, system=system) if chat else prompt
                ids = self.tokenizer.encode(text)[:limit]
            clean.append(prompt)
            texts.append(text)
            rows.append(ids)
        return clean, texts, rows

    def pad_id(self) -> int:
        pad = getattr(self.tokenizer, "pad_token_id", None)
        return 0 if pad is None else int(pad)

    # ---- the two things pages and tests call ------------------------------------
    def trace(self, prompts, chat: bool = False, capture=None, system: str | None = MODEL_DEFAULT, truncate: bool = False,
              max_bytes: int | None = None, warn=None, recompute: bool = True) -> Trace:
        """Run the prompts (right-padded into one batch) and keep every named tensor that `capture` allows.

        truncate: cut prompts over the token limit instead of refusing them. max_bytes: refuse (TraceTooBig)
        a trace whose size, estimated from the shapes before running, is over this budget."""
        prompts, texts, rows = self.encode_prompts(prompts, chat, system, truncate=truncate, warn=warn)
        if max_bytes is not None:
            B, S = len(rows), max(len(r) for r in rows)
            need = inputs.estimate_trace_bytes(self.config, B, S, capture, recompute)
            if need > max_bytes:
                raise TraceTooBig(f"this trace would hold {inputs.mib(need)} (B={B}, S={S}), over the memory budget of "
                                  f"{inputs.mib(max_bytes)} per session (OPERATOR_LAB_SESSION_MB): use a shorter prompt, "
                                  "fewer lines, or capture fewer tensors.", need, max_bytes)
        return self.trace_ids(rows, capture=capture, prompts=prompts, texts=texts, recompute=recompute)

    def trace_ids(self, rows: list[list[int]], capture=None, prompts=None, texts=None, recompute: bool = True) -> Trace:
        """recompute=True: tensors in trace.RECOMPUTED whose inputs are kept are held as recipes (see recipes())."""
        B, S = len(rows), max(len(r) for r in rows)
        ids = torch.full((B, S), self.pad_id(), dtype=torch.long)
        for b, r in enumerate(rows):
            ids[b, :len(r)] = torch.tensor(r, dtype=torch.long)
        lengths = [len(r) for r in rows]
        valid = torch.arange(S)[None] < torch.tensor(lengths)[:, None]       # (B, S) real tokens
        positions = torch.arange(S)[None].expand(B, S)                       # right padding: 0..S-1 per row
        keep = capture_filter(capture)
        tensors = {}
        recipes = self.recipes(fn.attention_mask(valid, positions, positions)) if recompute else {}

        def record(name, t):
            if not keep(name):
                return
            inputs = recipe_inputs(name)
            if recipes and inputs and all(n in tensors for n in inputs):       # held as a recipe, not a tensor
                _, layer, part = name.split(".", 2)
                tensors[name] = Derived(partial(recipes[part], int(layer)), inputs, tuple(t.shape), t.dtype)
            else:
                tensors[name] = t.detach().to("cpu")

        self.forward(ids, positions, valid, record=record)
        texts = texts or [""] * B
        return Trace(self.config, prompts or texts, texts, ids, lengths, tensors)

    def recipes(self, mask: torch.Tensor) -> dict:
        """part -> fn(layer, *inputs): the forward pass's own operator for each part in trace.RECOMPUTED,
        so a recomputed tensor equals the one the forward pass made. mask: the trace's (B, 1, S, S) mask."""
        c = self.config

        def on_device(f):          # run where the weights are; the trace lives on the CPU
            return lambda i, *xs: f(i, *(x.to(self.device) for x in xs)).to("cpu")

        def gate(i, h):
            return fn.linear(h, self.w(f"model.layers.{i}.mlp.gate_proj.weight"))

        def up(i, h):
            return fn.linear(h, self.w(f"model.layers.{i}.mlp.up_proj.weight"))

        return {"attn.scores": on_device(lambda i, q, k: fn.attention_scores(q, fn.repeat_kv(k, c.n_rep),
                                                                             mask.to(self.device))),
                "attn.probs": on_device(lambda i, scores: fn.softmax(scores)),
                "mlp.gate": on_device(gate), "mlp.up": on_device(up),
                "mlp.act": on_device(lambda i, g, u: fn.swiglu_act(g, u))}

    @torch.inference_mode()
    def generate(self, prompt: str, chat: bool = True, max_new_tokens: int = 32, temperature: float = 0.0,
                 top_k: int = 0, top_p: float = 1.0, repetition_penalty: float = 1.0, seed: int = 0,
                 on_token=None, system: str | None = MODEL_DEFAULT, stop_at_eos: bool = True,
                 fast: bool = False) -> Generation:
        """Autoregressive decoding with a KV cache: one prefill of the prompt, then one token per step.

        fast=True decodes with a bfloat16 copy of the weights (built once, see fast_weights) and fused
        attention, recording nothing: about twice the tokens/s on a CPU, since decoding one token reads
        every weight once and bfloat16 halves the bytes. Its logits differ from the float32 path by
        bfloat16 rounding (bench/generate.py reports how much)."""
        params = SamplingParams(temperature, top_k, top_p, repetition_penalty, seed)
        prompts, texts, rows = self.encode_prompts(prompt, chat, system)
        if len(rows) != 1:
            raise InputError("generate takes one prompt at a time")
        limit = inputs.max_new_tokens_limit(self.config)
        if not isinstance(max_new_tokens, int) or not 1 <= max_new_tokens <= limit:
            raise InputError(f"max_new_tokens = {max_new_tokens!r}: it must be a whole number from 1 to {limit}")
        prompt_ids = rows[0]
        max_new_tokens = min(max_new_tokens, self.config.max_position_embeddings - len(prompt_ids))
        eos = set(getattr(self.tokenizer, "eos_token_ids", ()) or ()) | set(self.config.eos_ids)
        gen = make_generator(params.seed)
        fast_dtype = self.fast_dtype() if fast else None
        cache = KVCache(self.config, 1, len(prompt_ids) + max_new_tokens, self.device, fast_dtype or self.dtype)
        rope = self.rope_table(len(prompt_ids) + max_new_tokens, fast_dtype) if fast else None
        seen = list(prompt_ids)
        out = Generation(prompt=prompts[0], text="", token_ids=[], prompt_ids=prompt_ids, fast=bool(fast),
                         compute_dtype=str(fast_dtype or self.dtype).replace("torch.", ""))

        ids = torch.tensor([prompt_ids])
        for step in range(max_new_tokens):
            t0 = time.perf_counter()
            S = ids.shape[1]
            if fast:
                logits = self.fast_forward(ids, cache, rope)[0]
            else:
                positions = torch.arange(cache.length, cache.length + S)[None]
                key_valid = torch.ones(1, cache.length + S, dtype=torch.bool)
                logits = self.forward(ids, positions, key_valid, cache=cache, last_only=True)[0, -1]
            st = sample_stages(logits, seen, params, gen)
            token = st["chosen"]
            cand = torch.topk(st["logits"], 20).indices
            out.steps.append(GenerationStep(
                token_id=token, piece=self.tokenizer.decode([token]) if self.tokenizer else str(token),
                phase="prefill" if step == 0 else "decode", seconds=time.perf_counter() - t0,
                kv_tokens=cache.length, kv_bytes=cache.nbytes, candidates=cand.tolist(),
                stages={k: v[cand].tolist() for k, v in st.items() if k != "chosen"},
                chosen_prob=float(st["probs"][token])))
            out.token_ids.append(token)
            seen.append(token)
            if on_token:
                on_token(out.steps[-1])
            if stop_at_eos and token in eos:
                out.stopped = "eos"
                break
            ids = torch.tensor([[token]])
        if self.tokenizer:
            out.text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
        return out

    # ---- the generation fast path: a bfloat16 copy of the weights, nothing recorded ----------
    def fast_dtype(self) -> torch.dtype:
        """bfloat16 (AMX/AVX-512 BF16 CPUs and GPUs read half the bytes of float32); the model's own
        dtype when that is already a 16-bit one."""
        return self.dtype if self.dtype in (torch.bfloat16, torch.float16) else torch.bfloat16

    def fast_weights(self, dtype: torch.dtype | None = None) -> dict:
        """The weights in `dtype` for generate(fast=True), built on first use and kept (the traced
        weights stay as they are). Tensors already in that dtype are shared, not copied, so a model
        loaded in bfloat16 costs no extra memory; tied tensors stay tied."""
        dtype = dtype or self.fast_dtype()
        store = self.__dict__.setdefault("_fast_weights", {})
        if dtype not in store:
            by_ptr = {}
            for name, t in self.weights.items():
                if t.data_ptr() not in by_ptr:
                    by_ptr[t.data_ptr()] = t.to(dtype).contiguous()
            W = {name: by_ptr[t.data_ptr()] for name, t in self.weights.items()}
            if any(W[n].data_ptr() != t.data_ptr() for n, t in self.weights.items()):
                W = self._fuse(W)      # a copy anyway: fuse q/k/v and gate/up into fewer, larger products
            store[dtype] = W
        return store[dtype]

    def _fuse(self, W: dict) -> dict:
        """q|k|v -> qkv_proj and gate|up -> gate_up_proj (concatenated rows; the parts are views of them)."""
        c = self.config
        for i in range(c.num_hidden_layers):
            a, m = f"model.layers.{i}.self_attn.", f"model.layers.{i}.mlp."
            for suffix in ("weight", "bias"):
                parts = [a + f"{x}_proj.{suffix}" for x in "qkv"]
                if all(n in W for n in parts):
                    W[a + "qkv_proj." + suffix] = torch.cat([W.pop(n) for n in parts])
            if not c.is_moe_layer(i):
                W[m + "gate_up_proj.weight"] = torch.cat([W.pop(m + "gate_proj.weight"), W.pop(m + "up_proj.weight")])
        return W

    def rope_table(self, length: int, dtype: torch.dtype | None = None):
        """cos, sin (length, hd) for positions 0..length-1, computed in float32, then cast (as HF does)."""
        pos = torch.arange(length, device=self.device)[None]
        cos, sin = fn.rope_cos_sin(pos, self.config.head_dim, self.config.rope_theta)
        dtype = dtype or self.fast_dtype()
        return cos[0].to(dtype), sin[0].to(dtype)

    @torch.inference_mode()
    def fast_forward(self, ids: torch.Tensor, cache: KVCache, rope=None) -> torch.Tensor:
        """Logits (B, V) of the last position of ids (B, S), appended after the cache's keys: the same
        operators as forward(), in the fast dtype, with F.scaled_dot_product_attention and no record.
        No padding (every key is a real token); used by generate(fast=True) only."""
        c = self.config
        W = self.fast_weights()
        B, S = ids.shape
        past = cache.length
        nh, nkv, hd, eps = c.num_attention_heads, c.num_key_value_heads, c.head_dim, c.rms_norm_eps
        cos, sin = rope if rope is not None else self.rope_table(past + S)
        cos, sin = cos[past:past + S], sin[past:past + S]               # (S, hd), broadcasts over (B, n)
        mask = None
        if S > 1 and past:                                              # new block after cached keys
            mask = torch.ones(S, past + S, dtype=torch.bool, device=self.device).tril(past)
        causal = S > 1 and not past
        x = W["model.embed_tokens.weight"][ids.to(self.device)]          # (B, S, H)
        for i in range(c.num_hidden_layers):
            p = f"model.layers.{i}."
            a = p + "self_attn."
            h = fn.rms_norm(x, W[p + "input_layernorm.weight"], eps)
            if a + "qkv_proj.weight" in W:                             # fused copy: one product for q, k, v
                q, k, v = _gemv_linear(h, W[a + "qkv_proj.weight"], W.get(a + "qkv_proj.bias")).split(
                    [nh * hd, nkv * hd, nkv * hd], dim=-1)
            else:
                q = _gemv_linear(h, W[a + "q_proj.weight"], W.get(a + "q_proj.bias"))
                k = _gemv_linear(h, W[a + "k_proj.weight"], W.get(a + "k_proj.bias"))
                v = _gemv_linear(h, W[a + "v_proj.weight"], W.get(a + "v_proj.bias"))
            q = q.reshape(B, S, nh, hd).transpose(1, 2)                 # (B, nh, S, hd)
            k = k.reshape(B, S, nkv, hd).transpose(1, 2)                # (B, nkv, S, hd)
            v = v.reshape(B, S, nkv, hd).transpose(1, 2)
            if c.has_qk_norm:
                q = fn.rms_norm(q, W[a + "q_norm.weight"], eps)
                k = fn.rms_norm(k, W[a + "k_norm.weight"], eps)
            q = q * cos + fn.rotate_half(q) * sin
            k = k * cos + fn.rotate_half(k) * sin
            k, v = cache.update(i, k, v)                                # (B, nkv, T, hd)
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                                 enable_gqa=nkv != nh)   # (B, nh, S, hd)
            ctx = ctx.transpose(1, 2).reshape(B, S, nh * hd)
            x = x + _gemv_linear(ctx, W[a + "o_proj.weight"], W.get(a + "o_proj.bias"))
            h = fn.rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
            if c.is_moe_layer(i):
                x = x + self._fast_moe(p + "mlp.", h, W)
            else:
                m = p + "mlp."
                if m + "gate_up_proj.weight" in W:
                    gate, up = _gemv_linear(h, W[m + "gate_up_proj.weight"]).chunk(2, dim=-1)
                else:
                    gate, up = _gemv_linear(h, W[m + "gate_proj.weight"]), _gemv_linear(h, W[m + "up_proj.weight"])
                x = x + _gemv_linear(fn.swiglu_act(gate, up), W[m + "down_proj.weight"])
        cache.positions = torch.arange(past + S, device=self.device)[None].expand(B, -1)
        cache.advance(S)
        x = fn.rms_norm(x[:, -1], W["model.norm.weight"], eps)          # (B, H): only the last position
        return _gemv_linear(x, W["lm_head.weight"])                     # (B, V)

    def _fast_moe(self, p, h, W):
        c = self.config
        B, S, H = h.shape
        experts = [tuple(W[f"{p}experts.{e}.{m}_proj.weight"] for m in ("gate", "up", "down"))
                   for e in range(c.num_experts)]
        shared = None
        if c.shared_expert_intermediate_size:
            shared = tuple(W[f"{p}shared_expert.{m}_proj.weight"] for m in ("gate", "up", "down"))
        out = fn.moe(h.reshape(-1, H), W[p + "gate.weight"], experts, c.num_experts_per_tok, c.norm_topk_prob,
                     shared, W.get(p + "shared_expert_gate.weight"))[0]
        return out.view(B, S, H)
