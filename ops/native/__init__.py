"""Native CPU kernels: C compiled on first use with the machine's compiler, loaded with ctypes.

One kernel today: int8_linear.c, the int8 weight-only product of ops/quant.py ("native"), for x86-64 CPUs with
AVX2 and FMA, and the layout it reads: int8 rows in blocks of 8 (pack / unpack; the file's header says why). It is built once per machine into <cache>/native/ (the file name carries a hash of the source, the
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
        lib.int8_linear(x.data_ptr(), p.data_ptr(), s.data_ptr(), y.data_ptr(), M, N, K)
        want = (x.double() @ q.double().T) * s.double()
        if not torch.equal(back, q):
            raise RuntimeError(f"int8_unpack(int8_pack(q)) != q for N={N}, K={K}")
        if not torch.allclose(y.double(), want, rtol=1e-5, atol=1e-3):
            raise RuntimeError(f"int8_linear gave a wrong product for M={M}, N={N}, K={K}")


def load():
    """The compiled library (ctypes: int8_linear, int8_pack, int8_unpack), or None where it cannot be built, or is
    wrong."""
    with _lock:
        if "lib" not in _state:
            _state["lib"], _state["why"] = None, ""
            try:
                if os.environ.get("OPERATOR_LAB_NATIVE", "1") == "0":
                    raise RuntimeError("turned off by OPERATOR_LAB_NATIVE=0")
                model, flags = _cpu()
                if platform.machine().lower() not in ("x86_64", "amd64") or not {"avx2", "fma"} <= flags:
                    raise RuntimeError(f"needs an x86-64 CPU with AVX2 and FMA ({platform.machine()} {model})")
                path = _library_path(model)
                if not path.exists():
                    _build(path)
                lib = ctypes.CDLL(str(path))
                lib.int8_linear.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_long] * 3
                lib.int8_pack.argtypes = lib.int8_unpack.argtypes = [ctypes.c_void_p] * 2 + [ctypes.c_long] * 2
                for f in (lib.int8_linear, lib.int8_pack, lib.int8_unpack):
                    f.restype = None
                _check(lib)
                _state["lib"] = lib
            except (OSError, RuntimeError, subprocess.SubprocessError) as e:
                _state["why"] = f"{type(e).__name__}: {e}"
        return _state["lib"]


def why_not() -> str:
    """Why load() returned None ("" when it did not, or has not been tried)."""
    return _state.get("why", "")


def _lib():
    lib = load()
    if lib is None:
        raise RuntimeError(f"the native int8 kernel is not available: {why_not()}")
    return lib


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
    if p.dtype != torch.int8 or not p.is_contiguous() or s.dtype != torch.float32 or x.shape[-1] != K or s.shape != (N,):
        raise ValueError("int8_linear wants p (N, K) int8 from pack(), s float32 (N,) and x (.., K)")
    x2 = x if x.dtype == torch.float32 and x.is_contiguous() else x.float().contiguous()
    y = torch.empty(*x.shape[:-1], N)
    lib.int8_linear(x2.data_ptr(), p.data_ptr(), s.data_ptr(), y.data_ptr(), x2.numel() // K, N, K)
    return y if x.dtype == torch.float32 else y.to(x.dtype)
