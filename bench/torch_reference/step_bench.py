"""Times PyTorch training steps of the luong model (model.py) on synthetic batches.

    python3 bench/torch_reference/step_bench.py [--preset cpu|paper] [--device cpu|cuda] [--threads N] [--json]

One step = forward + summed cross-entropy + backward (of loss / tokens, the trainer's averaging) +
global-norm clip + SGD, on random token ids with fixed lengths (no padding). The model is the benchmark
model of bench/luong_step_bench.cpp with the same shapes; its parameters are uniform in [-0.1, 0.1] as
luong's. Prints the median of --windows timed windows after --warmup steps, and the peak RSS
(ru_maxrss = VmHWM) of this process; --json prints one JSON line instead (for bench/compare.py).

--freeze takes luong's train.freeze parts (encoder, encoder.embedding, encoder.lstm, decoder.embedding, decoder.lstm,
decoder.attention, decoder.combine, decoder.output, decoder) and turns those modules' gradients off
(requires_grad_(False)), as luong's trainer does for train.freeze.

Thread settings must be fixed before torch loads: run each setting in a fresh process with
OMP_NUM_THREADS / MKL_NUM_THREADS / OPENBLAS_NUM_THREADS set (compare.py does), --threads sets
torch.set_num_threads.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import sys
import time

import torch

IMPORT_RSS_MB = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # the library alone, before any work

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import LuongNmt, ModelSpec  # noqa: E402

# The benchmark shapes: `cpu` is the issue's CPU model, `paper` Luong et al.'s WMT model (GPU).
PRESETS = {
    "cpu": dict(vocab=8000, embedding=256, hidden=256, layers=2, batch=64, src_len=20, tgt_len=20),
    "paper": dict(vocab=50000, embedding=1000, hidden=1000, layers=4, batch=128, src_len=50, tgt_len=50),
}


def freeze_modules(model, spec):
    """The modules of `model` that luong's train.freeze parts in `spec` name (comma-separated)."""
    parts = {
        "encoder.embedding": [model.src_embedding], "encoder.lstm": [model.encoder],
        "decoder.embedding": [model.tgt_embedding], "decoder.lstm": [model.decoder],
        "decoder.attention": [model.attn] if model.attn is not None else [],
        "decoder.combine": [model.combine], "decoder.output": [model.output],
    }
    parts["encoder"] = parts["encoder.embedding"] + parts["encoder.lstm"]
    parts["decoder"] = [m for k, ms in parts.items() if k.startswith("decoder.") for m in ms]
    modules = []
    for item in (x.strip() for x in spec.split(",")):
        if item and item not in parts:
            sys.exit(f"step_bench: --freeze: '{item}' is none of {', '.join(sorted(parts))}")
        modules += parts.get(item, [])
    return modules


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default=None, help="default: cpu, or paper with cuda")
    ap.add_argument("--device", default="cpu")
    for k in PRESETS["cpu"]:
        ap.add_argument(f"--{k.replace('_', '-')}", type=int, default=None)
    ap.add_argument("--attention", default="general")
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--clip", type=float, default=5.0)
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's own)")
    ap.add_argument("--interop-threads", type=int, default=None)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10, help="steps per timed window")
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--freeze", default="", help="luong's train.freeze parts whose gradients are off (e.g. encoder)")
    ap.add_argument("--precision", choices=("fp32", "tf32", "bf16"), default="fp32",
                    help="as luong's train.precision: fp32 (TF32 off), tf32 (TF32 GEMMs and cuDNN; CUDA only), "
                         "bf16 (torch.autocast to bfloat16 around forward and loss; on a CPU oneDNN's bf16 kernels, "
                         "AMX where the CPU has it)")
    a = ap.parse_args()
    if a.precision == "tf32" and not a.device.startswith("cuda"):
        ap.error("--precision tf32 is for --device cuda (a CPU has no TF32 GEMMs)")
    return a


def blas_description():
    """Which BLAS this torch runs its CPU GEMMs on, read from the libraries mapped into the process: PyPI
    wheels bundle MKL, Debian's python3-torch goes through libblas.so.3 (OpenBLAS by default). For OpenBLAS
    the core its kernels were chosen for, since 0.3.21 falls back to generic kernels on CPUs it does not know."""
    torch.ones(2, 2) @ torch.ones(2, 2)  # make sure the BLAS is loaded
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if ".so" in line}
    except OSError:
        return "BLAS unknown"
    if torch.backends.mkl.is_available() or any("libmkl" in lib for lib in libs):
        return "BLAS MKL"
    openblas = sorted(lib for lib in libs if "openblas" in os.path.basename(lib) or "/openblas" in lib)
    if openblas:
        import ctypes
        for lib in openblas:
            try:
                fn = ctypes.CDLL(lib).openblas_get_corename
            except (OSError, AttributeError):
                continue
            fn.restype = ctypes.c_char_p
            return f"BLAS OpenBLAS, core {fn().decode()}"
        return "BLAS OpenBLAS"
    blas = sorted(os.path.basename(lib) for lib in libs if "blas" in os.path.basename(lib))
    return "BLAS " + (", ".join(blas) if blas else "unknown")


def synthetic_batches(shape, device, gen, count=4):
    """`count` batches of random ids in [4, vocab): no <pad>/<unk>/<s>/</s>, all sentences full length."""
    out = []
    for _ in range(count):
        src = torch.randint(4, shape["vocab"], (shape["batch"], shape["src_len"]), generator=gen)
        tgt = torch.randint(4, shape["vocab"], (shape["batch"], shape["tgt_len"]), generator=gen)
        lengths = torch.full((shape["batch"],), shape["src_len"], dtype=torch.int64)
        out.append(tuple(t.to(device) for t in (src, lengths, tgt, tgt.roll(-1, 1))))
    return out


def main():
    a = parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.interop_threads:
        torch.set_num_interop_threads(a.interop_threads)
    preset = a.preset or ("paper" if a.device.startswith("cuda") else "cpu")
    shape = dict(PRESETS[preset])
    for k in shape:
        if getattr(a, k) is not None:
            shape[k] = getattr(a, k)
    device = torch.device(a.device)
    cuda = device.type == "cuda"
    if cuda:
        torch.backends.cudnn.benchmark = True
        # fp32: float32 as luong's default GEMMs; tf32 as its train.precision=tf32.
        torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
        torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    # bf16: PyTorch's mixed precision, bfloat16 GEMMs and LSTM cells with float32 weights, as luong's
    # train.precision=bf16 runs its GEMMs (luong keeps float32 activations between them).
    def autocast():
        return (torch.autocast(device.type, dtype=torch.bfloat16) if a.precision == "bf16"
                else contextlib.nullcontext())

    torch.manual_seed(a.seed)
    spec = ModelSpec(src_vocab=shape["vocab"], tgt_vocab=shape["vocab"], embedding_size=shape["embedding"],
                     hidden_size=shape["hidden"], layers=shape["layers"], attention=a.attention)
    model = LuongNmt(spec)
    with torch.no_grad():
        for p in model.parameters():
            p.uniform_(-0.1, 0.1)
        model.src_embedding.weight[spec.pad_id].zero_()
        model.tgt_embedding.weight[spec.pad_id].zero_()
    model.to(device).train()
    frozen = sum(p.numel() for m in freeze_modules(model, a.freeze) for p in m.parameters())
    for m in freeze_modules(model, a.freeze):
        m.requires_grad_(False)
    trained = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(trained, lr=a.lr)
    gen = torch.Generator().manual_seed(a.seed)
    batches = synthetic_batches(shape, device, gen)
    tokens_per_step = shape["batch"] * shape["tgt_len"]

    def step(i):
        src, lengths, tgt_in, tgt_out = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss_sum, tokens = model.loss(model(src, lengths, tgt_in), tgt_out)
        (loss_sum / tokens).backward()
        torch.nn.utils.clip_grad_norm_(trained, a.clip)
        opt.step()

    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for i in range(a.warmup):
        step(i)
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    windows = []
    for w in range(a.windows):
        t0 = time.perf_counter()
        for i in range(a.steps):
            step(i)
        sync()
        windows.append((time.perf_counter() - t0) / a.steps)
    step_s = statistics.median(windows)
    result = {
        "framework": "PyTorch " + torch.__version__.split("+")[0],
        "device": str(device),
        "preset": preset,
        "precision": a.precision,
        "shape": shape,
        "settings": (f"torch threads {torch.get_num_threads()}, interop {torch.get_num_interop_threads()}, "
                     f"OMP {os.environ.get('OMP_NUM_THREADS', '-')}, MKL {os.environ.get('MKL_NUM_THREADS', '-')}, "
                     f"OpenBLAS {os.environ.get('OPENBLAS_NUM_THREADS', '-')}"
                     + (f", OMP_WAIT_POLICY {os.environ['OMP_WAIT_POLICY']}" if "OMP_WAIT_POLICY" in os.environ else "")
                     + ("" if cuda else f", {blas_description()}")
                     + (", cuDNN encoder, LSTMCell decoder, " + {"fp32": "no TF32", "tf32": "TF32",
                                                                      "bf16": "bf16 autocast"}[a.precision]
                        if cuda else (", bf16 autocast" if a.precision == "bf16" else ""))),
        "tokens_per_s": tokens_per_step / step_s,
        "step_ms": step_s * 1e3,
        "window_step_ms": [w * 1e3 for w in windows],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "import_rss_mb": IMPORT_RSS_MB,
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    if a.freeze:
        result["frozen"] = {"parts": a.freeze, "parameters": frozen}
    if cuda:
        result["peak_device_mb"] = torch.cuda.max_memory_allocated() / 2**20
    if a.json:
        print(json.dumps(result))
    else:
        print(f"{result['framework']} on {device}, {preset} model {shape}: {result['settings']}")
        print(f"{result['tokens_per_s']:.0f} target tokens/s, {result['step_ms']:.1f} ms/step "
              f"(windows {', '.join(f'{w:.1f}' for w in result['window_step_ms'])}), "
              f"peak RSS {result['peak_rss_mb']:.0f} MB ({result['import_rss_mb']:.0f} MB after `import torch`)")


if __name__ == "__main__":
    main()
