"""Where the native library did not build, the sidebar says int8 decoding uses PyTorch's kernel, and why."""
from apptest_utils import open_page, texts


def test_the_sidebar_says_why_int8_uses_pytorch(monkeypatch, tiny_app_dense):
    from ops.fast import native

    monkeypatch.setitem(native._state, "why", "RuntimeError: needs an x86-64 CPU with AVX2 and FMA (planted)")
    at = open_page("embedding", source=tiny_app_dense, lang="en", folds=False)
    assert "int8 decoding here uses PyTorch's own kernel" in texts(at) and "(planted)" in texts(at)
