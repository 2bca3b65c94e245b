"""classroom.jobs.decode_to_end: every step is taken, and the text is drawn at most once per interval on the way
(the Generate page's "Run to the end"), on a clock the test controls."""
from __future__ import annotations

from classroom import jobs


class FakeDecoder:
    def __init__(self, n: int, clock: list, step_s: float):
        self.left, self.clock, self.step_s, self.steps = n, clock, step_s, 0

    @property
    def done(self) -> bool:
        return self.left == 0

    def advance(self):                       # one forward pass (classroom.jobs.decode_step calls it)
        self.left -= 1
        self.steps += 1
        self.clock[0] += self.step_s


def run(n: int, step_s: float, every: float, monkeypatch) -> tuple[FakeDecoder, list]:
    clock, drawn = [0.0], []
    monkeypatch.setattr(jobs.time, "perf_counter", lambda: clock[0])
    d = FakeDecoder(n, clock, step_s)
    jobs.decode_to_end(d, lambda: drawn.append(d.steps), every=every)
    return d, drawn


def test_draws_at_most_once_per_interval_and_takes_every_step(monkeypatch):
    d, drawn = run(10, 0.1, 0.2, monkeypatch)                  # 30 ms a token would be drawn every 7th
    assert d.steps == 10 and d.done
    assert drawn == [3, 6, 9]                                   # past 0.2 s after 3 steps, then again 3 later


def test_a_slow_decoder_is_drawn_every_step(monkeypatch):
    d, drawn = run(4, 0.5, 0.2, monkeypatch)                    # float32 on a slow machine: each token shows
    assert drawn == [1, 2, 3, 4]
