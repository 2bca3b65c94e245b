"""The mock interview's pure logic (content/practice_mock.py): the draw and the score, on hand-made banks whose
right answers are worked out by hand, and on the real bank without depending on its size."""
import random
from collections import Counter

import pytest

from content import practice, practice_mock as mock, texts
from ops.arith import costs


def q(qid: str, stage: str, level: int, standalone: bool = True) -> dict:
    return dict(id=qid, stage=stage, difficulty=level, standalone=standalone)


# four stages, each with three questions at each of the three levels: 36 questions
GRID = [q(f"{s}-{lv}-{k}", s, lv) for s in "abcd" for lv in (1, 2, 3) for k in range(3)]


def stages_of(ids, bank=GRID):
    by_id = {x["id"]: x for x in bank}
    return [by_id[i]["stage"] for i in ids]


def levels_of(ids, bank=GRID):
    by_id = {x["id"]: x for x in bank}
    return [by_id[i]["difficulty"] for i in ids]


@pytest.mark.parametrize("seed", range(20))
def test_draw_spreads_across_stages_and_levels(seed):
    four = mock.draw(GRID, 4, seed)
    assert sorted(stages_of(four)) == list("abcd")                  # one per stage when N = number of stages
    six = mock.draw(GRID, 6, seed)
    assert max(Counter(stages_of(six)).values()) == 2                # 6 over 4 stages: none gets a third
    assert sorted(Counter(levels_of(six)).values()) == [2, 2, 2]     # 6 over 3 levels: two each
    assert levels_of(six) == sorted(levels_of(six))                  # asked easiest first
    twelve = mock.draw(GRID, 12, seed)
    assert len(set(twelve)) == 12 and Counter(stages_of(twelve)) == Counter("aaabbbcccddd")


def test_draw_is_seeded_and_ignores_the_file_order():
    shuffled = GRID[:]
    random.Random(7).shuffle(shuffled)
    assert mock.draw(GRID, 5, 123) == mock.draw(shuffled, 5, 123)    # same seed, same interview
    draws = {tuple(mock.draw(GRID, 5, s)) for s in range(10)}
    assert len(draws) > 1                                            # a new seed is a new interview


def test_draw_levels_followups_and_small_banks():
    bank = GRID + [q("follow-up", "a", 1, standalone=False)]
    for s in range(20):
        assert "follow-up" not in mock.draw(bank, 36, s)             # a follow-up never stands alone
    assert set(levels_of(mock.draw(GRID, 8, 1, levels=[3]))) == {3}
    assert set(levels_of(mock.draw(GRID, 8, 1, levels=(1, 2)))) == {1, 2}
    assert mock.draw(GRID, 8, 1, levels=[]) and len(mock.draw(GRID, 50, 1)) == 36   # no level chosen = all
    assert mock.draw(GRID[:2], 5, 1) and len(mock.draw(GRID[:2], 5, 1)) == 2   # fewer than N: all of them
    assert mock.draw([], 5, 1) == []


def test_score_by_hand():
    asked = [q("q1", "a", 1), q("q2", "b", 1), q("q3", "a", 2), q("q4", "c", 3), q("q5", "b", 2)]
    grades = {"q1": "right", "q2": "partly", "q3": "wrong", "q4": "partly"}      # q5 not graded yet
    r = mock.score(asked, grades, order=["c", "b", "a"])
    assert r["points"] == 2.0 and r["graded"] == 4 and r["asked"] == 5         # 1 + 0.5 + 0 + 0.5
    assert r["percent"] == 50.0
    assert [(x["stage"], x["asked"], x["graded"], x["points"]) for x in r["stages"]] == [
        ("c", 1, 1, 0.5), ("b", 2, 1, 0.5), ("a", 2, 2, 1.0)]
    assert [x["id"] for x in r["review"]] == ["q2", "q3", "q4"]
    assert mock.score(asked, {})["percent"] is None
    rows = mock.breakdown(r, "en")
    assert [row["points"] for row in rows] == ["0.5 / 1", "0.5 / 1", "1 / 2"] and rows[0]["asked"] == 1


@pytest.mark.parametrize("n", mock.SIZES)
def test_draw_on_the_real_bank(n):
    items = practice.questions(texts.numbers(costs.reference_config("Qwen2.5-0.5B-Instruct")), "en")
    pool = mock.eligible(items)
    ids = mock.draw(items, n, seed=2026)
    assert len(ids) == len(set(ids)) == min(n, len(pool))
    drawn_stages = stages_of(ids, items)
    assert len(set(drawn_stages)) == min(n, len({x["stage"] for x in pool}))   # as many stages as it can reach
    assert all(x["standalone"] for x in items if x["id"] in ids)
