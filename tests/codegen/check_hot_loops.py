#!/usr/bin/env python3
"""Checks that the CPU kernels' hot loops are vectorised by the compiler, as built.

A loop marked with a line

    // hot loop: must vectorise (tests/codegen/check_hot_loops.py)

directly above its `for` (or above the loop's `#pragma omp`) must appear in GCC's vectoriser report (-fopt-info-vec-optimized: "FILE:LINE:COL:
optimized: loop vectorized") when its translation unit is compiled with the build's own command from
compile_commands.json. Why a test: a small edit can leave such a loop scalar with no other symptom than a
slower step. The LSTM cell's backward loop went scalar when a run-time flag put a conditional load in it,
and stayed so for three sessions (2.8% of a CPU training step, a quarter of the vectorised rate).

A loop is compiled once for each place it is inlined into (cpu::parallel_ranges runs its body in an OpenMP
team or inline on one thread), and every copy must be vectorised: a position the report names as vectorised
must not also be named "couldn't vectorize loop" (-fopt-info-vec-missed), the sign of a copy left scalar
(float64 copies excepted: the reference dtype of tests and gradient checks).
Only the OpenMP copies of the Adam update and SGD with momentum were vectorised for many sessions, and every
one-thread process (a rank of `mpirun -np 2` on 2 cores) ran Adam 7x slower than it should.

Usage: check_hot_loops.py BUILD_DIR SOURCE_DIR      (registered in ctest for Release builds with GCC)
Exit 0 when every marked loop is vectorised, 1 when one is not, 2 when it cannot check.
"""
import json
import os
import re
import shlex
import subprocess
import sys

MARKER = "// hot loop: must vectorise (tests/codegen/check_hot_loops.py)"
REPORT = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<what>optimized: loop vectorized|"
                    r"missed: couldn't vectorize loop)")
# The reason GCC gives for a loop it could not vectorise names the element type when that type has no vector
# form in the build (e.g. "scalar_type: const double").
FLOAT64 = re.compile(r"^\s*scalar_type: (const )?double\b")
# Marked loops live in the CPU kernels; fewer markers than this means the scan itself broke.
MIN_MARKERS = 10


def fail(code, message):
    print(f"check_hot_loops: {message}", file=sys.stderr)
    sys.exit(code)


def loop_end(lines, start):
    """Last line (0-based) of the loop whose `for` is on lines[start]: past the header's parentheses, then to
    the brace that closes a braced body, or the first `;` of a single statement (a nested `for` included)."""
    text = "\n".join(lines[start:])
    i, depth = text.index("("), 0
    while True:  # the header
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    while text[i].isspace():
        i += 1
    if text.startswith("for (", i):  # a nested loop as the whole body
        return loop_end(lines, start + text.count("\n", 0, i))
    if text[i] == "{":
        depth = 0
        while True:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
    else:
        i = text.index(";", i)
    return start + text.count("\n", 0, i)


def marked_loops(source_dir):
    """(path, first line, last line) of each loop marked under framework/kernels/cpu, 1-based. GCC names a
    vectorised loop by its `for` line, or for an OpenMP loop by a statement of its body."""
    root = os.path.join(source_dir, "framework", "kernels", "cpu")
    loops = []
    for name in sorted(os.listdir(root)):
        if not name.endswith((".cpp", ".h")):
            continue
        path = os.path.realpath(os.path.join(root, name))
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        for i, text in enumerate(lines):
            if text.strip() != MARKER:
                continue
            j = i + 1  # the loop: the next line, after any `#pragma omp` of its own
            while j < len(lines) and lines[j].strip().startswith("#pragma"):
                j += 1
            nxt = lines[j].strip() if j < len(lines) else ""
            if not nxt.startswith("for ("):
                fail(2, f"{path}:{i + 1}: the marker must sit directly above a `for` loop (or its pragma), found '{nxt}'")
            loops.append((path, j + 1, loop_end(lines, j) + 1))
    return loops


def units_for(path, commands, source_dir):
    """Translation units to compile for a marked file: itself, or (a header) every unit that includes it, so a
    kernel body built twice (kernels/cpu/wide_vectors.h: for AVX2 and for AVX-512) is checked in both builds."""
    if path.endswith(".cpp"):
        return [path] if path in commands else []
    include = os.path.relpath(path, source_dir)
    units = []
    for unit in sorted(commands):
        with open(unit, encoding="utf-8") as f:
            if f'#include "{include}"' in f.read():
                units.append(unit)
    return units


def vectoriser_report(unit, entry):
    """The positions (file, line, column) the unit's report names as vectorised, and those it names as a loop
    it couldn't vectorise."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    if "-o" in args:
        args[args.index("-o") + 1] = os.devnull
    args += ["-fopt-info-vec-optimized", "-fopt-info-vec-missed"]
    done = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
    if done.returncode != 0:
        fail(2, f"compiling {unit} failed:\n{done.stderr[-2000:]}")
    vectorised, scalar = set(), set()
    lines = done.stderr.splitlines()
    for i, line in enumerate(lines):
        m = REPORT.match(line)
        if not m:
            continue
        where = (os.path.realpath(os.path.join(entry["directory"], m["file"])), int(m["line"]), int(m["col"]))
        if m["what"].startswith("optimized"):
            vectorised.add(where)
        elif not any(FLOAT64.search(reason) for reason in lines[i + 1:i + 3]):
            scalar.add(where)  # a float64 copy (reference and gradient-check paths) may stay scalar
    return vectorised, scalar


def main():
    if len(sys.argv) != 3:
        fail(2, "usage: check_hot_loops.py BUILD_DIR SOURCE_DIR")
    build_dir, source_dir = (os.path.realpath(p) for p in sys.argv[1:])
    db = os.path.join(build_dir, "compile_commands.json")
    if not os.path.exists(db):
        fail(2, f"no {db} (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    with open(db, encoding="utf-8") as f:
        commands = {os.path.realpath(os.path.join(e["directory"], e["file"])): e for e in json.load(f)}
    loops = marked_loops(source_dir)
    if len(loops) < MIN_MARKERS:
        fail(2, f"found {len(loops)} marked loops, expected at least {MIN_MARKERS}: is the marker text intact?")
    reports = {}  # unit -> (vectorised positions, positions of loops left scalar)
    checks = []  # (loop, unit): a loop in a header is checked in every unit that includes it
    for path, a, b in loops:
        units = units_for(path, commands, source_dir)
        if not units:
            fail(2, f"no translation unit in {db} compiles {path}")
        for unit in units:
            if unit not in reports:
                reports[unit] = vectoriser_report(unit, commands[unit])
            checks.append(((path, a, b), unit))
    missed = 0
    for (p, a, b), unit in checks:
        vectorised, scalar = reports[unit]
        here = [w for w in vectorised if w[0] == p and a <= w[1] <= b]
        left_scalar = [w for w in here if w in scalar]
        ok = bool(here) and not left_scalar
        missed += 0 if ok else 1
        where = "" if unit == p else f" (in {os.path.relpath(unit, source_dir)})"
        verdict = "vectorised" if ok else ("NOT VECTORISED" if not here else
                                           f"A COPY LEFT SCALAR at line {left_scalar[0][1]}, column {left_scalar[0][2]}")
        print(f"{os.path.relpath(p, source_dir)}:{a}-{b}{where}: {verdict}")
    if missed:
        fail(1, f"{missed} of {len(checks)} hot loops are not vectorised, or not in every copy (see the lines above; compile "
                "the unit with -fopt-info-vec-all for the compiler's reason)")
    print(f"check_hot_loops: all {len(loops)} marked loops vectorised, every copy, {len(checks)} checks in "
          f"{len(reports)} units")


if __name__ == "__main__":
    main()
