"""The runner: a Qwen2-family decoder run operator by operator, recording every step by name.

ONE forward pass serves the trace, generation and the fast path. What differs is configuration, picked
by name the way Hugging Face picks an attention implementation:
  weights    "model" (as loaded), "bf16" (a 16-bit copy with q|k|v and gate|up fused, built once) or "int8"
             (int8 rows with one scale each, ops/fast/quant.py); a Weights (ops/engine/weights.py) says how projections
             read them
  attention  "eager" (matmul -> mask -> softmax -> matmul; scores and probs recorded) or "sdpa"
  record     record(name, tensor) with a trace-contract name at every step, or None for nothing
Reads top to bottom like the pipeline: embedding -> L x (norm, attention, residual, norm, MLP/MoE,
residual) -> final norm -> LM head. Then the trace and the fast copy; ops/engine/decode.py steps this pass a token
at a time (Model.decoder, Model.generate).
"""
from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from ..errors import InputError, TraceTooBig
from ..fast.quant import int8_copy
from ..models.tokenizer import MODEL_DEFAULT
from . import functional as fn, inputs, rope
from .config import ModelConfig
from .decode import Decoder, Generation, KVCache, decode_path
from .recording import attention_scores, build_trace, recorder
from .sampling import SamplingParams
from .speculate import check_draft, draft_step, generate_with_draft
from .trace import Trace
from .weights import FUSED, Weights

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def pick_device(device: str | None = None) -> str:
    """Chosen once: CUDA when asked for or available, else CPU."""
    if device in (None, "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError("device 'cuda' was asked for, but PyTorch sees no CUDA GPU on this machine")
    if device != "cpu" and not device.startswith("cuda"):
        raise InputError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return device


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


# ---- what a pass reads: weights and attention, by name ---------------------------------------------
def eager_attention(q, k, v, mask, rec, n: str) -> torch.Tensor:
    """matmul -> mask -> softmax (float32) -> matmul, every step kept visible (recorded, and editable)."""
    scores = rec(n + "scores", attention_scores(q, k, mask))             # (B, nh, S, T)
    probs = rec(n + "probs", fn.softmax(scores))
    return fn.attention_context(probs, fn.repeat_kv(v, q.shape[1] // v.shape[1]))   # (B, S, nh*hd)


def sdpa_attention(q, k, v, mask, rec, n: str) -> torch.Tensor:
    """The same function in PyTorch's fused kernel: no (S, T) matrix is kept, so there is nothing to record.
    mask None means no padding and causal order only (a prompt with no cache, or one new token)."""
    ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.to(q.dtype),
                                         is_causal=mask is None and q.shape[2] > 1,
                                         enable_gqa=q.shape[1] != k.shape[1])      # (B, nh, S, hd)
    B, nh, S, hd = ctx.shape
    return ctx.transpose(1, 2).reshape(B, S, nh * hd)


ATTENTION = {"eager": eager_attention, "sdpa": sdpa_attention}


@dataclass
class Pass:
    """What every layer of one forward call shares: its configuration and this call's positions."""
    W: Weights
    attend: Callable                 # ATTENTION[name]
    cos: torch.Tensor | None         # (B, S, hd) rotary angles of this call's positions (set once the
    sin: torch.Tensor | None         # frequencies are recorded)
    mask: torch.Tensor | None        # (B, 1, S, T) additive mask, or None (causal order only, SDPA)
    cache: KVCache | None
    rec: Callable                    # x = rec(name, x): records x and returns it, or its edit (ops/engine/recording.py)


class Model:
    def __init__(self, config: ModelConfig, weights: dict, tokenizer=None, device=None, dtype=None,
                 device_map: dict | None = None):
        """device_map: module name -> device ("model.layers.3" -> 1 means cuda:1), as ops/arith/placement.py (and
        accelerate) write it; every weight goes to its module's device and each layer runs where it lies."""
        self.config = config
        self.tokenizer = tokenizer
        self.device = pick_device(device)
        self.dtype = pick_dtype(dtype, self.device)
        self.device_map = device_map
        W = {n: t.to(self.place(n), self.dtype) for n, t in weights.items()}
        if "lm_head.weight" not in W:                        # tied: the LM head is the embedding table
            W["lm_head.weight"] = W["model.embed_tokens.weight"]
        self.weights = Weights(W)
        self._copies, self._lock = {}, threading.Lock()     # weight copies derived from it, each built once

    def place(self, name: str) -> torch.device:
        """The device of a weight or module under the device map (self.device without one)."""
        if self.device_map is None:
            return torch.device(self.device)
        module = name.removesuffix(".weight").removesuffix(".bias")
        while module and module not in self.device_map:
            module = module.rpartition(".")[0]
        d = self.device_map.get(module, self.device)
        return torch.device(f"cuda:{d}" if isinstance(d, int) else d)

    @property
    def cache_devices(self):
        """Where each layer's KV cache lives: with its layer's weights."""
        if self.device_map is None:
            return self.device
        return [self.place(f"model.layers.{i}") for i in range(self.config.num_hidden_layers)]

    def w(self, name: str) -> torch.Tensor | None:
        return self.weights.get(name)

    @property
    def num_parameters(self) -> int:
        """Every distinct weight tensor counted once (a tied LM head is not counted twice)."""
        return sum({t.data_ptr(): t.numel() for t in self.weights.values()}.values())

    def weight_set(self, name: str = "model", on_part=None) -> Weights:
        """The weights a pass reads, by name: "model" (as loaded), "bf16" (the fused 16-bit copy) or "int8".
        on_part(done, total): how far the copy is, while it is made (the first time only)."""
        if name == "model":
            return self.weights
        if name in ("bf16", "int8"):
            return self.fast_weights("int8" if name == "int8" else None, on_part)
        raise InputError(f"weights must be 'model', 'bf16' or 'int8', got {name!r}")

    # ---- one forward pass -------------------------------------------------
    @torch.inference_mode()
    def forward(self, ids: torch.Tensor | None, positions: torch.Tensor, key_valid: torch.Tensor,
                cache: KVCache | None = None, record=None, last_only: bool | int = False,
                weights: str = "model", attention: str = "eager", edits: dict | None = None,
                start: int = 0, hidden: torch.Tensor | None = None) -> torch.Tensor:
        """ids, positions (B, S); key_valid (B, T) covers cached + new keys. Returns logits (B, S|1, V).
        last_only: only the last position (True) or position p (an int) goes on through the final norm and the
        LM head. edits: name -> fn(tensor) -> tensor, applied where the pass records the name (eager attention).
        start, hidden: begin at layer `start` from the residual stream `hidden` (B, S, H) instead of the ids."""
        c = self.config
        positions, key_valid = positions.to(self.device), key_valid.to(self.device)
        S, past = positions.shape[1], cache.length if cache else 0
        attention = "eager" if edits else attention                 # an edit may target scores or probs
        k_positions = torch.cat([cache.positions, positions], dim=1) if past else positions    # (B, T)
        mask = None                 # SDPA needs no mask tensor when causal order is all there is to enforce
        if attention != "sdpa" or (S > 1 and past) or not bool(key_valid.all()):
            mask = fn.attention_mask(key_valid, positions, k_positions, dtype=torch.float32)   # (B, 1, S, T)
        run = Pass(self.weight_set(weights), ATTENTION[attention], None, None, mask, cache, recorder(record, edits))

        if hidden is None:
            ids = run.rec("tokens.ids", ids.to(self.place("model.embed_tokens")))
            x = run.rec("embed.out", fn.embedding(ids, run.W["model.embed_tokens.weight"]))      # (B, S, H)
        else:
            x = hidden.to(self.device, self.dtype)
        inv_freq, scale = rope.call_frequencies(c, positions)      # (hd/2,): scaled as the config says (rope.py)
        run.rec("rope.inv_freq_base", rope.base_inv_freq(c))
        inv_freq = run.rec("rope.inv_freq", inv_freq)
        run.cos, run.sin = fn.rope_cos_sin(positions, inv_freq, scale)                          # (B, S, hd)
        for i in range(start, c.num_hidden_layers):
            if self.device_map is not None:                          # placed on several devices: go to layer i's
                x, run = self._move(x, run, self.place(f"model.layers.{i}"))
            x = self.layer(i, x, run)
        if cache is not None:
            cache.positions = k_positions
            cache.advance(S)
        if last_only is not False:
            p = S - 1 if last_only is True else int(last_only) % S
            x = x[:, p:p + 1]                                                                    # (B, 1, H)
        if self.device_map is not None:
            x, run = self._move(x, run, self.place("model.norm"))
        x = run.rec("final_norm.out", fn.rms_norm(x, run.W["model.norm.weight"], c.rms_norm_eps))
        if self.device_map is not None:                              # a tied head lies with the embedding
            x = x.to(self.weights["lm_head.weight"].device)
        return run.rec("logits", run.W.linear(x, "lm_head"))            # fn.lm_head, or int8 rows: (B, S, V)

    @staticmethod
    def _move(x: torch.Tensor, run: Pass, device: torch.device) -> tuple[torch.Tensor, Pass]:
        if x.device == device:
            return x, run
        mask = None if run.mask is None else run.mask.to(device)
        return x.to(device), dataclasses.replace(run, cos=run.cos.to(device), sin=run.sin.to(device), mask=mask)

    def layer(self, i: int, x: torch.Tensor, run: Pass) -> torch.Tensor:
        c, p, n = self.config, f"model.layers.{i}.", f"layers.{i}."
        h = fn.rms_norm(x, run.W[p + "input_layernorm.weight"], c.rms_norm_eps)
        h = run.rec(n + "attn_norm.out", h)
        x = x + self.attention(i, h, run)
        x = run.rec(n + "resid_mid", x)
        h = fn.rms_norm(x, run.W[p + "post_attention_layernorm.weight"], c.rms_norm_eps)
        h = run.rec(n + "mlp_norm.out", h)
        x = x + (self.moe(i, h, run) if c.is_moe_layer(i) else self.mlp(i, h, run))
        x = run.rec(n + "resid_out", x)
        return x

    def attention(self, i: int, h: torch.Tensor, run: Pass) -> torch.Tensor:
        c, p, n = self.config, f"model.layers.{i}.self_attn.", f"layers.{i}.attn."
        B, S, _ = h.shape
        nh, nkv, hd = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        q, k, v = run.W.project(h, p, ("q", "k", "v"))              # (B, S, nh*hd), 2 x (B, S, nkv*hd)
        q = q.view(B, S, nh, hd).transpose(1, 2)                    # (B, nh, S, hd)
        k = k.view(B, S, nkv, hd).transpose(1, 2)                   # (B, nkv, S, hd)
        v = v.view(B, S, nkv, hd).transpose(1, 2)
        if c.has_qk_norm:                                           # Qwen3: per-head RMSNorm of q and k
            q = fn.rms_norm(q, run.W[p + "q_norm.weight"], c.rms_norm_eps)
            k = fn.rms_norm(k, run.W[p + "k_norm.weight"], c.rms_norm_eps)
        q, k, v = run.rec(n + "q", q), run.rec(n + "k", k), run.rec(n + "v", v)
        q, k = fn.apply_rope(q, run.cos, run.sin), fn.apply_rope(k, run.cos, run.sin)
        q, k = run.rec(n + "q_rope", q), run.rec(n + "k_rope", k)
        if run.cache is not None:
            k, v = run.cache.update(i, k, v)                        # (B, nkv, T, hd): cached keys + these
        ctx = run.attend(q, k, v, run.mask, run.rec, n)             # (B, S, nh*hd)
        ctx = run.rec(n + "context", ctx)
        out = run.W.linear(ctx, p + "o_proj")                       # (B, S, H)
        return run.rec(n + "out", out)

    def mlp(self, i: int, h: torch.Tensor, run: Pass) -> torch.Tensor:
        p, n = f"model.layers.{i}.mlp.", f"layers.{i}.mlp."
        gate, up = run.W.project(h, p, ("gate", "up"))              # (B, S, I) each
        gate, up = run.rec(n + "gate", gate), run.rec(n + "up", up)
        act = fn.swiglu_act(gate, up)                               # silu(gate) * up
        act = run.rec(n + "act", act)
        out = run.W.linear(act, p + "down_proj")                    # (B, S, H)
        return run.rec(n + "out", out)

    def moe(self, i: int, h: torch.Tensor, run: Pass) -> torch.Tensor:
        c, W, p, n = self.config, run.W, f"model.layers.{i}.mlp.", f"layers.{i}."
        B, S, H = h.shape
        parts = ("gate", "up", "down")
        experts = [tuple(W[f"{p}experts.{e}.{m}_proj.weight"] for m in parts) for e in range(c.num_experts)]
        shared = None
        if c.shared_expert_intermediate_size:
            shared = tuple(W[f"{p}shared_expert.{m}_proj.weight"] for m in parts)
        out, probs, idx, weight = fn.moe(h.reshape(-1, H), W[p + "gate.weight"], experts, c.num_experts_per_tok,
                                         c.norm_topk_prob, shared, W.get(p + "shared_expert_gate.weight"))
        run.rec(n + "moe.router_probs", probs.view(B, S, -1))     # (B, S, E)
        run.rec(n + "moe.topk_idx", idx.view(B, S, -1))           # (B, S, k)
        run.rec(n + "moe.topk_weight", weight.view(B, S, -1))
        return run.rec(n + "mlp.out", out.view(B, S, H))

    # ---- prompts -> ids -> a trace --------------------------------------------
    def encode_prompts(self, prompts, chat: bool = False, system: str | None = MODEL_DEFAULT, truncate: bool = False,
                       warn=None, sanitized: bool = False):
        """(prompts, texts, ids per row) after the input policy of ops/engine/inputs.py (see inputs.encode_prompts)."""
        return inputs.encode_prompts(self.tokenizer, self.config, prompts, chat, system, truncate, warn, sanitized)

    def pad_id(self) -> int:
        pad = getattr(self.tokenizer, "pad_token_id", None)
        return 0 if pad is None else int(pad)

    def trace(self, prompts, chat: bool = False, capture=None, system: str | None = MODEL_DEFAULT,
              truncate: bool = False,
              max_bytes: int | None = None, warn=None, recompute: bool = True, edits: dict | None = None,
              on_layer=None) -> Trace:
        """Run the prompts (right-padded into one batch) and keep every named tensor that `capture` allows.

        truncate: cut prompts over the token limit instead of refusing them. max_bytes: refuse (TraceTooBig)
        a trace whose size, estimated from the shapes before running, is over this budget. edits, on_layer: see
        trace_ids."""
        prompts, texts, rows = self.prepare_trace(prompts, chat, capture, system, truncate, max_bytes, warn, recompute)
        return self.trace_ids(rows, capture=capture, prompts=prompts, texts=texts, recompute=recompute, edits=edits,
                              on_layer=on_layer)

    def prepare_trace(self, prompts, chat: bool = False, capture=None, system: str | None = MODEL_DEFAULT,
                      truncate: bool = False, max_bytes: int | None = None, warn=None, recompute: bool = True,
                      sanitized: bool = False):
        """(prompts, texts, ids per row) that trace() runs, after the input policy and the memory budget (see trace;
        sanitized: see encode_prompts); ops.engine.batch.trace_together takes them too."""
        prompts, texts, rows = self.encode_prompts(prompts, chat, system, truncate=truncate, warn=warn,
                                                   sanitized=sanitized)
        if max_bytes is not None:
            B, S = len(rows), max(len(r) for r in rows)
            need = inputs.estimate_trace_bytes(self.config, B, S, capture, recompute)
            if need > max_bytes:
                raise TraceTooBig(f"this trace would hold {inputs.mib(need)} (B={B}, S={S}), over the memory budget of "
                                  f"{inputs.mib(max_bytes)} per trace (OPERATOR_LAB_SESSION_MB): use a shorter "
                                  "prompt, "
                                  "fewer lines, or capture fewer tensors.", need, max_bytes)
        return prompts, texts, rows

    def trace_ids(self, rows: list[list[int]], capture=None, prompts=None, texts=None, recompute: bool = True,
                  edits: dict | None = None, on_layer=None) -> Trace:
        """recompute=True: tensors in trace.RECOMPUTED whose inputs are kept are held as recipes
        (ops/engine/recording.py).
        edits: name -> fn(tensor) -> tensor (same shape), applied where the pass records that name.
        on_layer(i): called after layer i (a page's progress: ops.lab.steps)."""
        return build_trace(self, rows, capture, prompts, texts, recompute, edits, on_layer)

    # ---- the fast copy: 16-bit weights, q|k|v and gate|up fused ------------------------
    def fast_dtype(self) -> torch.dtype:
        """bfloat16 (half the bytes of float32 to read per token); the model's own dtype when already 16-bit."""
        return self.dtype if self.dtype in (torch.bfloat16, torch.float16) else torch.bfloat16

    def fast_weights(self, dtype: torch.dtype | None = None, on_part=None) -> Weights:
        """The weights in `dtype` for the fast path, built on first use under a lock, so sessions asking at
        once share one copy. Tensors already in that dtype are shared, not copied, so a model loaded in
        bfloat16 costs no extra memory; tied tensors stay tied."""
        dtype = dtype or self.fast_dtype()
        if dtype not in self._copies:
            with self._lock:
                if dtype not in self._copies:                   # another thread may have built it meanwhile
                    self._copies[dtype] = (int8_copy(self, on_part=on_part) if dtype == "int8" else
                                           self._fast_copy(dtype, on_part))
        return self._copies[dtype]

    def _fast_copy(self, dtype: torch.dtype, on_part=None) -> Weights:
        by_ptr = {}
        for k, t in enumerate(self.weights.values()):
            if t.data_ptr() not in by_ptr:
                by_ptr[t.data_ptr()] = t.to(dtype).contiguous()
            if on_part is not None:
                on_part(k + 1, len(self.weights))
        W = {name: by_ptr[t.data_ptr()] for name, t in self.weights.items()}
        del by_ptr                                              # W alone holds the copies: each freed once moved
        if all(W[n].data_ptr() == t.data_ptr() for n, t in self.weights.items()):
            return Weights(W)                                   # nothing copied: nothing to fuse either
        splits = {}                                             # a copy anyway: fewer, larger products
        for i in range(self.config.num_hidden_layers):
            for prefix, parts in ((f"model.layers.{i}.self_attn.", ("q", "k", "v")),
                                  (f"model.layers.{i}.mlp.", ("gate", "up"))):
                names = [f"{prefix}{x}_proj" for x in parts]
                biases = sum(n + ".bias" in W for n in names)
                if not all(n + ".weight" in W for n in names) or biases not in (0, len(names)):
                    continue                                    # a MoE layer has no gate|up to fuse
                fused = prefix + FUSED[parts] + "_proj"
                splits[fused] = [W[n + ".weight"].shape[0] for n in names]
                for suffix in ("weight", "bias") if biases else ("weight",):
                    W[f"{fused}.{suffix}"] = torch.cat([W.pop(f"{n}.{suffix}") for n in names])
        return Weights(W, splits)

    # ---- decoding ----------------------------------------------------------------
    def decoder(self, prompt: str, chat: bool = True, max_new_tokens: int = 32, params: SamplingParams | None = None,
                system: str | None = MODEL_DEFAULT, fast: str | bool | None = None, stop_at_eos: bool = True,
                prefill_chunk: int | None = None, draft: str = "") -> Decoder:
        """A decoding of one prompt, ready to step (see Decoder). fast: False/None = the traced path (the model's
        weights, eager attention); True or "bf16" = the bfloat16 fused copy with SDPA; anything else: InputError.
        prefill_chunk: prefill the prompt this many tokens per pass through the cache (None: one pass).
        draft: "" or "prompt-lookup" (greedy only): advance() verifies tokens copied from the text several per pass."""
        path = decode_path(fast)
        prompts, _, rows = self.encode_prompts(prompt, chat, system)
        if len(rows) != 1:
            raise InputError("generate takes one prompt at a time")
        limit = inputs.max_new_tokens_limit(self.config)
        if not isinstance(max_new_tokens, int) or not 1 <= max_new_tokens <= limit:
            raise InputError(f"max_new_tokens = {max_new_tokens!r}: it must be a whole number from 1 to {limit}")
        params = params or SamplingParams()
        if draft:
            check_draft(draft, params)
        return Decoder(self, prompts[0], rows[0], max_new_tokens, params, path, stop_at_eos, prefill_chunk, draft,
                       draft_step if draft else None)

    def generate(self, prompt: str, chat: bool = True, max_new_tokens: int = 32, temperature: float = 0.0,
                 top_k: int = 0, top_p: float = 1.0, repetition_penalty: float = 1.0, seed: int = 0,
                 on_token=None, system: str | None = MODEL_DEFAULT, stop_at_eos: bool = True,
                 fast: str | bool | None = False, min_p: float = 0.0, prefill_chunk: int | None = None,
                 draft: str | None = None) -> Generation:
        """Autoregressive decoding with a KV cache: one prefill of the prompt, then one token per step, each
        passed to on_token(step) as it comes. fast=True: the bfloat16 fused copy (see decoder()).
        prefill_chunk: the prompt C tokens per pass. draft="prompt-lookup": greedy tokens verified several per
        pass from n-grams of the text so far (ops/engine/speculate.py); the tokens are plain greedy's."""
        params = SamplingParams(temperature, top_k, top_p, repetition_penalty, seed, min_p)
        dec = self.decoder(prompt, chat, max_new_tokens, params, system, fast, stop_at_eos, prefill_chunk)
        if draft is not None:
            return generate_with_draft(dec, draft, on_token)
        while not dec.done:
            step = dec.step()
            if on_token:
                on_token(step)
        return dec.result()
