"""Parity check: recompute a luong training step in PyTorch and compare loss, gradients and the update.

    python3 bench/torch_reference/parity.py step.h5 [--tol 1e-5] [--quiet]

step.h5 comes from `luong dump-step` (launch/cmd_dump_step.cpp): the initial parameters, a batch, luong's
summed loss, its gradient of every parameter, and the parameters after the trainer's update (gradient /
tokens, global-norm clip, one optimizer step). The torch model (model.py) is loaded with the same
parameters and runs the same batch in the file's dtype.

Error measure, per tensor: max|luong - torch| / max(max|luong|, max|torch|, 1e-3), i.e. the worst element
relative to the tensor's scale. The check passes when the loss, every gradient, the gradient norm and every
updated parameter are within --tol. Exit status: 0 pass, 1 mismatch, 77 when torch or h5py is missing.
"""
from __future__ import annotations

import argparse
import os
import sys

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:  # the parity test skips on this status
    print(f"parity: skipped, {e}", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import (LuongNmt, hh_biases, load_luong_parameters, luong_gradients, luong_parameters,  # noqa: E402
                   parameter_map, read_group, spec_from_checkpoint)


def rel_err(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = max(float(np.abs(a).max(initial=0.0)), float(np.abs(b).max(initial=0.0)), 1e-3)
    return float(np.abs(a - b).max(initial=0.0)) / scale


def luong_update(model: LuongNmt, tokens: int, optimizer: str, lr: float, clip_norm: float) -> float:
    """The trainer's update on the torch model: gradients / tokens, luong's clip (scale by
    clip / (norm + 1e-12) when norm > clip), one SGD step. Returns the norm before clipping.
    Only luong's parameters take part: bias_hh (a duplicate of bias_ih's gradient) would count twice."""
    params = [get() for get, _ in parameter_map(model).values()]
    with torch.no_grad():
        for p in params:
            p.grad.div_(tokens)
        norm = float(torch.sqrt(sum((p.grad.double() ** 2).sum() for p in params)))
        if clip_norm > 0 and norm > clip_norm:
            for p in params:
                p.grad.mul_(clip_norm / (norm + 1e-12))
        if optimizer == "sgd":
            torch.optim.SGD(params, lr=lr).step()
    return norm


def check(path: str, tol: float, quiet: bool) -> bool:
    with h5py.File(path, "r") as f:
        params = read_group(f, "model")
        grads = read_group(f, "grad")
        updated = read_group(f, "updated")
        batch = {k: torch.from_numpy(v) for k, v in read_group(f, "batch").items()}
        spec = spec_from_checkpoint(f, params)
        luong_loss = float(f["step/loss"][()])
        luong_tokens = int(f["step/tokens"][()])
        luong_norm = float(f["step/grad_norm"][()])
        optimizer = f["spec/optimizer"][()].decode()
        lr, clip = float(f["spec/lr"][()]), float(f["spec/clip_norm"][()])
        dtype_name = f.attrs.get("dtype", "float32")
        dtype_name = dtype_name.decode() if isinstance(dtype_name, bytes) else str(dtype_name)
    dtype = torch.float64 if dtype_name == "float64" else torch.float32

    torch.manual_seed(0)
    model = LuongNmt(spec).to(dtype=dtype)
    load_luong_parameters(model, params)
    logits = model(batch["src"], batch["src_lengths"], batch["tgt_in"])
    loss, tokens = model.loss(logits, batch["tgt_out"])
    loss.backward()

    rows = [("loss", "()", abs(luong_loss), rel_err(luong_loss, loss.item()))]
    if tokens != luong_tokens:
        print(f"parity: token count differs: luong {luong_tokens}, torch {tokens}")
        return False
    # bias_hh is not a luong parameter, but its gradient must equal bias_ih's (both are dL/dz).
    torch_grads = luong_gradients(model)
    for name in sorted(grads):
        rows.append((f"grad {name}", str(grads[name].shape), float(np.abs(grads[name]).max(initial=0.0)),
                     rel_err(grads[name], torch_grads[name])))
    for b in hh_biases(model):
        assert b.grad is not None and float(b.grad.abs().max()) > 0, "bias_hh received no gradient"

    norm = luong_update(model, tokens, optimizer, lr, clip)
    rows.append(("grad_norm", "()", luong_norm, rel_err(luong_norm, norm)))
    if optimizer == "sgd":
        after = luong_parameters(model)
        for name in sorted(updated):
            rows.append((f"updated {name}", str(updated[name].shape), float(np.abs(updated[name]).max()),
                         rel_err(updated[name], after[name])))
            if dtype == torch.float64:  # the step itself, free of the parameters' magnitude
                rows.append((f"delta {name}", str(updated[name].shape),
                             float(np.abs(updated[name] - params[name]).max()),
                             rel_err(updated[name] - params[name], after[name] - params[name])))
    else:
        print(f"parity: optimizer '{optimizer}' not reproduced; the update is not compared")

    worst = max(rows, key=lambda r: r[3])
    ok = worst[3] <= tol
    if not quiet:
        print(f"| {path} ({dtype_name}, {spec.attention}, {spec.layers} x {spec.hidden_size}, "
              f"input feeding {spec.input_feeding}) | shape | max abs (luong) | rel. error |")
        print("|---|---|---|---|")
        for name, shape, mag, err in rows:
            print(f"| {name} | {shape} | {mag:.4g} | {err:.2e}{'' if err <= tol else '  **FAIL**'} |")
    print(f"parity {'PASS' if ok else 'FAIL'}: {path}: loss luong {luong_loss:.9g} torch {loss.item():.9g} over "
          f"{tokens} tokens; {len(rows)} comparisons, worst {worst[0]} rel. error {worst[3]:.2e} (tol {tol:g})")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="files written by `luong dump-step`")
    ap.add_argument("--tol", type=float, default=None,
                    help="max relative error (default 1e-5 for float32 files, 1e-10 for float64)")
    ap.add_argument("--quiet", action="store_true", help="only the summary line per file")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ok = True
    for path in args.files:
        with h5py.File(path, "r") as f:
            d = f.attrs.get("dtype", "float32")
        d = d.decode() if isinstance(d, bytes) else str(d)
        tol = args.tol if args.tol is not None else (1e-10 if d == "float64" else 1e-5)
        ok = check(path, tol, args.quiet) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
