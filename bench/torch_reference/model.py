"""The luong NMT model written in PyTorch, for the side-by-side benchmark and the parity check.

Same computation as models/nmt (Luong, Pham, Manning 2015): source embeddings -> stacked LSTM encoder;
target embeddings with input feeding ([emb; h~_{t-1}]) -> stacked LSTM decoder started from the encoder's
final states; global attention (`general`: score = h_t^T W_a h_s, or `dot`), softmax over the unpadded
source; h~_t = tanh(W_c [c_t; h_t]); logits = W_s h~_t + b_s; summed cross-entropy ignoring <pad>.

The encoder is one fused nn.LSTM (cuDNN on a GPU), the decoder runs nn.LSTMCell step by step (input
feeding makes each step depend on the previous one). Dropout is not modelled: the comparison runs without it.

`load_luong_checkpoint` / `load_luong_parameters` map a luong HDF5 checkpoint (docs/CHECKPOINT.md) into
this model. Layout differences: luong stores Linear and LSTM weights as (in, out), PyTorch as (out, in);
luong has one bias per LSTM layer where PyTorch has bias_ih + bias_hh (bias_hh is set to zero). Gate order
is (i, f, g, o) in both.

Only PyTorch, numpy and h5py are needed; luong itself never uses this file.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclasses.dataclass
class ModelSpec:
    src_vocab: int
    tgt_vocab: int
    embedding_size: int = 256
    hidden_size: int = 256
    layers: int = 2
    attention: str = "general"  # general | dot
    input_feeding: bool = True
    pad_id: int = 0


class LuongNmt(nn.Module):
    def __init__(self, spec: ModelSpec):
        super().__init__()
        if spec.attention not in ("general", "dot"):
            raise ValueError(f"torch reference: attention '{spec.attention}' is not modelled (general, dot)")
        self.spec = spec
        E, H, L = spec.embedding_size, spec.hidden_size, spec.layers
        self.src_embedding = nn.Embedding(spec.src_vocab, E, padding_idx=spec.pad_id)
        self.encoder = nn.LSTM(E, H, num_layers=L)  # time-major (S, B, E)
        self.tgt_embedding = nn.Embedding(spec.tgt_vocab, E, padding_idx=spec.pad_id)
        first_in = E + H if spec.input_feeding else E
        self.decoder = nn.ModuleList([nn.LSTMCell(first_in if l == 0 else H, H) for l in range(L)])
        self.attn = nn.Linear(H, H, bias=False) if spec.attention == "general" else None  # W_a (eq. 8)
        self.combine = nn.Linear(2 * H, H, bias=False)  # W_c (eq. 5)
        self.output = nn.Linear(H, spec.tgt_vocab)  # W_s, b_s (eq. 6)

    def encode(self, src, src_lengths):
        """src (B, S) int64, src_lengths (B) int64 -> memory (B, S, H), mask (B, S) bool, [(h, c)] per layer."""
        B, S = src.shape
        emb = self.src_embedding(src.t())  # (S, B, E)
        if bool((src_lengths == S).all()):
            out, (h, c) = self.encoder(emb)
        else:  # padded positions must not enter the state: pack, as luong carries the state past a length
            packed = nn.utils.rnn.pack_padded_sequence(emb, src_lengths.cpu(), enforce_sorted=False)
            out, (h, c) = self.encoder(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, total_length=S)
        mask = torch.arange(S, device=src.device)[None, :] < src_lengths.to(src.device)[:, None]
        return out.transpose(0, 1), mask, [(h[l], c[l]) for l in range(self.spec.layers)]

    def forward(self, src, src_lengths, tgt_in):
        """src (B, S), src_lengths (B), tgt_in (B, T) -> logits (T, B, V), time-major as luong's."""
        memory, mask, states = self.encode(src, src_lengths)
        B, T = tgt_in.shape
        emb = self.tgt_embedding(tgt_in.t())  # (T, B, E)
        feed = memory.new_zeros(B, self.spec.hidden_size)  # h~_0 = 0
        outs = []
        for t in range(T):
            x = torch.cat([emb[t], feed], 1) if self.spec.input_feeding else emb[t]
            new_states = []
            for cell, state in zip(self.decoder, states):
                h, c = cell(x, state)
                new_states.append((h, c))
                x = h
            states = new_states
            q = self.attn(h) if self.attn is not None else h  # (B, H): h_t^T W_a, then dot with each h_s
            scores = torch.bmm(memory, q.unsqueeze(2)).squeeze(2)  # (B, S)
            weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)
            context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)  # (B, H)
            feed = torch.tanh(self.combine(torch.cat([context, h], 1)))
            outs.append(feed)
        return self.output(torch.stack(outs))  # (T, B, V)

    def loss(self, logits, tgt_out):
        """logits (T, B, V), tgt_out (B, T) -> summed cross-entropy over non-pad targets, token count."""
        targets = tgt_out.t().reshape(-1)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets, ignore_index=self.spec.pad_id,
                               reduction="sum")
        return loss, int((targets != self.spec.pad_id).sum())


# ---- luong parameter names <-> torch tensors ------------------------------------------------------------

def parameter_map(model: LuongNmt):
    """luong checkpoint name (without 'model/') -> (getter of the torch tensor, transpose?).

    An LSTM bias maps to bias_ih; bias_hh is kept at zero by load_luong_parameters."""
    m, spec = model, model.spec
    entries = {
        "encoder/embedding/weight": (lambda: m.src_embedding.weight, False),
        "decoder/embedding/weight": (lambda: m.tgt_embedding.weight, False),
        "decoder/combine/weight": (lambda: m.combine.weight, True),
        "decoder/output/weight": (lambda: m.output.weight, True),
        "decoder/output/bias": (lambda: m.output.bias, False),
    }
    if m.attn is not None:
        entries["decoder/attention/score/weight"] = (lambda: m.attn.weight, True)
    for l in range(spec.layers):
        enc = m.encoder
        entries[f"encoder/lstm/{l}/weight_ih"] = (lambda l=l: getattr(enc, f"weight_ih_l{l}"), True)
        entries[f"encoder/lstm/{l}/weight_hh"] = (lambda l=l: getattr(enc, f"weight_hh_l{l}"), True)
        entries[f"encoder/lstm/{l}/bias"] = (lambda l=l: getattr(enc, f"bias_ih_l{l}"), False)
        cell = m.decoder[l]
        entries[f"decoder/lstm/{l}/weight_ih"] = (lambda c=cell: c.weight_ih, True)
        entries[f"decoder/lstm/{l}/weight_hh"] = (lambda c=cell: c.weight_hh, True)
        entries[f"decoder/lstm/{l}/bias"] = (lambda c=cell: c.bias_ih, False)
    return entries


def hh_biases(model: LuongNmt):
    """PyTorch's second LSTM bias of every layer: luong has none, so these stay zero."""
    out = [getattr(model.encoder, f"bias_hh_l{l}") for l in range(model.spec.layers)]
    return out + [cell.bias_hh for cell in model.decoder]


def to_luong_layout(tensor: torch.Tensor, transpose: bool) -> np.ndarray:
    t = tensor.detach().cpu()
    return (t.t() if transpose else t).contiguous().numpy()


def load_luong_parameters(model: LuongNmt, arrays: dict):
    """Copies luong parameters {name without 'model/': ndarray in luong layout} into the model. Every
    parameter of the model must be given with the right shape, and no unknown name may be left over."""
    pmap = parameter_map(model)
    unknown = sorted(set(arrays) - set(pmap))
    missing = sorted(set(pmap) - set(arrays))
    if unknown or missing:
        raise ValueError(f"luong checkpoint does not match the torch model: unknown {unknown}, missing {missing}")
    with torch.no_grad():
        for name, (get, transpose) in pmap.items():
            dest = get()
            src = torch.from_numpy(np.ascontiguousarray(arrays[name]))
            src = src.t() if transpose else src
            if tuple(src.shape) != tuple(dest.shape):
                raise ValueError(f"parameter '{name}': luong shape {tuple(arrays[name].shape)} does not map "
                                 f"onto torch shape {tuple(dest.shape)}")
            dest.copy_(src.to(dest.dtype))
        for b in hh_biases(model):
            b.zero_()


def luong_gradients(model: LuongNmt) -> dict:
    """The model's gradients in luong's names and layout (bias_ih's gradient equals bias_hh's)."""
    return {name: to_luong_layout(get().grad, transpose) for name, (get, transpose) in parameter_map(model).items()}


def luong_parameters(model: LuongNmt) -> dict:
    return {name: to_luong_layout(get(), transpose) for name, (get, transpose) in parameter_map(model).items()}


def _attention_from_config(yaml_text: str):
    """model.attention from a checkpoint's stored config (YAML), without needing a YAML parser."""
    in_model = False
    for line in yaml_text.splitlines():
        if re.match(r"^\S", line):
            in_model = line.startswith("model:")
        elif in_model:
            m = re.match(r"^\s+attention:\s*['\"]?([\w-]+)", line)
            if m:
                return m.group(1)
    return None


def _read_string(dataset) -> str:
    v = dataset[()]
    return v.decode() if isinstance(v, bytes) else str(v)


def spec_from_checkpoint(f, arrays: dict) -> ModelSpec:
    """The model's shape from a luong checkpoint: the parameter shapes, plus the attention variant (from
    spec/attention written by `luong dump-step`, the stored config, or the presence of W_a)."""
    layers = len({k.split("/")[2] for k in arrays if k.startswith("encoder/lstm/")})
    if "encoder/lstm/0.fwd/weight_ih" in arrays or any(k.startswith("encoder/lstm/0/fwd") for k in arrays):
        raise ValueError("torch reference: bidirectional encoders are not modelled")
    vs, E = arrays["encoder/embedding/weight"].shape
    vt = arrays["decoder/embedding/weight"].shape[0]
    H = arrays["encoder/lstm/0/weight_hh"].shape[0]
    feed_in = arrays["decoder/lstm/0/weight_ih"].shape[0]
    if "spec/attention" in f:
        attention = _read_string(f["spec/attention"])
    elif "config" in f and _attention_from_config(_read_string(f["config"])):
        attention = _attention_from_config(_read_string(f["config"]))
    else:
        attention = "general" if "decoder/attention/score/weight" in arrays else "dot"
    for flag in ("reverse_source", "bidirectional_encoder", "tie_embeddings"):
        if f"spec/{flag}" in f and int(f[f"spec/{flag}"][()]):
            raise ValueError(f"torch reference: model.{flag} is not modelled")
    pad = int(f["spec/pad_id"][()]) if "spec/pad_id" in f else 0
    return ModelSpec(src_vocab=vs, tgt_vocab=vt, embedding_size=E, hidden_size=H, layers=layers,
                     attention=attention, input_feeding=feed_in == E + H, pad_id=pad)


def read_group(f, prefix: str) -> dict:
    """Every dataset under `prefix/` as {relative name: ndarray}."""
    out = {}
    f[prefix].visititems(lambda name, obj: out.__setitem__(name, obj[()]) if hasattr(obj, "shape") else None)
    return out


def load_luong_checkpoint(path: str, dtype=torch.float32, device="cpu"):
    """A LuongNmt with the parameters of a luong checkpoint (training checkpoint or dump-step file)."""
    import h5py

    with h5py.File(path, "r") as f:
        arrays = read_group(f, "model")
        spec = spec_from_checkpoint(f, arrays)
    model = LuongNmt(spec).to(dtype=dtype)
    load_luong_parameters(model, arrays)
    return model.to(device), spec
