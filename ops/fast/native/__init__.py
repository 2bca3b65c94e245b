"""Native CPU kernels: C built once per machine with its compiler, checked, and loaded with ctypes.

int8_linear.c (and simd.h, its vector helpers), one library, for x86-64 CPUs with AVX2 and FMA: the int8
weight-only product of ops/fast/quant.py ("native"), and the layout it reads: int8 rows in blocks of 8 (pack /
unpack; the file's header says why); 16 lanes wide where the CPU has AVX-512F (isa(); the same bits as the 8-wide
loops). It doubles int8 decoding's tokens/s against ATen's own int8 product (bench/RESULTS.md, "What each speed
mechanism buys").

build(folder) compiles it (-O3 -mavx2 -mfma -fopenmp -ffp-contract=off) into folder (the file name carries a hash of
the sources, the flags and the CPU), records the library's sha256 beside it, then checks it on small inputs with
known answers. The app calls build() once at start, in the background (app.py, through ui/state.py); nothing
compiles during a request. load() only hands out what build() made: it waits for a build under way and never starts
one. A file found in the folder is loaded only if the folder is private to this user and the file's sha256 is the
one recorded when this code built it: a library planted there is rebuilt over, never run. Another CPU, no compiler,
a failed build or a wrong answer: load() returns None, why_not() says why, and ops/fast/quant.py keeps ATen's
_weight_int8pack_mm.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

import torch

SOURCES = [Path(__file__).with_name("int8_linear.c")]
HEADERS = [Path(__file__).with_name("simd.h")]                       # included: part of the build's hash
FLAGS = ["-O3", "-mavx2", "-mfma", "-fopenmp", "-ffp-contract=off", "-shared", "-fPIC"]
_lock = threading.Lock()
_state: dict = {}
_built = threading.Event()          # set when a build() has finished, whatever its outcome


def _cpu() -> tuple[str, set]:
    """(model name, feature flags) from /proc/cpuinfo ("", set() where there is none)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor(), set()
    model = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "")
    flags = next((set(ln.split(":", 1)[1].split()) for ln in lines if ln.startswith("flags")), set())
    return model, flags


def library_path(folder: Path, cpu_model: str) -> Path:
    """Where build() puts the library for these sources, flags and CPU."""
    key = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES + HEADERS) + " ".join(FLAGS).encode()
                         + cpu_model.encode()).hexdigest()[:16]
    return Path(folder) / f"kernels-{key}.so"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _private(folder: Path) -> None:
    """The folder exists, belongs to this user and nobody else may write in it (made so where it is ours)."""
    folder.mkdir(parents=True, exist_ok=True)
    st = folder.stat()
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise RuntimeError(f"{folder} belongs to another user: no library is loaded from it")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        folder.chmod(0o700)


def _trusted(path: Path) -> bool:
    """The library at path is one this code built: its sha256 is the one recorded beside it at build time."""
    digest = path.with_name(path.name + ".sha256")
    try:
        return path.is_file() and digest.read_text().strip() == _sha256(path)
    except OSError:
        return False


def _compile(target: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler (cc or gcc) on PATH")
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:          # build aside, then rename: atomic
        out = Path(tmp) / target.name
        r = subprocess.run([cc, *FLAGS, *map(str, SOURCES), "-o", str(out), "-lm"], capture_output=True, text=True,
                           timeout=120)
        if r.returncode:
            raise RuntimeError(f"{cc} failed: {r.stderr.strip()[-400:]}")
        Path(tmp, target.name + ".sha256").write_text(_sha256(out))
        os.replace(out, target)
        os.replace(Path(tmp, target.name + ".sha256"), target.with_name(target.name + ".sha256"))


def _check(lib) -> None:
    """Products with known answers on packed rows, a tail of rows (N % 8) and of columns (K % 8) included, and
    unpack(pack(q)) == q."""
    g = torch.Generator().manual_seed(0)
    for M, N, K in ((1, 7, 37), (3, 21, 64), (2, 19, 45)):
        x = torch.randn(M, K, generator=g)
        q = torch.randint(-128, 128, (N, K), generator=g, dtype=torch.int8)
        s = torch.rand(N, generator=g) + 0.5
        p, back, y = torch.empty_like(q), torch.empty_like(q), torch.empty(M, N)
        lib.int8_pack(q.data_ptr(), p.data_ptr(), N, K)
        lib.int8_unpack(p.data_ptr(), back.data_ptr(), N, K)
        want = (x.double() @ q.double().T) * s.double()
        if not torch.equal(back, q):
            raise RuntimeError(f"int8_unpack(int8_pack(q)) != q for N={N}, K={K}")
        for m in range(M):                                # each row alone: the decode step's path, both widths
            for width in sorted({256, lib.int8_isa(512)}):
                lib.int8_isa(width)
                lib.int8_linear(x[m].data_ptr(), p.data_ptr(), s.data_ptr(), y[m].data_ptr(), 1, N, K)
                if not torch.allclose(y[m].double(), want[m], rtol=1e-5, atol=1e-3):
                    raise RuntimeError(f"int8_linear ({width}-bit) gave a wrong product for N={N}, K={K}")
        lib.int8_linear(x.data_ptr(), p.data_ptr(), s.data_ptr(), y.data_ptr(), M, N, K)
        if not torch.allclose(y.double(), want, rtol=1e-5, atol=1e-3):
            raise RuntimeError(f"int8_linear gave a wrong product for M={M}, N={N}, K={K}")


def expect_build() -> None:
    """A build() is on its way (the app's, started in a thread): load() waits for it rather than race it."""
    _state["pending"] = True


def build(folder: Path):
    """Compile (once per machine), check and load the library from folder; returns it, or None with why_not() set."""
    try:
        return _build(folder)
    finally:
        _built.set()


def _build(folder: Path):
    with _lock:
        if "lib" in _state:
            return _state["lib"]
        _state["lib"], _state["why"] = None, ""
        try:
            model, flags = _cpu()
            if platform.machine().lower() not in ("x86_64", "amd64") or not {"avx2", "fma"} <= flags:
                raise RuntimeError(f"needs an x86-64 CPU with AVX2 and FMA ({platform.machine()} {model})")
            folder = Path(folder)
            _private(folder)
            path = library_path(folder, model)
            if not _trusted(path):           # absent, or not the file this code built: build it (over any other)
                _compile(path)
            lib = ctypes.CDLL(str(path))
            lib.int8_linear.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long] * 3
            lib.int8_isa.argtypes, lib.int8_isa.restype = [ctypes.c_int], ctypes.c_int
            lib.int8_pack.argtypes = lib.int8_unpack.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_long] * 2
            for f in (lib.int8_linear, lib.int8_pack, lib.int8_unpack):
                f.restype = None
            _check(lib)
            _state["lib"] = lib
        except (OSError, RuntimeError, subprocess.SubprocessError) as e:
            _state["why"] = f"{type(e).__name__}: {e}"
        return _state["lib"]


def load():
    """The library build() made (waiting for a build under way or expected), or None: never builds one itself."""
    if _state.get("pending"):
        _built.wait()
    with _lock:
        if "lib" not in _state:
            _state["why"] = ("not built: ops.fast.native.build(folder) builds it "
                             "(the app does at start, in the background)")
            return None
        return _state["lib"]


def why_not() -> str:
    """Why load() returned None ("" when it did not, or has not been tried)."""
    return _state.get("why", "")


def _lib():
    lib = load()
    if lib is None:
        raise RuntimeError(f"the native int8 kernel is not available: {why_not()}")
    return lib


def isa(want: int = 0) -> int:
    """The vector width of the native int8 product: 512 (AVX-512F, where the CPU has it) or 256 (AVX2).
    isa(256) or isa(512) asks for one (bench/int8.py measures both; both give the same bits); isa(0) only says.
    The default is the widest the CPU has, so isa(512) puts it back."""
    return _lib().int8_isa(want)


def _int8_rows(q: torch.Tensor) -> None:
    if not (q.dtype == torch.int8 and q.dim() == 2 and q.is_contiguous() and q.device.type == "cpu"):
        raise ValueError("the native kernel wants int8 weights (N, K), contiguous, on the CPU")


def pack(q: torch.Tensor) -> torch.Tensor:
    """int8 rows (N, K) in row order -> the same bytes in blocks of 8 rows, the layout int8_linear reads."""
    _int8_rows(q)
    p = torch.empty_like(q)
    _lib().int8_pack(q.data_ptr(), p.data_ptr(), *q.shape)
    return p


def unpack(p: torch.Tensor) -> torch.Tensor:
    """pack's inverse: blocks of 8 rows -> row order (to read or dequantize the weights)."""
    _int8_rows(p)
    q = torch.empty_like(p)
    _lib().int8_unpack(p.data_ptr(), q.data_ptr(), *p.shape)
    return q


def int8_linear(x: torch.Tensor, p: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """y (.., N) = (x (.., K) q^T) * s by the native kernel; x in any float dtype, y in x's dtype.
    p = pack(q), (N, K) int8; s (N,) float32 and contiguous. ctypes lets go of the GIL during the call.
    Kept lean: a decode step calls it 97 times (Qwen2.5-0.5B), and each check here costs every one of them."""
    lib = _state.get("lib") or _lib()
    N, K = p.shape
    if p.dtype != torch.int8 or not p.is_contiguous() or s.dtype != torch.float32 or x.shape[-1] != K or s.shape != (N,
                                                                                                                     ):
        raise ValueError("int8_linear wants p (N, K) int8 from pack(), s float32 (N,) and x (.., K)")
    x2 = x if x.dtype == torch.float32 and x.is_contiguous() else x.float().contiguous()
    y = torch.empty(*x.shape[:-1], N)
    lib.int8_linear(x2.data_ptr(), p.data_ptr(), s.data_ptr(), y.data_ptr(), x2.numel() // K, N, K)
    return y if x.dtype == torch.float32 else y.to(x.dtype)
