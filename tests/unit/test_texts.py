"""Explanation texts: complete, filled, corrected, and in our own words."""
import os
import pathlib
import re

import pytest
from conftest import SMALL

from content import texts
from content.template import fill, placeholders
from ops.arith import costs
from ops.engine.config import ModelConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = ModelConfig(**SMALL, name="tiny")


@pytest.fixture(scope="module", params=["bundled", "tiny"])
def nums(request):
    if request.param == "bundled":
        return texts.numbers(costs.load_config(ROOT / "assets/configs/qwen2.5-0.5b-instruct.json"), B=2, S=7)
    return texts.numbers(TINY, B=1, S=5)


@pytest.mark.parametrize("stage", texts.STAGES)
def test_every_text_filled(stage, nums):
    for lang in texts.LANGS:
        for level in texts.LEVELS:
            t = texts.explain(stage, lang, level, nums)
            assert len(t) > 120, (stage, lang, level, len(t))
            leftover = [p for p in placeholders(texts.template(stage, lang, level))
                        if p not in texts.in_lang(nums, lang)]
            assert not leftover


def test_missing_placeholder_raises():
    with pytest.raises(KeyError):
        texts.explain("embedding", "en", "academic", {})
    assert fill("$\\sqrt{{d}}$ = {H}", {"H": "5"}) == "$\\sqrt{d}$ = 5"


def test_stages_and_unknown():
    assert texts.stages()[0] == "overview" and "decode" in texts.stages()
    with pytest.raises(KeyError):
        texts.explain("nope", "en", "plain", {})


def test_live_numbers_not_typed():
    n = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
    t = texts.explain("embedding", "en", "academic", n)
    assert "[151936, 896]" in t and "[152064, 5120]" in t
    assert "5120" not in texts.template("embedding", "en", "academic")


def test_cheatsheet_filled():
    rows = texts.cheatsheet(texts.numbers(costs.reference_config(), B=2, S=9))
    assert len(rows) >= 10
    assert any(r["output_shape"] == "[2, 9, 5120]" for r in rows)
    assert any("[2, 9, 152064]" == r["output_shape"] for r in rows)
    assert all(r["purpose_zh"] and r["purpose_en"] for r in rows)


CORRECTIONS = [  # (stage, lang, must contain)
    ("moe", "en", "dense"), ("moe", "zh", "稠密"), ("mlp", "en", "dense"), ("mlp", "zh", "稠密"),
    ("overview", "en", "dense"), ("overview", "zh", "稠密"),
    ("tokenize", "en", "151,665"), ("tokenize", "zh", "151,665"),
    ("tokenize", "en", "[40, 1075, 557, 30070]"), ("tokenize", "zh", "[40, 1075, 557, 30070]"),
    ("tokenize", "en", "no BOS"), ("tokenize", "zh", "不加 BOS"),
    ("lm_head", "en", "Qwen2.5-32B-Instruct has tie_word_embeddings = false"),
    ("lm_head", "zh", "Qwen2.5-32B-Instruct 的 tie_word_embeddings 为 false"),
    ("attention", "en", "40 query heads"), ("attention", "zh", "40 个查询头"),
    ("attention", "en", "causal mask"), ("attention", "zh", "因果掩码"),
    ("attention", "en", "bias"), ("attention", "zh", "偏置"),
    ("attention", "en", "float32"), ("attention", "zh", "float32"),
    ("sampling", "en", "-\\infty"), ("sampling", "zh", "-\\infty"),
    ("sampling", "en", "not to zero"), ("sampling", "zh", "不是置零"),
]


@pytest.mark.parametrize("stage, lang, needle", CORRECTIONS)
def test_corrections_present(stage, lang, needle):
    n = texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct"))
    body = "\n".join(texts.explain(stage, lang, lv, n) for lv in texts.LEVELS)
    assert needle in body, (stage, lang, needle)


# ---- own words: the team hook's rule -------------------------------------------------------
def _seeds_dir():
    env = os.environ.get("OPERATOR_LAB_SEEDS")
    for d in ([pathlib.Path(env)] if env else []) + [ROOT.parent / "shared" / "seeds"]:
        if d.is_dir() and list(d.glob("*.txt")):
            return d
    return None


def test_no_run_shared_with_seeds():
    seeds = _seeds_dir()
    if seeds is None:
        pytest.skip("seed articles not found (../shared/seeds or $OPERATOR_LAB_SEEDS); overlap not checked")
    ws, cjk, N = re.compile(r"\s+"), re.compile(r"[\u4e00-\u9fff]"), 20
    s = ws.sub("", "".join(p.read_text("utf-8") for p in sorted(seeds.glob("*.txt"))))
    runs = {s[i:i + N] for i in range(len(s) - N + 1)}
    files = [p for p in (ROOT / "assets").rglob("*") if p.is_file() and p.suffix in {".md", ".json", ".txt"}]
    files += sorted((ROOT / "content").glob("*.py"))
    hits = {}
    for p in files:
        f = ws.sub("", p.read_text("utf-8"))
        for i in range(len(f) - N + 1):
            r = f[i:i + N]
            if r in runs and len(cjk.findall(r)) >= N // 2:
                hits.setdefault(str(p.relative_to(ROOT)), r)
    assert not hits, f"text copied from the seed articles: {hits}"


def test_decode_text_gives_this_runs_kv_cache_in_both_dtypes():
    """The KV cache of this run's tokens is said at 2 bytes (bf16) and at 4 (float32, the cache of the CPU's float32
    and int8 decoding), each from ops/arith/costs.py: the float32 figure twice the bf16 one."""
    c = costs.load_config(ROOT / "assets/configs/qwen2.5-0.5b-instruct.json")
    nums = texts.numbers(c, B=2, S=7)                                   # 14 tokens x 12,288 B (bf16)
    assert nums["kv_run"] == costs.human(2 * 24 * 2 * 64 * 2 * 14, "B")
    assert nums["kv_run_fp32"] == costs.human(2 * 24 * 2 * 64 * 4 * 14, "B")
    for lang in texts.LANGS:
        text = texts.explain("decode", lang, "academic", nums)
        assert nums["kv_run"] in text and nums["kv_run_fp32"] in text and "float32" in text


def test_cheatsheet_numbers_the_steps_as_the_overview_table_does():
    """The overview page shows the academic table (7 steps, the decoder layers as step 3) above the cheat sheet (one row
    per operator): a row's number must name the same step in both, so the layers' operators are 3.1, 3.2, ..."""
    import re
    rows = texts.cheatsheet(texts.numbers(costs.reference_config(), B=1, S=4))
    for lang in ("en", "zh"):
        table = texts.template("overview", lang, "academic")
        steps = {int(n): op for n, op in re.findall(r"^\| (\d+) \| ([^|]+)\|", table, re.M)}
        assert sorted(steps) == list(range(1, 8))
        assert {int(str(r["step"]).split(".")[0]) for r in rows} == set(steps)
        by_step = {str(r["step"]): r["operator"] for r in rows}
        assert "RMSNorm" in by_step["4"] and "RMSNorm" in steps[4] and "LM head" in by_step["5"] and "LM head" in steps[5]
        assert all(str(r["step"]).startswith("3.") for r in rows if "Residual" in r["operator"])


def test_lm_head_tying_text_names_the_loaded_model_beside_its_twin():
    """Walk leftover (issue 48): with Qwen2.5-Coder-0.5B-Instruct loaded, the LM head's plain text said only
    'Qwen2.5-0.5B-Instruct officially shares one table', a model the student never loaded. The twin (the published
    config of the same shapes) is now named as such, beside the loaded model's own name."""
    from content import facts
    twin = costs.reference_config("Qwen2.5-0.5B-Instruct")
    coder = twin.replace(name="Qwen2.5-Coder-0.5B-Instruct")
    out = facts.sentences(coder, None, lm_head_stored=True, fmt=lambda n: f"{n:,}")
    for lang in ("en", "zh"):
        assert "Qwen2.5-Coder-0.5B-Instruct" in out[f"tie_plain_{lang}"] and "Qwen2.5-0.5B-Instruct" in out[f"tie_plain_{lang}"]
        assert "Qwen2.5-Coder-0.5B-Instruct" in out[f"tie_sentence_{lang}"]
