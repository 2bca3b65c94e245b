"""The practice page's mock interview, as pure logic (no streamlit, no model): which N questions of the bank one
interview asks, and what a session of self-grades scores.

draw() spreads the questions across stages and difficulty levels: the stages take turns in an order the seed
shuffles, and each stage gives the question whose level has been drawn least so far. The same bank, N, levels and
seed give the same draw, so a rerun of the page keeps the interview; a new seed is a new interview. The questions
are then asked easiest first, as an interviewer warms up.

score() counts right = 1, partly = 0.5, wrong = 0 (GRADES), per stage too, and lists what to review (every question
not graded right). Questions are the rendered dicts of content.practice.questions() (id, stage, difficulty, ...).
"""
from __future__ import annotations

import random
from collections import Counter

from content.practice_bank import stage_title

SIZES = (5, 10, 15)                                   # how many questions an interview asks
LEVELS = (1, 2, 3)                                    # difficulty: 1 recall .. 3 derive or reason across stages
GRADES = {"right": 1.0, "partly": 0.5, "wrong": 0.0}  # a self-grade and the points it earns
GRADE_LABELS = {"right": ("✓ 答对了", "✓ Right"), "partly": ("◐ 部分对", "◐ Partly"), "wrong": ("✗ 答错了", "✗ Wrong")}


def eligible(bank: list[dict], levels=None) -> list[dict]:
    """The questions an interview may ask: those that stand alone (not a follow-up), at the chosen levels (all when
    levels is empty or None)."""
    return [q for q in bank if q.get("standalone", True) and (not levels or q["difficulty"] in levels)]


def draw(bank: list[dict], n: int, seed: int, levels=None) -> list[str]:
    """The ids of min(n, eligible) distinct questions, spread across stages and levels (see the module's note)."""
    rng = random.Random(seed)
    by_stage: dict[str, list[dict]] = {}
    for q in sorted(eligible(bank, levels), key=lambda q: q["id"]):     # by id: the file order does not matter
        by_stage.setdefault(q["stage"], []).append(q)
    for qs in by_stage.values():
        rng.shuffle(qs)
    turns = sorted(by_stage)
    rng.shuffle(turns)
    drawn, count = [], Counter()
    while len(drawn) < n and any(by_stage.values()):
        for stage in turns:
            if len(drawn) == n or not by_stage[stage]:
                continue
            q = min(by_stage[stage], key=lambda q: count[q["difficulty"]])   # the first such: the shuffle decides ties
            by_stage[stage].remove(q)
            count[q["difficulty"]] += 1
            drawn.append(q)
    return [q["id"] for q in sorted(drawn, key=lambda q: q["difficulty"])]


def points(grades) -> float:
    """The points of a list of grades ("right", "partly", "wrong")."""
    return sum(GRADES[g] for g in grades)


def score(asked: list[dict], grades: dict[str, str], order=()) -> dict:
    """The session's score. asked: the interview's questions; grades: id -> grade for those graded so far;
    order: stage keys in the order the breakdown lists them (others after, by name).
    {points, graded, asked, percent (of the graded; None before any), stages: [{stage, asked, graded, points}],
    review: the questions graded partly or wrong, in the order asked}."""
    rank = {s: i for i, s in enumerate(order)}
    stages: dict[str, dict] = {}
    for q in asked:
        row = stages.setdefault(q["stage"], dict(stage=q["stage"], asked=0, graded=0, points=0.0))
        row["asked"] += 1
        if q["id"] in grades:
            row["graded"] += 1
            row["points"] += GRADES[grades[q["id"]]]
    graded = [grades[q["id"]] for q in asked if q["id"] in grades]
    total = points(graded)
    return dict(points=total, graded=len(graded), asked=len(asked),
                percent=100 * total / len(graded) if graded else None,
                stages=sorted(stages.values(), key=lambda r: (rank.get(r["stage"], len(rank)), r["stage"])),
                review=[q for q in asked if grades.get(q["id"]) in ("partly", "wrong")])


def breakdown(result: dict, lang: str) -> list[dict]:
    """score()'s per-stage rows as the page's table shows them: the stage's title, questions asked, points."""
    zh = lang == "zh"
    return [{("阶段" if zh else "stage"): stage_title(r["stage"], lang), ("题数" if zh else "asked"): r["asked"],
             ("得分" if zh else "points"): f"{r['points']:g} / {r['graded']}"} for r in result["stages"]]
