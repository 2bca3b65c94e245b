"""bench/gpu.py, ready for a GPU: it skips cleanly without one, its --cpu-smoke run goes through every measurement on
both models (the bundled one and 32B's place), and it writes its table between its markers in a results file,
replacing its own earlier table and nothing else."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gpu.py"
sys.path.insert(0, str(ROOT / "bench"))


def run(*args, timeout=600):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the script would run for real")
def test_without_a_gpu_it_says_so_and_exits_0(tmp_path):
    results = tmp_path / "RESULTS.md"
    r = run("--results", str(results))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "no GPU: skipped" in r.stdout
    assert not results.exists()


@pytest.mark.real
def test_cpu_smoke_measures_both_models_and_writes_its_table(tmp_path, bundled):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\nsomething measured before\n")
    r = run("--cpu-smoke", "--quick", "--results", str(results))
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    out = r.stdout
    for want in ("(real weights)", "Qwen2.5-32B-Instruct shapes", "prefill 32 tokens", "fast path", "eager",
                 "capture filter", "% of bound"):
        assert want in out, want
    text = results.read_text()
    assert text.startswith("# Benchmark results\n\nsomething measured before\n")
    assert text.count("<!-- bench/gpu.py: begin -->") == 1 and "CPU smoke run, no GPU" in text and "Host nproc" in text
    first = text
    r = run("--cpu-smoke", "--quick", "--models", "32b", "--results", str(results))
    assert r.returncode == 0, r.stderr[-2000:]
    text = results.read_text()
    assert text.count("<!-- bench/gpu.py: begin -->") == 1 and text.count("<!-- bench/gpu.py: end -->") == 1
    assert "(real weights)" not in text and "(real weights)" in first      # the second run's table replaced the first
    assert text.startswith("# Benchmark results\n\nsomething measured before\n")


def test_write_results_replaces_only_between_the_markers(tmp_path):
    import gpu

    path = tmp_path / "R.md"
    path.write_text("head\n\ntail\n")
    gpu.write_results(path, "table one")
    gpu.write_results(path, "table two $1 \\1")                      # no regex escapes are read in the text
    text = path.read_text()
    assert text == f"head\n\ntail\n\n{gpu.BEGIN}\ntable two $1 \\1\n{gpu.END}\n"
