"""Which OpenBLAS core type gives a PyTorch on OpenBLAS its best kernels on this CPU (bench/compare.py).

OpenBLAS 0.3.21 (Debian 12, the BLAS of Debian's python3-torch) does not recognise recent CPUs and falls back
to generic SSE3 kernels ("Prescott"), 2-4x slower, unless OPENBLAS_CORETYPE names a core. luong corrects this
for itself at start-up (framework/core/process_setup.cpp); the benchmark gives PyTorch the same correction, so
the two are compared at their best: the same rule, decided once from the CPU's flags and the core the system
OpenBLAS picks when left alone.
"""
from __future__ import annotations

import os
import subprocess
import sys

# Cores OpenBLAS falls back to when it does not know a CPU (as in process_setup.cpp).
GENERIC_CORES = ("Prescott", "Core2", "Nehalem", "Atom", "Katmai", "Sandybridge", "Penryn", "Dunnington")


def best_core_for_flags(flags: set[str]) -> str | None:
    """The fastest OpenBLAS core these x86 CPU flags (/proc/cpuinfo names) can run."""
    if {"avx512f", "avx512bw", "avx512vl"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Haswell"
    return None


def core_to_set(detected: str | None, flags: set[str]) -> str | None:
    """OPENBLAS_CORETYPE to set, or None: only when OpenBLAS left alone picks a generic core and the CPU can
    run a better one (a core OpenBLAS recognises, such as Zen, is its own best)."""
    if detected not in GENERIC_CORES:
        return None
    return best_core_for_flags(flags)


def cpu_flags(path: str = "/proc/cpuinfo") -> set[str]:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def detected_core(python: str = sys.executable) -> str | None:
    """The core the system OpenBLAS (libopenblas.so.0, what libblas.so.3 points to on Debian) chooses with
    OPENBLAS_CORETYPE unset, read in a fresh process; None when there is no such library."""
    probe = ("import ctypes\n"
             "lib = ctypes.CDLL('libopenblas.so.0')\n"
             "lib.openblas_get_corename.restype = ctypes.c_char_p\n"
             "print(lib.openblas_get_corename().decode())\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["OPENBLAS_NUM_THREADS"] = "1"
    try:
        p = subprocess.run([python, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return p.stdout.strip() or None


def torch_core_type() -> str | None:
    """OPENBLAS_CORETYPE for the PyTorch processes of a comparison on this machine, or None."""
    return core_to_set(detected_core(), cpu_flags())
