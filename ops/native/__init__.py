"""Native CPU kernels: C compiled on first use with the machine's compiler, loaded with ctypes.

One kernel today: int8_linear.c, the int8 weight-only product of ops/quant.py ("native"), for x86-64 CPUs with
AVX2 and FMA. It is built once per machine into <cache>/native/ (the file name carries a hash of the source, the
flags and the CPU) with -O3 -mavx2 -mfma -fopenmp, then checked on small products with known answers. Another
CPU, no compiler, a failed build or a wrong answer: load() returns None, why_not() says why, and ops/quant.py
keeps ATen's _weight_int8pack_mm. OPERATOR_LAB_NATIVE=0 turns it off.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import torch

SOURCE = Path(__file__).with_name("int8_linear.c")
FLAGS = ["-O3", "-mavx2", "-mfma", "-fopenmp", "-shared", "-fPIC"]
_lock = threading.Lock()
_state: dict = {}


def _cpu() -> tuple[str, set]:
    """(model name, feature flags) from /proc/cpuinfo ("", set() where there is none)."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor(), set()
    model = next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "")
    flags = next((set(ln.split(":", 1)[1].split()) for ln in lines if ln.startswith("flags")), set())
    return model, flags


def _library_path(cpu_model: str) -> Path:
    from ..loading import cache_dir
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(FLAGS).encode() + cpu_model.encode()).hexdigest()[:16]
    return cache_dir() / "native" / f"int8_linear-{key}.so"


def _build(target: Path) -> None:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise RuntimeError("no C compiler (cc or gcc) on PATH")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:          # build aside, then rename: atomic
        out = Path(tmp) / target.name
        r = subprocess.run([cc, *FLAGS, str(SOURCE), "-o", str(out)], capture_output=True, text=True, timeout=120)
        if r.returncode:
            raise RuntimeError(f"{cc} failed: {r.stderr.strip()[-400:]}")
        os.replace(out, target)


def _check(fn) -> None:
    """Products with known answers, a tail of rows (N % 4) and of columns (K % 8) included."""
    g = torch.Generator().manual_seed(0)
    for M, N, K in ((1, 7, 37), (3, 13, 64)):
        x = torch.randn(M, K, generator=g)
        q = torch.randint(-128, 128, (N, K), generator=g, dtype=torch.int8)
        s = torch.rand(N, generator=g) + 0.5
        y = torch.empty(M, N)
        fn(x.data_ptr(), q.data_ptr(), s.data_ptr(), y.data_ptr(), M, N, K)
        want = (x.double() @ q.double().T) * s.double()
        if not torch.allclose(y.double(), want, rtol=1e-5, atol=1e-3):
            raise RuntimeError(f"int8_linear gave a wrong product for M={M}, N={N}, K={K}")


def load():
    """The compiled int8_linear (a ctypes function), or None where it cannot be built, or is wrong."""
    with _lock:
        if "fn" not in _state:
            _state["fn"], _state["why"] = None, ""
            try:
                if os.environ.get("OPERATOR_LAB_NATIVE", "1") == "0":
                    raise RuntimeError("turned off by OPERATOR_LAB_NATIVE=0")
                model, flags = _cpu()
                if platform.machine().lower() not in ("x86_64", "amd64") or not {"avx2", "fma"} <= flags:
                    raise RuntimeError(f"needs an x86-64 CPU with AVX2 and FMA ({platform.machine()} {model})")
                path = _library_path(model)
                if not path.exists():
                    _build(path)
                fn = ctypes.CDLL(str(path)).int8_linear
                fn.restype = None
                fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long] * 3
                _check(fn)
                _state["fn"] = fn
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                _state["why"] = f"{type(e).__name__}: {e}"
        return _state["fn"]


def why_not() -> str:
    """Why load() returned None ("" when it did not, or has not been tried)."""
    return _state.get("why", "")


def int8_linear(x: torch.Tensor, q: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """y (.., N) = (x (.., K) q^T) * s by the native kernel; x in any float dtype, y in x's dtype.
    q (N, K) int8 and contiguous, s (N,) float32 and contiguous. ctypes lets go of the GIL during the call."""
    fn = load()
    if fn is None:
        raise RuntimeError(f"the native int8 kernel is not available: {why_not()}")
    K, N = x.shape[-1], q.shape[0]
    if not (q.is_contiguous() and q.dtype == torch.int8 and s.dtype == torch.float32 and s.is_contiguous()):
        raise ValueError("int8_linear wants q int8 (N, K) and s float32 (N,), both contiguous")
    x2 = x.reshape(-1, K).float().contiguous()
    y = torch.empty(x2.shape[0], N)
    fn(x2.data_ptr(), q.data_ptr(), s.data_ptr(), y.data_ptr(), x2.shape[0], N, K)
    return y.to(x.dtype).view(*x.shape[:-1], N)
