#!/usr/bin/env python3
"""train.tensorboard, read by TensorBoard itself (its EventAccumulator), where the tensorboard package is installed
(pip install tensorboard; skipped otherwise, exit status 77): every metrics.jsonl value at its step, and after a
resume from an earlier checkpoint the steps trained again shown once (the session start purges the old points).

    tensorboard_reads_events_test.py LUONG_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
except ImportError:
    print("tensorboard is not installed: skipped")
    sys.exit(77)

luong, source = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    data, run = os.path.join(tmp, "data"), os.path.join(tmp, "run")
    subprocess.run([luong, "gen-data", "--out", data, "--train", "300", "--valid", "20", "--test", "10"], check=True,
                   capture_output=True)

    def train(steps, *extra):
        sets = {"data.train_src": f"{data}/train.src", "data.train_tgt": f"{data}/train.tgt",
                "data.valid_src": f"{data}/valid.src", "data.valid_tgt": f"{data}/valid.tgt", "train.max_epochs": "0",
                "train.valid_every": "20", "train.log_every": "10", "train.tensorboard": "true",
                "train.keep_checkpoints": "0", "train.max_steps": str(steps)}
        args = [luong, "train", "--config", f"{source}/configs/tiny.yaml", "--run-dir", run, "--quiet", *extra]
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        subprocess.run(args, check=True, capture_output=True)

    train(40)
    os.remove(os.path.join(run, "ckpt-40.h5"))  # resume from step 20: steps 21-40 are trained again
    os.remove(os.path.join(run, "best.h5"))
    time.sleep(1.1)  # event files are named by the second they were opened in
    train(60, "--resume", "auto")

    acc = EventAccumulator(run)
    acc.Reload()
    records = [json.loads(line) for line in open(os.path.join(run, "metrics.jsonl"))]
    for tag, kind, field in (("train/loss", "train", "loss"), ("valid/ppl", "valid", "valid_ppl")):
        shown = [(s.step, s.value) for s in acc.Scalars(tag)]
        logged = [(r["step"], r[field]) for r in records if r["type"] == kind]
        assert [s for s, _ in shown] == [s for s, _ in logged], (tag, shown, logged)
        for (_, a), (_, b) in zip(shown, logged):
            assert abs(a - b) <= 1e-6 * max(1.0, abs(b)), (tag, a, b)
print("ok")
