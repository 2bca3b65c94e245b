"""ops/fast/native loads only a library it built itself: a file planted under the expected name in the cache folder is
never loaded (its constructor never runs), it is rebuilt over; a folder another user may write in is made private;
and load() never compiles (nothing builds during a request)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from ops.fast import native

CC = shutil.which("cc") or shutil.which("gcc")
MODEL, FLAGS = native._cpu()
needs_build = pytest.mark.skipif(not CC or not {"avx2", "fma"} <= FLAGS,
                                 reason="no C compiler or no AVX2/FMA here: the library cannot be built")

PLANT = r"""
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
    FILE *f = fopen("%s", "w");
    if (f) { fputs("the planted library ran", f); fclose(f); }
}
void int8_isa(void) {}
"""


def _plant(tmp_path, target):
    """A shared object whose constructor writes a marker file, under the library's expected name."""
    src, marker = tmp_path / "plant.c", tmp_path / "ran.txt"
    src.write_text(PLANT % marker)
    subprocess.run([CC, "-shared", "-fPIC", str(src), "-o", str(target)], check=True)
    return marker


@needs_build
def test_a_planted_library_is_never_loaded(tmp_path, monkeypatch):
    folder = tmp_path / "native"
    folder.mkdir(mode=0o700)
    target = native.library_path(folder, MODEL)
    marker = _plant(tmp_path, target)
    monkeypatch.setattr(native, "_state", {})
    lib = native.build(folder)
    assert not marker.exists(), "the planted library's constructor ran"
    assert lib is not None, native.why_not()                      # rebuilt over it, and checked
    assert target.with_name(target.name + ".sha256").read_text() == native._sha256(target)


@needs_build
def test_a_planted_library_with_a_forged_digest_of_another_file_is_not_loaded(tmp_path, monkeypatch):
    folder = tmp_path / "native"
    folder.mkdir(mode=0o700)
    target = native.library_path(folder, MODEL)
    marker = _plant(tmp_path, target)
    target.with_name(target.name + ".sha256").write_text("0" * 64)          # a digest that is not this file's
    monkeypatch.setattr(native, "_state", {})
    native.build(folder)
    assert not marker.exists()


@needs_build
def test_a_folder_others_may_write_is_made_private(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setattr(native, "_state", {})
    assert native.build(folder) is not None, native.why_not()
    assert folder.stat().st_mode & 0o077 == 0


def test_load_never_builds(tmp_path, monkeypatch):
    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setattr(native, "_compile", lambda target: pytest.fail("load() compiled"))
    assert native.load() is None and "not built" in native.why_not()


@needs_build
def test_load_waits_for_an_expected_build(tmp_path, monkeypatch):
    """The app starts its build in a thread; a request that asks for the library before that thread has taken the
    lock waits for the build instead of falling back to PyTorch's kernel for good."""
    import threading

    monkeypatch.setattr(native, "_state", {})
    monkeypatch.setattr(native, "_built", threading.Event())
    native.expect_build()
    got = []
    asker = threading.Thread(target=lambda: got.append(native.load()))
    asker.start()
    asker.join(0.5)
    assert asker.is_alive() and not got                    # waiting, not answering "not built"
    native.build(tmp_path / "native")
    asker.join(60)
    assert got and got[0] is not None, native.why_not()
