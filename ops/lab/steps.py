"""A long computation's progress, reported by the work itself, not by a timer.

The computation declares its steps up front (a name from NAMES, the fields its text needs, and how many units
it takes: one per layer for a forward pass), then reports as it goes; the caller's callback
report(done, total, step, fields) is called when a step begins and after each of its units, in order, done
counting units over the whole plan (0 .. total). The words for each step name are in assets/words/waits.*.json.

    plan = Plan([Step("run", L, {"dtype": "float32"})], report)
    model.trace_ids(rows, on_layer=plan.layers(0))       # reports layer by layer
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Report = Callable[[int, int, str, dict], None]
# every step name a plan may hold
NAMES = ("weights", "run", "trace", "edit", "atlas_run", "atlas_maps", "atlas_scores")


@dataclass(frozen=True)
class Step:
    name: str
    units: int = 1
    fields: dict = field(default_factory=dict)


class Plan:
    """Steps in order, and where the work is among them."""

    def __init__(self, steps: list[Step], report: Report | None = None):
        unknown = [s.name for s in steps if s.name not in NAMES]
        if unknown:
            raise ValueError(f"unknown step names {unknown}: add them to ops.lab.steps.NAMES and assets/words/waits")
        self.steps, self.report = list(steps), report
        self.base = [sum(s.units for s in self.steps[:k]) for k in range(len(self.steps))]
        self.total = sum(s.units for s in self.steps)
        self.done = 0
        self._said: tuple | None = None      # the last (step, done) reported: a repeat is not reported again

    def at(self, k: int, units: int):
        """Step k has done `units` of its units (0 when it begins); the same point twice is reported once (a session
        polling a shared pass, classroom/tracer.py, may see the same layer several times)."""
        self.done = self.base[k] + min(units, self.steps[k].units)
        if self.report is not None and self._said != (k, self.done):
            self._said = (k, self.done)
            s = self.steps[k]
            self.report(self.done, self.total, s.name, dict(s.fields))

    def finish(self, k: int):
        """Step k is done (reported unless its last unit already was)."""
        if self.done < self.base[k] + self.steps[k].units:
            self.at(k, self.steps[k].units)

    def run(self, k: int, compute: Callable):
        """compute() as step k: reported as it begins and when it is done."""
        self.at(k, 0)
        value = compute()
        self.at(k, self.steps[k].units)
        return value

    def parts(self, k: int) -> Callable[[int, int], None]:
        """Step k begins; the callback on_part(done, total) moves it to the same share of its units (reported only
        when that share has grown)."""
        self.at(k, 0)

        def on_part(done: int, total: int):
            units = self.steps[k].units * done // max(total, 1)
            if self.base[k] + units > self.done:
                self.at(k, units)
        return on_part

    def layers(self, k: int) -> Callable[[int], None]:
        """Step k begins; the callback a forward pass calls after layer i (on_layer) reports i + 1 units."""
        self.at(k, 0)
        return lambda i: self.at(k, i + 1)


def trace_plan(model, report: Report | None, text: str = "") -> tuple[Plan, Callable[[int], None]]:
    """One forward pass of a prompt, layer by layer: the plan and the on_layer callback to hand the pass."""
    plan = Plan([Step("trace", model.config.num_hidden_layers, {"prompt": text})], report)
    return plan, plan.layers(0)
