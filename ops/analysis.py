"""Small analyses of a trace that the stage pages show (a page never computes on tensors itself).

Each function takes trace tensors (and, where it needs them, the model's weights through model.w) and
returns tensors or numbers; figures are drawn from these in viz/.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


def cosine_similarity(rows: torch.Tensor) -> torch.Tensor:
    """(n, H) -> (n, n): the cosine of the angle between every pair of rows."""
    unit = F.normalize(rows.float(), dim=-1)
    return unit @ unit.T


def gathered_rows(trace, b: int) -> list[dict]:
    """Row b's gather: for each real position, its id and the first numbers of the row W_E[id] it took."""
    n = trace.lengths[b]
    ids = trace.token_ids[b, :n].tolist()
    first = trace.embeddings[b, :n, :4].tolist()
    return [dict(position=s, id=ids[s], first=first[s]) for s in range(n)]
