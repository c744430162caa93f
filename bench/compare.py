#!/usr/bin/env python3
"""luong vs PyTorch, side by side, on the same model and the same shapes: one command, one Markdown table.

    python3 bench/compare.py                       # CPU: the issue's model (2 x 256, vocab 8000, batch 64 x 20)
    python3 bench/compare.py --device cuda         # GPU: the paper's model (4 x 1000, vocab 50k, batch 128 x 50)
    python3 bench/compare.py --rounds 3 --out docs/perf-run.md
    python3 bench/compare.py --torch-python "$(command -v python3),/usr/bin/python3"   # pip wheel and Debian's

Every measurement runs in a fresh process (thread pools are fixed when a process starts): luong's
bench/luong_step_bench (build it with `cmake --build <build> --target luong_step_bench`) and
bench/torch_reference/step_bench.py, alternating, so both see the same machine load. Each process reports
the median of its timed windows; with --rounds > 1 each configuration keeps its best round (the least
disturbed one on a shared machine). Ratios are luong against the best PyTorch setting.

PyTorch settings are `torch_threads:blas_threads` pairs: torch.set_num_threads(torch_threads) with
OMP/MKL/OPENBLAS_NUM_THREADS=blas_threads in the environment; `2:2p` also sets OMP_WAIT_POLICY=PASSIVE. Where
the system OpenBLAS falls back to generic kernels on this CPU, PyTorch gets the core type luong sets for itself
(bench/openblas_core.py; --torch-openblas-core none to see the fallback). luong runs with its own defaults
(framework/core/process_setup.h) unless --luong-threads is given. With --torch-python every setting runs
under each interpreter's torch, and a line per PyTorch build (version and BLAS) follows the table.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

import openblas_core  # bench/openblas_core.py (this script's directory is on sys.path)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# The caller's settings never leak into a measurement; --torch-env sets variables for PyTorch explicitly.
CLEARED_VARS = THREAD_VARS + ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_CORETYPE")


def find_luong_bench(build: str | None) -> str:
    candidates = [build] if build else ["build-torchbench", "build", "build-cuda"]
    for b in candidates:
        path = os.path.join(ROOT, b, "bench", "luong_step_bench")
        if os.path.exists(path):
            return path
    sys.exit(f"compare: luong_step_bench not found under {candidates}; build it with "
             "`cmake --build <build> --target luong_step_bench` (configure with -DLUONG_BENCH=ON) or pass --build")


def run_json(cmd, env_updates, unset=()):
    env = dict(os.environ)
    for k in unset:
        env.pop(k, None)
    env.update(env_updates)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def timing_args(a):
    return (["--warmup", str(a.warmup), "--steps", str(a.steps), "--windows", str(a.windows), "--json",
             "--precision", a.precision] + (["--freeze", a.freeze] if a.freeze else []))


def configurations(a, luong_bin):
    """(label, command, environment) for every process to run in one round."""
    dev = ["--device", a.device] + (["--preset", a.preset] if a.preset else [])
    out = []
    luong_threads = [] if a.only == "torch" else (a.luong_threads.split(",") if a.luong_threads else [None])
    for t in luong_threads:
        # Both: with OpenMP OpenBLAS, luong's process set-up calls openblas_set_num_threads(cores) when
        # OPENBLAS_NUM_THREADS is unset, which also resets OpenMP's thread count (OMP_NUM_THREADS alone
        # does not give t threads).
        env = {} if t is None else {"OMP_NUM_THREADS": t, "OPENBLAS_NUM_THREADS": t}
        graphs = ["off", "on"] if a.luong_cuda_graph == "both" else [a.luong_cuda_graph]
        for g in graphs:
            label = f"luong t{t or 'default'}" + (" graph" if g == "on" else "")
            out.append((label, [luong_bin] + dev + timing_args(a) + ["--cuda-graph", g], env))
    settings = ["0:0"] if a.device.startswith("cuda") else a.torch_settings.split(",")
    if a.only == "luong":
        settings = []
    pythons = a.torch_python.split(",") if a.torch_python else [sys.executable]
    for py in pythons:
        torch_py = [py, os.path.join(ROOT, "bench", "torch_reference", "step_bench.py")]
        for s in settings:
            passive = s.endswith("p")
            tt, bt = (int(x) for x in s.rstrip("p").split(":"))
            env = dict(a.torch_env)
            if a.torch_core and "OPENBLAS_CORETYPE" not in env:
                env["OPENBLAS_CORETYPE"] = a.torch_core
            if bt > 0:
                env.update({k: str(bt) for k in THREAD_VARS})
            if passive:  # idle OpenMP threads sleep instead of spinning (luong's own default)
                env["OMP_WAIT_POLICY"] = "PASSIVE"
            extra = ["--threads", str(tt)] if tt > 0 else []
            label = f"torch {s}" + (f" ({py})" if len(pythons) > 1 else "")
            out.append((label, torch_py + dev + extra + timing_args(a), env))
    return out


def key_value(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def fmt(x, digits=0):
    return f"{x:,.{digits}f}"


def gemm_gflop_per_step(shape):
    """The model's GEMM work in one training step, in GFLOP: forward plus the two backward GEMMs (input and
    weight gradients), 3x the forward multiply-adds x 2. General attention with input feeding, as both
    implementations run it: h_t W_a per step, scores and context over the source, W_c [c; h], generator."""
    e, h, layers, v = shape["embedding"], shape["hidden"], shape["layers"], shape["vocab"]
    b, s, t = shape["batch"], shape["src_len"], shape["tgt_len"]
    lstm = lambda rows, inp: rows * (inp * 4 * h + h * 4 * h)  # input and recurrent projections
    macs = lstm(s * b, e) + (layers - 1) * lstm(s * b, h)              # encoder
    macs += lstm(t * b, e + h) + (layers - 1) * lstm(t * b, h)         # decoder, input feeding on layer 0
    macs += t * b * (h * h + 2 * s * h)                                # attention: h W_a, scores, context
    macs += t * b * 2 * h * h + t * b * h * v                          # W_c [c; h] and the generator
    return 3 * 2 * macs / 1e9


def memory_measure(device):
    """(result key, name) of the memory the ratios compare: on a GPU the device's peak, else the peak RSS."""
    return ("peak_device_mb", "peak device memory") if device.startswith("cuda") else ("peak_rss_mb", "peak RSS")


def memory_ratio(luong, torch, key):
    return luong.get(key, float("nan")) / (torch.get(key) or float("nan"))


def table(results, device):
    luong = [r for r in results if r["framework"].startswith("luong")]
    torch = [r for r in results if r["framework"].startswith("PyTorch")]
    best_torch = max(torch, key=lambda r: r["tokens_per_s"]) if torch else None
    gpu = device.startswith("cuda")
    # With frozen parts some backward GEMMs are skipped, so the full step's GEMM work would overstate the rate.
    gflop = None if "frozen" in results[0] else gemm_gflop_per_step(results[0]["shape"])
    head = "| framework | threads / settings | target tokens/s | step (ms) | GEMM GFLOP/s | peak RSS (MB) |"
    head += " peak device memory (MB) |" if gpu else ""
    mem_key, _ = memory_measure(device)
    head += " tokens/s luong / PyTorch |" + (" device memory luong / PyTorch |" if gpu else " RSS luong / PyTorch |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in luong + torch:
        row = (f"| {r['framework']} | {r['settings']} | {fmt(r['tokens_per_s'])} | {fmt(r['step_ms'], 1)} | "
               f"{fmt(gflop / (r['step_ms'] / 1e3), 1) if gflop else '-'} | {fmt(r['peak_rss_mb'])} |")
        if gpu:
            row += f" {fmt(r.get('peak_device_mb', 0))} |"
        if r in luong and best_torch:
            row += (f" {r['tokens_per_s'] / best_torch['tokens_per_s']:.2f} |"
                    f" {memory_ratio(r, best_torch, mem_key):.2f} |")
        else:
            row += " best |  |" if r is best_torch else "  |  |"
        lines.append(row)
    return "\n".join(lines)


def best_per_torch(results, device="cpu"):
    """One line per PyTorch build measured (version and BLAS: a pip wheel and Debian's package differ): luong
    against that build's fastest setting, in speed and memory (peak RSS; on a GPU, peak device memory)."""
    gpu = device.startswith("cuda")
    mem_key, mem_name = memory_measure(device)
    luong = next((r for r in results if r["framework"].startswith("luong")), None)
    builds = {}
    for r in results:
        if r["framework"].startswith("PyTorch"):
            blas = r["settings"].split(", BLAS ", 1)[1] if ", BLAS " in r["settings"] else "BLAS unknown"
            key = r["framework"] if gpu else f"{r['framework']} ({blas})"
            if key not in builds or r["tokens_per_s"] > builds[key]["tokens_per_s"]:
                builds[key] = r
    if not luong or not builds:
        return []
    lines = ["", "Against each PyTorch build at its fastest setting:", ""]
    for key, r in builds.items():
        lines.append(f"- {key}, fastest with {r['settings'].split(', BLAS ')[0]}: luong is "
                     f"{luong['tokens_per_s'] / r['tokens_per_s']:.2f}x its target tokens/s at "
                     f"{memory_ratio(luong, r, mem_key):.2f}x its {mem_name} ({r['tokens_per_s']:,.0f} "
                     f"tokens/s, {r.get(mem_key, float('nan')):,.0f} MB).")
    return lines


def roofline(results, device, precision):
    """The step's GEMM work at the cores' measured FMA peak (luong_step_bench's cpu_fma_peak, bench/fma_peak.h):
    a floor no framework can beat on these cores, and how far each side's step is from it. Float32 only: bf16
    GEMMs on AMX tiles are not bound by the float32 FMA rate."""
    if device.startswith("cuda") or precision != "fp32" or "frozen" in results[0]:
        return []
    peak = next((r["cpu_fma_peak"] for r in results if "cpu_fma_peak" in r), None)
    if not peak or not peak.get("all_threads_gflops"):
        return []
    floor_ms = gemm_gflop_per_step(results[0]["shape"]) / peak["all_threads_gflops"] * 1e3
    luong = next((r for r in results if r["framework"].startswith("luong")), None)
    torch = [r for r in results if r["framework"].startswith("PyTorch")]
    best_torch = max(torch, key=lambda r: r["tokens_per_s"]) if torch else None
    line = (f"\nThe cores' float32 FMA peak, measured ({peak['isa']}, bench/fma_peak.h): "
            f"{peak['all_threads_gflops']:.0f} GFLOP/s on {peak['threads']} threads ({peak['one_thread_gflops']:.0f} "
            f"on one, at {peak['ghz']:.2f} GHz). At that rate the step's GEMM work alone takes {floor_ms:.0f} ms")
    parts = [f"luong's step is {r['step_ms'] / floor_ms:.2f}x that floor" for r in [luong] if r]
    if best_torch:
        parts.append(f"PyTorch's fastest {best_torch['step_ms'] / floor_ms:.2f}x")
    return [line + (": " + ", ".join(parts) if parts else "") + "."]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu, or cuda for the paper model on a GPU")
    ap.add_argument("--preset", default=None, help="cpu or paper (default: cpu on CPU, paper on CUDA)")
    ap.add_argument("--build", default=None, help="luong build directory (default: build-torchbench, build)")
    ap.add_argument("--luong-bench", default=None,
                    help="path of a luong_step_bench binary (e.g. from a packed CUDA build); overrides --build")
    ap.add_argument("--torch-settings", default="1:1,1:2,2:2,2:2p",
                    help="comma-separated torch_threads:blas_threads pairs to try on CPU; a trailing p adds "
                         "OMP_WAIT_POLICY=PASSIVE")
    ap.add_argument("--torch-python", default=None,
                    help="comma-separated Python interpreters whose torch to measure, each with every setting "
                         "(default: this one), e.g. /usr/bin/python3 for Debian's python3-torch (OpenBLAS) "
                         "beside a pip-installed one (MKL)")
    ap.add_argument("--torch-env", type=key_value, action="append", default=[], metavar="KEY=VALUE",
                    help="set in every PyTorch process (repeatable), e.g. OPENBLAS_CORETYPE=SkylakeX for a "
                         "torch on OpenBLAS 0.3.21, which does not recognise this CPU")
    ap.add_argument("--torch-openblas-core", default="auto", metavar="auto|none|CORE",
                    help="OPENBLAS_CORETYPE for PyTorch on OpenBLAS: auto (default) sets the core luong sets for "
                         "itself, only where OpenBLAS falls back to generic kernels on this CPU (SkylakeX or "
                         "Haswell); none leaves OpenBLAS's own choice; a name sets that core. --torch-env "
                         "OPENBLAS_CORETYPE=... wins over it")
    ap.add_argument("--luong-cuda-graph", choices=("off", "on", "both"), default="off",
                    help="luong's step recorded once and replayed (a CUDA graph on a GPU): off, on, or both rows")
    ap.add_argument("--luong-threads", default=None, help="comma-separated OMP_NUM_THREADS values for luong")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10, help="steps per timed window")
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="alternating rounds; each configuration keeps its best")
    ap.add_argument("--only", choices=("luong", "torch"), default=None,
                    help="run one side only (e.g. a GPU machine without PyTorch installed)")
    ap.add_argument("--precision", choices=("fp32", "tf32", "bf16"), default="fp32",
                    help="GEMM precision of both sides: fp32 (no TF32), tf32 (GPU only), or bf16 (luong's "
                         "train.precision=bf16 against torch.autocast bfloat16; on a CPU both use AMX where "
                         "the CPU has it)")
    ap.add_argument("--freeze", default="", metavar="PARTS",
                    help="a fine-tuning step: these parts' gradients off in both (luong's train.freeze names)")
    ap.add_argument("--out", default=None, help="also write the table (Markdown) to this file")
    ap.add_argument("--json-out", default=None, help="write every raw measurement (JSON) to this file")
    a = ap.parse_args()
    if a.precision == "tf32" and not a.device.startswith("cuda"):
        ap.error("--precision tf32 needs --device cuda (a CPU has no TF32 GEMMs)")

    a.torch_core = None
    if not a.device.startswith("cuda") and a.torch_openblas_core != "none":
        a.torch_core = openblas_core.torch_core_type() if a.torch_openblas_core == "auto" else a.torch_openblas_core
    luong_bin = None if a.only == "torch" else (a.luong_bench or find_luong_bench(a.build))
    configs = configurations(a, luong_bin)
    load_before = os.getloadavg()
    raw, best = [], {}
    for rnd in range(a.rounds):
        for label, cmd, env in configs:
            r = run_json(cmd, env, unset=CLEARED_VARS)
            r["round"], r["label"] = rnd, label
            raw.append(r)
            print(f"  round {rnd + 1}: {label}: {r['tokens_per_s']:.0f} tokens/s, {r['step_ms']:.1f} ms/step, "
                  f"RSS {r['peak_rss_mb']:.0f} MB", file=sys.stderr)
            if label not in best or r["tokens_per_s"] > best[label]["tokens_per_s"]:
                best[label] = r
    load_after = os.getloadavg()
    results = [best[label] for label, _, _ in configs]
    shape = results[0]["shape"]
    md = [f"Model: {shape['layers']} x {shape['hidden']} LSTM, embeddings {shape['embedding']}, vocabulary "
          f"{shape['vocab']}, general attention with input feeding; batch {shape['batch']}, source "
          f"{shape['src_len']}, target {shape['tgt_len']} tokens; SGD, clip 5, no dropout; device {a.device}, "
          f"GEMM precision {a.precision}.",
          f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, load average {load_before[0]:.1f} before / "
          f"{load_after[0]:.1f} after; {a.rounds} round(s) x {a.windows} windows x {a.steps} steps after "
          f"{a.warmup} warm-up steps; {time.strftime('%Y-%m-%d %H:%M')}.",
          f"GEMM work per step: {gemm_gflop_per_step(shape):.1f} GFLOP (forward and both backward GEMMs); the "
          f"GEMM GFLOP/s column is that work divided by the step time, to set against the machine's GEMM rate "
          f"(build/bench/engine_bench, bench/gpu_bench).", "", table(results, a.device)]
    if a.freeze:
        md.insert(3, f"Frozen: {a.freeze} ({results[0]['frozen']['parameters']:,} parameter values; gradients off in "
                     f"both frameworks), so the GEMM work above is the full step's and the GEMM column is left out.")
    md += best_per_torch(results, a.device)
    md += roofline(results, a.device, a.precision)
    imports = [r["import_rss_mb"] for r in results if "import_rss_mb" in r]
    if imports:
        md.append(f"\nPyTorch's peak RSS after `import torch` alone, before building the model: {min(imports):,.0f} MB.")
    text = "\n".join(md)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
