"""A small, bounded version of bench/load_test.py for CI: concurrent browser sessions on one server,
each with its own prompt; no failures, no session sees another's prompt. Loopback only."""
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.real, pytest.mark.browser]
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


def test_concurrent_sessions_stay_apart():
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian chromium is not installed")
    pytest.importorskip("playwright.async_api")
    import load_test

    summary = load_test.run(sessions=4, timeout_s=300, write=False)
    assert summary["leaks"] == 0, summary["fail_list"]
    assert summary["failures"] == 0, [f"{f['page']} s{f['session']}: {f['why']}" for f in summary["fail_list"]]
    assert summary["pages"] == 4 * len(load_test.PAGES)
