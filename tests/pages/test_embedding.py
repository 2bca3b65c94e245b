"""Embedding page: the gather of rows from the [V, H] table, checked against F.embedding."""
from __future__ import annotations

import pytest
from apptest_utils import page_ok
from page_table import expect

PAGE = "embedding"
EXPECT = expect(PAGE)
SEED_IDS = [40, 1075, 557, 30070]            # "I like shanghai" with the Qwen2.5 tokenizer


def gather_table(at, ids):
    """The table that lists, for each position, the id whose row is taken from W_E."""
    for d in at.dataframe:
        df = d.value
        for col in df.columns:
            try:
                if [int(v) for v in df[col]] == ids:
                    return df
            except (TypeError, ValueError):
                continue
    raise AssertionError(f"no table with the ids {ids}: {[list(d.value.columns) for d in at.dataframe]}")


@pytest.mark.real
def test_embedding_real():
    at = page_ok(PAGE, prompt="I like shanghai", **EXPECT)     # the Chinese UI's own default prompt is Chinese
    assert len(gather_table(at, SEED_IDS)) == 4                 # one row taken per token
    assert any("嵌入" in x.value for x in at.title)


@pytest.mark.real
def test_embedding_real_english():
    at = page_ok(PAGE, lang="en", **EXPECT)
    gather_table(at, SEED_IDS)
    assert any("Embedding" in x.value for x in at.title)


def test_embedding_tiny(tiny_app_dense):
    at = page_ok(PAGE, source=tiny_app_dense, prompt="I like shanghai", **EXPECT)
    gather_table(at, SEED_IDS)                                  # the real tokenizer on a tiny random model


