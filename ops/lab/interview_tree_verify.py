"""Speculative decoding with a token tree: several drafted branches verified in ONE forward pass.

Prompt lookup (ops/engine/speculate.py) copies one continuation of the latest earlier occurrence of the text's last
n-gram. Here every earlier occurrence offers its continuation: they are merged into a trie whose root is the last
token (Medusa, SpecInfer, EAGLE-2 verify such trees). One pass runs every node; node j sits at position
past + depth(j) and sees the cached keys and its own ancestors only (the tree attention mask, added to the scores
where the pass records them). Greedy then walks down from the root: while the model's token after a node is one of
its children, that child is accepted. The accepted path's keys are moved to the front of the cache, so the next
pass continues as if the path had been decoded one token at a time.
"""
from __future__ import annotations

import torch

from ..engine.decode import KVCache
from ..engine.speculate import MAX_DRAFT, MAX_NGRAM
from ..errors import InputError


def lookup_branches(ids: list[int], branches: int = 4, depth: int = MAX_DRAFT,
                    max_ngram: int = MAX_NGRAM) -> list[list[int]]:
    """Up to `branches` distinct continuations of the text's suffix: for the longest suffix (max_ngram tokens
    down to 1) first, every earlier occurrence, latest first, gives the `depth` tokens that followed it; shorter
    suffixes add theirs while there is room."""
    out, n_ids = [], len(ids)
    for n in range(min(max_ngram, n_ids - 1), 0, -1):
        tail = ids[n_ids - n:]
        for start in range(n_ids - n - 1, -1, -1):
            if ids[start:start + n] == tail:
                cont = ids[start + n:start + n + depth]
                if cont and cont not in out and not any(o[:len(cont)] == cont for o in out):
                    out.append(cont)
                    if len(out) == branches:
                        return out
    return out


def build_tree(root: int, branches: list[list[int]]) -> dict:
    """The trie of the branches under `root`: tokens, parent (-1 for the root) and depth per node, parents before
    children; `ancestors` (N, N) bool: [j, i] when node i is node j or one of its ancestors."""
    tokens, parent, depth, children = [root], [-1], [0], [{}]
    for br in branches:
        node = 0
        for t in br:
            if t not in children[node]:
                children[node][t] = len(tokens)
                tokens.append(t)
                parent.append(node)
                depth.append(depth[node] + 1)
                children.append({})
            node = children[node][t]
    N = len(tokens)
    anc = torch.zeros(N, N, dtype=torch.bool)
    for j in range(N):
        i = j
        while i >= 0:
            anc[j, i] = True
            i = parent[i]
    return dict(tokens=tokens, parent=parent, depth=depth, children=children, ancestors=anc,
                leaves=sum(1 for c in children if not c))


def tree_edits(config, ancestors: torch.Tensor, past: int) -> dict:
    """Edits that add the tree mask to every layer's attention scores (B, nh, N, past + N): the cached keys stay
    visible, a tree key only to its descendants (and itself)."""
    N = ancestors.shape[0]
    extra = torch.zeros(N, past + N)
    extra[:, past:] = torch.zeros(N, N).masked_fill(~ancestors, float("-inf"))

    def add(scores):
        return scores + extra.to(scores.device, scores.dtype)
    return {f"layers.{i}.attn.scores": add for i in range(config.num_hidden_layers)}


@torch.inference_mode()
def tree_pass(model, cache: KVCache, tree: dict) -> torch.Tensor:
    """One forward pass over every node of the tree after the cached keys: logits (N, V), node j's at position
    past + depth(j), seeing the cache and its ancestors. The cache then holds all N nodes (see keep_path)."""
    past, N = cache.length, len(tree["tokens"])
    pos = torch.tensor([tree["depth"]]) + past
    return model.forward(torch.tensor([tree["tokens"]]), pos, torch.ones(1, past + N, dtype=torch.bool), cache=cache,
                         edits=tree_edits(model.config, tree["ancestors"], past))[0].float()


def walk(tree: dict, logits: torch.Tensor) -> tuple[list[int], list[int]]:
    """Greedy down the tree: (the tokens it yields, the nodes it went through from the root)."""
    node, out, path = 0, [], [0]
    while True:
        t = int(logits[node].argmax())
        out.append(t)
        child = tree["children"][node].get(t)
        if child is None:
            return out, path
        node = child
        path.append(node)


def keep_path(cache: KVCache, past: int, path: list[int]):
    """Keep only the accepted path's keys: node j's keys (at past + j) move to past + its depth, which is where a
    token-by-token decoding would have put them, with the same rotary position."""
    idx = torch.tensor(path) + past
    for i in range(len(cache.k)):
        for kv in (cache.k[i], cache.v[i]):
            kv[:, :, past:past + len(path)] = kv[:, :, idx].clone()
    cache.length = past + len(path)
    cache.positions = torch.arange(cache.length)[None]


@torch.inference_mode()
def tree_decode(model, prompt_ids: list[int], new_tokens: int, branches: int = 4, depth: int = MAX_DRAFT) -> dict:
    """Greedy decoding where each pass verifies a prompt-lookup tree (a plain step when nothing can be copied):
    tokens, forward passes (the prefill's included), and each tree's nodes, leaves and accepted drafts."""
    if not isinstance(new_tokens, int) or not 1 <= new_tokens <= model.config.max_position_embeddings - len(prompt_ids):
        raise InputError(f"new_tokens = {new_tokens!r}: it must be from 1 to the positions left after the prompt")
    cache = KVCache(model.config, 1, len(prompt_ids) + new_tokens + branches * depth + 1, model.cache_devices,
                    model.weights.dtype)
    n = len(prompt_ids)
    logits = model.forward(torch.tensor([prompt_ids]), torch.arange(n)[None], torch.ones(1, n, dtype=torch.bool),
                           cache=cache, last_only=True)
    out, passes, trees = [int(logits[0, -1].argmax())], 1, []
    while len(out) < new_tokens:
        room = new_tokens - len(out)
        tree = build_tree(out[-1], lookup_branches(prompt_ids + out, branches, min(depth, room - 1)) if room > 1
                          else [])
        past = cache.length
        new, path = walk(tree, tree_pass(model, cache, tree))
        keep_path(cache, past, path)
        passes += 1
        if len(tree["tokens"]) > 1:
            trees.append(dict(nodes=len(tree["tokens"]) - 1, leaves=tree["leaves"], accepted=len(path) - 1,
                              tree=tree if len(trees) < 8 else None))
        out += new[:room]
    return dict(tokens=out, passes=passes, trees=trees)


def tree_runs(model, prompt: str, new_tokens: int = 32, branches: int = 4, depth: int = MAX_DRAFT) -> dict:
    """Plain greedy, one-branch prompt lookup and the tree, on one prompt (no chat template): tokens, passes, and
    the widest tree verified (for drawing its mask). The tree's first branch is prompt lookup's own draft (same
    suffix, same depth), so it accepts at least as much per pass from the same text."""
    _, _, rows = model.encode_prompts(prompt, False)
    plain = model.generate(prompt, chat=False, max_new_tokens=new_tokens, stop_at_eos=False)
    line = model.generate(prompt, chat=False, max_new_tokens=new_tokens, stop_at_eos=False, draft="prompt-lookup")
    tree = tree_decode(model, rows[0], new_tokens, branches, depth)
    shown = max((t for t in tree["trees"] if t["tree"] is not None), key=lambda t: (t["leaves"], t["nodes"]),
                default=None)
    tok = model.tokenizer
    return dict(plain=plain.token_ids, plain_passes=plain.forward_passes, line=line.token_ids,
                line_passes=line.forward_passes, tree=tree["tokens"], tree_passes=tree["passes"],
                same=tree["tokens"] == plain.token_ids, trees=[{k: v for k, v in t.items() if k != "tree"}
                                                               for t in tree["trees"]],
                shown=shown and shown["tree"], pieces=shown and [tok.decode([t]) if tok else str(t)
                                                                 for t in shown["tree"]["tokens"]])
