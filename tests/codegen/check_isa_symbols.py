#!/usr/bin/env python3
"""Checks that the AVX-512 build of the pointwise kernels shares no symbol with the rest of the library.

The LSTM cell and the loss kernel are compiled twice (framework/kernels/cpu/wide_vectors.h): the baseline files for
x86-64-v3 and the *_avx512.cpp files, the same bodies, for x86-64-v4. A function both builds define with the same
name (an inline helper left out of line, a template instantiated in both) is one weak symbol to the linker, which
keeps one copy for every caller: if it kept the AVX-512 copy, the AVX2 build would run AVX-512 instructions and die
with SIGILL on a CPU without them, which no test on an AVX-512 machine would show. So every symbol an *_avx512.cpp
object defines with external linkage must name the build's namespace (luong::cpu::x86_v4), in its own name or in a
template argument: no symbol of the baseline build can be the same.

Usage: check_isa_symbols.py BUILD_DIR      (registered in ctest)
Exit 0 when the objects are clean, 1 when a symbol is shared, 2 when it cannot check.
"""
import json
import os
import shlex
import subprocess
import sys

NAMESPACE = "luong::cpu::x86_v4::"
# nm's letters for symbols with external linkage that the object defines (lowercase ones are local).
EXTERNAL_DEFINED = set("TWVDBRGSu")


def fail(code, message):
    print(f"check_isa_symbols: {message}", file=sys.stderr)
    sys.exit(code)


def objects(build_dir):
    """The object file of every *_avx512.cpp unit in compile_commands.json."""
    db = os.path.join(build_dir, "compile_commands.json")
    if not os.path.exists(db):
        fail(2, f"no {db} (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)")
    with open(db, encoding="utf-8") as f:
        entries = json.load(f)
    found = []
    for e in entries:
        if not e["file"].endswith("_avx512.cpp"):
            continue
        args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        if "-o" not in args:
            fail(2, f"no -o in the command for {e['file']}")
        found.append((e["file"], os.path.join(e["directory"], args[args.index("-o") + 1])))
    return found


def main():
    if len(sys.argv) != 2:
        fail(2, "usage: check_isa_symbols.py BUILD_DIR")
    units = objects(os.path.realpath(sys.argv[1]))
    if not units:
        fail(2, "no *_avx512.cpp unit in the build: has the AVX-512 build of the kernels moved?")
    shared = []
    for source, obj in units:
        if not os.path.exists(obj):
            fail(2, f"{obj} (from {source}) is not built yet")
        done = subprocess.run(["nm", "-C", "--defined-only", obj], capture_output=True, text=True)
        if done.returncode != 0:
            fail(2, f"nm {obj} failed: {done.stderr.strip()}")
        names, before = 0, len(shared)
        for line in done.stdout.splitlines():
            parts = line.split(" ", 2)
            if len(parts) != 3 or parts[1] not in EXTERNAL_DEFINED:
                continue
            names += 1
            if NAMESPACE not in parts[2]:
                shared.append(f"{os.path.basename(source)}: {parts[1]} {parts[2]}")
        if names == 0:
            fail(2, f"{obj} defines no external symbol: nothing for the baseline build to call")
        clean = len(shared) == before
        print(f"{os.path.basename(source)}: {names} external symbols" + (f", all in {NAMESPACE[:-2]}" if clean else ""))
    if shared:
        for s in shared:
            print(s)
        fail(1, f"{len(shared)} symbols of the AVX-512 build could collide with the baseline build's (above)")


if __name__ == "__main__":
    main()
