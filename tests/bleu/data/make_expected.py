#!/usr/bin/env python3
"""Regenerates expected.json (BLEU, and BLEU and chrF with two references), chrf.json (chrF),
tokenizer_13a.json and significance.json (numpy's generator; confidence intervals and paired tests) with the
sacrebleu package (and numpy 2, whose float32 rounding the resampled scores follow).

    pip install sacrebleu && python3 tests/bleu/data/make_expected.py

Run from anywhere; it reads and writes next to itself. The C++ tests compare against these numbers.
"""
import json
import os
import subprocess
import sys

import numpy as np
import sacrebleu
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = ["main", "zero4", "zero34", "nomatch", "short"]


def files(case):
    prefix = "" if case == "main" else case + "_"
    return os.path.join(HERE, prefix + "hyp.txt"), os.path.join(HERE, prefix + "ref.txt")


def read_lines(path):
    # What the sacrebleu command does: split at '\n' only, then rstrip every line.
    with open(path, encoding="utf-8", newline="\n") as f:
        return [line.rstrip() for line in f]


def run_cli(hyp, ref, *args):
    refs = list(ref) if isinstance(ref, (list, tuple)) else [ref]
    with open(hyp, "rb") as stdin:
        return subprocess.run(["sacrebleu", *refs, *args], stdin=stdin, capture_output=True,
                              check=True).stdout.decode("utf-8").rstrip("\n")


# Several references per segment: the main case's hypotheses against ref.txt and ref2.txt (a second reference
# with some lines equal to the hypothesis, some reordered, and some as far from the hypothesis length as
# ref.txt on the other side, so the closest reference length is a tie that the shorter one wins).
MULTI_REFS = ["ref.txt", "ref2.txt"]


def multi_reference():
    hyp_path = os.path.join(HERE, "hyp.txt")
    ref_paths = [os.path.join(HERE, r) for r in MULTI_REFS]
    hyps, refs = read_lines(hyp_path), [read_lines(p) for p in ref_paths]
    bleu, chrf, plus = BLEU(), CHRF(), CHRF(word_order=2)
    bleu_score, chrf_score, plus_score = (m.corpus_score(hyps, refs) for m in (bleu, chrf, plus))
    return {
        "hyp": "hyp.txt",
        "refs": MULTI_REFS,
        "bleu": {
            "score": bleu_score.score,
            "signature": str(bleu.get_signature()),
            "sentence_stats": [list(map(int, s)) for s in bleu._extract_corpus_statistics(hyps, refs)],
            "cli_text": run_cli(hyp_path, ref_paths, "-f", "text"),
            "cli_json": json.loads(run_cli(hyp_path, ref_paths)),
        },
        "chrf": {
            "score": chrf_score.score,
            "signature": str(chrf.get_signature()),
            "sentence_stats": [list(map(int, s)) for s in chrf._extract_corpus_statistics(hyps, refs)],
            "cli_json": json.loads(run_cli(hyp_path, ref_paths, "-m", "chrf")),
        },
        "chrf_plusplus": {
            "score": plus_score.score,
            "signature": str(plus.get_signature()),
            "cli_json": json.loads(run_cli(hyp_path, ref_paths, "-m", "chrf", "--chrf-word-order", "2")),
        },
        "cli_both_text": run_cli(hyp_path, ref_paths, "-m", "bleu", "chrf", "-f", "text"),
    }


def bleu_case(case):
    hyp_path, ref_path = files(case)
    hyps, refs = read_lines(hyp_path), read_lines(ref_path)
    bleu = BLEU()
    score = bleu.corpus_score(hyps, [refs])
    sentence_stats = [list(map(int, s)) for s in bleu._extract_corpus_statistics(hyps, [refs])]
    return {
        "hyp": os.path.basename(hyp_path),
        "ref": os.path.basename(ref_path),
        "score": score.score,
        "precisions": score.precisions,
        "counts": score.counts,
        "totals": score.totals,
        "bp": score.bp,
        "ratio": score.ratio,
        "hyp_len": score.sys_len,
        "ref_len": score.ref_len,
        "line_width2": score.format(width=2),
        "signature": str(bleu.get_signature()),
        # [hyp_len, ref_len, correct 1..4, total 1..4] per segment
        "sentence_stats": sentence_stats,
        "cli_text": run_cli(hyp_path, ref_path, "-f", "text"),
        "cli_json": json.loads(run_cli(hyp_path, ref_path)),
    }


def chrf_case(case):
    hyp_path, ref_path = files(case)
    hyps, refs = read_lines(hyp_path), read_lines(ref_path)
    chrf = CHRF()
    return {
        "hyp": os.path.basename(hyp_path),
        "ref": os.path.basename(ref_path),
        "score": chrf.corpus_score(hyps, [refs]).score,
        "signature": str(chrf.get_signature()),
        # [hyp, ref, match] for orders 1..6, flattened, per segment
        "sentence_stats": [list(map(int, s)) for s in chrf._extract_corpus_statistics(hyps, [refs])],
        "cli_text": run_cli(hyp_path, ref_path, "-m", "chrf", "-f", "text"),
        "cli_json": json.loads(run_cli(hyp_path, ref_path, "-m", "chrf")),
        "cli_both_text": run_cli(hyp_path, ref_path, "-m", "bleu", "chrf", "-f", "text"),
        # chrF++ (word order 2): the same, with word 1- and 2-grams as orders 7 and 8
        "plusplus": chrf_plusplus_case(hyps, refs, hyp_path, ref_path),
    }


def chrf_plusplus_case(hyps, refs, hyp_path, ref_path):
    plus = CHRF(word_order=2)
    score = plus.corpus_score(hyps, [refs]).score  # before get_signature, which needs the reference count
    return {
        "score": score,
        "signature": str(plus.get_signature()),
        "sentence_stats": [list(map(int, s)) for s in plus._extract_corpus_statistics(hyps, [refs])],
        "cli_text": run_cli(hyp_path, ref_path, "-m", "chrf", "--chrf-word-order", "2", "-f", "text"),
        "cli_json": json.loads(run_cli(hyp_path, ref_path, "-m", "chrf", "--chrf-word-order", "2")),
    }


# Sentence pairs for chrF's character handling: Unicode whitespace removed, code points (not bytes) counted,
# repeats clipped, orders that one side is too short for, empty sides.
CHRF_PAIRS = [
    ["a cat", "a cat"], ["", "a cat"], ["a cat", ""], ["", ""], ["ab", "abcdefgh"], ["abcdefgh", "ab"],
    ["aaaa aaaa", "aa"], ["Grüße aus Köln", "Grüße aus Bonn"], ["ideo\u3000space", "ideo space"],
    ["nbsp\u00a0here", "nbsp here"], ["\x1cfs x", "fs x"], ["zero\u200bwidth", "zero width"],
    ["emoji 😀😀, ok.", "emoji 😀, ok!"], ["日本語のテスト", "日本語テスト"], ["é", "e\u0301"], ["x", "y"],
    # chrF++'s words: one punctuation character split off the end, else the start, of longer words
    ["(hi) there.", "hi there ."], [".. ..", ". . . ."], ["'quoted' word", "quoted word"], ["é. .é", "é . . é"],
    ["a-b c--d", "a - b c -- d"], ["¡Hola! ¿qué?", "Hola qué"], ["x, y; z", "x y z"], ["the the the", "the the"],
    ["(hi) x", "(hi x"],
]


def chrf_pairs():
    chrf = CHRF()
    plus = CHRF(word_order=2)
    return [{"hyp": h, "ref": r, "score": chrf.corpus_score([h], [[r]]).score,
             "stats": list(map(int, chrf._extract_corpus_statistics([h], [[r]])[0])),
             "score_plusplus": plus.corpus_score([h], [[r]]).score,
             "stats_plusplus": list(map(int, plus._extract_corpus_statistics([h], [[r]])[0]))} for h, r in CHRF_PAIRS]


TOKENIZER_INPUTS = [
    "", "   ", "Hello, world!", "It costs 3.5 euros, not 1,000.", "1,000,000.50 and 3,5 and .5 and 5.",
    "U.S.A. e.g. i.e.", "a.b,c", "x.,y", ",.,.", "word...", "... start", "end.", "..", "a..b",
    "e-mail co-operate", "12-15 1999-2003 3-", "-5 degrees", "x--y", "3--4",
    "(a)[b]{c}<d>", "\"quoted\" 'single' `back`", "it's l'été", "#$%&*+/:;=?@\\^_|~",
    "<br>line<br/>two", "This has <skipped> a marker", "&quot;q&quot; &amp; &lt;tag&gt; &amp;lt;",
    "&amp", "a & b", "line-\nbreak and\nnewline", "tab\there", "nbsp\u00a0here", "ideo\u3000space",
    "thin\u2009space", "zero\u200bwidth", "Grüße, Müller's 3.000,50 €.", "Café. Été, naïve!",
    "日本語、テスト。", "é.", ".é", "é,5", "5,é", "9.é", "Ω-3", "3-Ω", "emoji 😀, ok.",
    "trailing spaces   ", "\u0085next line", "a\u2028b", "\x1cfs", "p<q>r", "50% off!", "1/2 cup",
    "http://x.org/a?b=1&c=2", "he said:\"no\"", "C++ and C#", "(1.5)", "[2,3]", "-.5", "a-1", "1-a",
]


# Systems compared with hyp.txt (the baseline) by the paired tests: sys2.txt clearly worse (articles replaced,
# every fifth line cut short), sys3.txt nearly the same (a word dropped from every seventh line).
SYSTEMS = ["hyp.txt", "sys2.txt", "sys3.txt"]


def numpy_draws():
    """What numpy's default_rng gives for the seeds and calls sacreBLEU's tests make."""
    out = {}
    for seed in (12345, 0, (1 << 40) | 7):
        rng = np.random.default_rng(seed)
        out[str(seed)] = {
            "raw_uint64": [str(v) for v in rng.bit_generator.random_raw(6)],
            "choice_37": np.random.default_rng(seed).choice(37, size=(3, 37), replace=True).ravel().tolist(),
            # a bound near 2^32 rejects often in Lemire's method
            "choice_3e9": np.random.default_rng(seed).choice(3_000_000_000, size=(2, 25), replace=True).ravel().tolist(),
            "bools_3x37": np.random.default_rng(seed).integers(2, size=(3, 37), dtype=bool).ravel().astype(int).tolist(),
        }
    return out


def metric_objects(refs):
    return {"bleu": BLEU(references=refs), "chrf": CHRF(references=refs), "chrf++": CHRF(word_order=2, references=refs)}


def result_dict(r):
    # float() of numpy float32 values: the exact value, which the C++ test compares bit for bit.
    return {"score": float(r.score), "p_value": None if r.p_value is None else float(r.p_value),
            "mean": None if r.mean is None else float(r.mean), "ci": None if r.ci is None else float(r.ci)}


def significance():
    from sacrebleu.significance import PairedTest
    cases = {}
    for refs_name, ref_files in (("one_ref", ["ref.txt"]), ("two_refs", MULTI_REFS)):
        refs = [read_lines(os.path.join(HERE, r)) for r in ref_files]
        named = [(name, read_lines(os.path.join(HERE, name))) for name in SYSTEMS]
        case = {"refs": ref_files, "confidence": {}, "paired_bs": {}, "paired_ar": {}}
        for key, metric in metric_objects(refs).items():
            score = metric.corpus_score(named[0][1], None, n_bootstrap=1000)
            case["confidence"][key] = {"score": score.score, "mean": float(score._mean), "ci": float(score._ci)}
        for test, n in (("bs", 1000), ("ar", 10000)):
            _, scores = PairedTest(named, metric_objects(refs), None, test_type=test, n_samples=n)()
            case["paired_" + test] = {
                key: [result_dict(r) for r in results] for key, results in zip(("bleu", "chrf", "chrf++"),
                                                                                 list(scores.values())[1:])}
        cases[refs_name] = case
    hyp = os.path.join(HERE, "hyp.txt")
    ref = os.path.join(HERE, "ref.txt")
    systems = [os.path.join(HERE, s) for s in SYSTEMS]

    def cli(*args):
        return subprocess.run(["sacrebleu", ref, *args], capture_output=True, check=True, cwd=HERE,
                              env={**os.environ, "NO_COLOR": "1"}).stdout.decode("utf-8").rstrip("\n")
    return {
        "numpy_version": np.__version__,
        "systems": SYSTEMS,
        "numpy": numpy_draws(),
        "cases": cases,
        # sacrebleu's own command (its JSON: BLEU only, as it cannot write chrF's float32 results as JSON)
        "cli_confidence_json": json.loads(cli("-i", hyp, "--confidence", "-m", "bleu", "chrf")),
        "cli_paired_bs_json": json.loads(cli("-i", *SYSTEMS, "--paired-bs", "-m", "bleu")),
        "cli_paired_ar_json": json.loads(cli("-i", *SYSTEMS, "--paired-ar", "-m", "bleu")),
    }


def main():
    version = sacrebleu.__version__
    expected = {"sacrebleu_version": version, "cases": {c: bleu_case(c) for c in CASES},
                "multi_reference": multi_reference()}
    with open(os.path.join(HERE, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")
    chrf = {"sacrebleu_version": version, "cases": {c: chrf_case(c) for c in CASES}, "pairs": chrf_pairs()}
    with open(os.path.join(HERE, "chrf.json"), "w", encoding="utf-8") as f:
        json.dump(chrf, f, indent=1, ensure_ascii=False)
        f.write("\n")
    tok = Tokenizer13a()
    cases = [{"input": s, "tokens": tok(s)} for s in TOKENIZER_INPUTS]
    with open(os.path.join(HERE, "tokenizer_13a.json"), "w", encoding="utf-8") as f:
        json.dump({"sacrebleu_version": version, "cases": cases}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    with open(os.path.join(HERE, "significance.json"), "w", encoding="utf-8") as f:
        json.dump({"sacrebleu_version": version, **significance()}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote expected.json, chrf.json, tokenizer_13a.json and significance.json with sacrebleu {version}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
