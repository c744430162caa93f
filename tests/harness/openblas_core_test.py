#!/usr/bin/env python3
"""bench/openblas_core.py: the benchmark gives a PyTorch on OpenBLAS the core type luong gives itself
(framework/core/process_setup.cpp), only where OpenBLAS falls back to generic kernels."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import openblas_core as oc  # noqa: E402

AVX512 = {"sse3", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl"}
AVX2 = {"sse3", "avx", "avx2", "fma"}


class OpenBlasCore(unittest.TestCase):
    def test_the_best_core_follows_the_flags(self):
        self.assertEqual(oc.best_core_for_flags(AVX512), "SkylakeX")
        self.assertEqual(oc.best_core_for_flags(AVX2), "Haswell")
        self.assertEqual(oc.best_core_for_flags(AVX512 - {"avx512bw"}), "Haswell")  # AVX-512F alone: not SkylakeX
        self.assertIsNone(oc.best_core_for_flags({"sse3", "avx"}))

    def test_only_a_generic_fallback_is_corrected(self):
        self.assertEqual(oc.core_to_set("Prescott", AVX512), "SkylakeX")
        self.assertEqual(oc.core_to_set("Sandybridge", AVX2), "Haswell")
        self.assertIsNone(oc.core_to_set("Zen", AVX2))  # a core OpenBLAS knows is its own best
        self.assertIsNone(oc.core_to_set("SkylakeX", AVX512))
        self.assertIsNone(oc.core_to_set(None, AVX512))  # no OpenBLAS found
        self.assertIsNone(oc.core_to_set("Prescott", {"sse3"}))  # nothing better to give

    def test_flags_are_read_from_cpuinfo(self):
        with tempfile.NamedTemporaryFile("w", suffix="cpuinfo", delete=False) as f:
            f.write("processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu sse3 avx2 fma\n\n")
        try:
            self.assertEqual(oc.cpu_flags(f.name), {"fpu", "sse3", "avx2", "fma"})
        finally:
            os.unlink(f.name)
        self.assertEqual(oc.cpu_flags("/nonexistent/cpuinfo"), set())


if __name__ == "__main__":
    unittest.main()
