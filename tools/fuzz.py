"""Differential fuzzer for simt: generated kernels against a NumPy evaluator.

    python tools/fuzz.py --count 1000 --device cpu --seed 0 --out fuzz-failures

runs seeds S .. S+N-1 on the device, prints the kernels run, mismatches, errors and skipped
ones, and writes each failing kernel (source, seed and what differed) to the --out folder.
docs/fuzzing.md says what the generator covers and how a failure becomes a regression test.
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzz_check import run_seeds   # noqa: E402
from fuzz_gen import FEATURES      # noqa: E402

# Features whose kernels hit a known, unfixed bug (each has an xfail test in
# tests/test_fuzz_regressions.py); --without-known leaves them out.
KNOWN_BUGS = ("cmp64",)


def reduce_failures(outcomes, device, out):
    """Write a shrunk reproducer of each failing kernel to ``out``/seed_N.min.py."""
    from fuzz_reduce import reduce
    with tempfile.TemporaryDirectory(prefix="simt-fuzz-reduce-") as folder:
        for outcome in outcomes:
            small, spent = reduce(outcome.program, device, folder)
            path = os.path.join(out, f"seed_{outcome.program.seed}.min.py")
            with open(path, "w") as f:
                f.write(small.source())
            print(f"seed {outcome.program.seed}: reduced in {spent} runs -> {path}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="kernels to run")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--device", default="cpu", help="cpu, cuda:0 ...")
    parser.add_argument("--out", default="fuzz-failures", help="folder for failing kernels")
    parser.add_argument("--without", default="",
                        help="comma-separated features to leave out: " + ", ".join(sorted(FEATURES))
                        + " (the ones with known bugs: " + ", ".join(KNOWN_BUGS) + ")")
    parser.add_argument("--without-known", action="store_true",
                        help="leave out the features with known bugs")
    parser.add_argument("--reduce", action="store_true",
                        help="shrink each failing kernel and write it beside its report "
                             "(seed_N.min.py)")
    parser.add_argument("--show", action="store_true", help="print the source of one seed and exit")
    args = parser.parse_args(argv)
    without = [w for w in args.without.split(",") if w]
    without += list(KNOWN_BUGS) if args.without_known else []
    unknown = set(without) - FEATURES
    if unknown:
        parser.error(f"unknown features {sorted(unknown)}; known: {sorted(FEATURES)}")
    if args.show:
        from fuzz_gen import generate
        print(generate(args.seed, without).source())
        return 0
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="simt-fuzz-") as folder:
        results = {}
        for first in range(args.seed, args.seed + args.count, 100):
            seeds = range(first, min(first + 100, args.seed + args.count))
            for kind, items in run_seeds(seeds, args.device, folder, args.out, without).items():
                results.setdefault(kind, []).extend(items)
            done = sum(len(v) for v in results.values())
            print(f"{done} kernels, {len(results['mismatch'])} mismatches, "
                  f"{len(results['error'])} errors, {len(results['skipped'])} skipped, "
                  f"{time.time() - start:.0f} s", flush=True)
    bad = [o.program.seed for kind in ("mismatch", "error") for o in results[kind]]
    print(f"kernels run: {sum(len(v) for v in results.values())} on {args.device}; "
          f"mismatches: {len(results['mismatch'])}; errors: {len(results['error'])}; "
          f"skipped (non-finite floats): {len(results['skipped'])}")
    if bad:
        print(f"failing seeds: {bad} (reports in {args.out}/)")
    if bad and args.reduce:
        reduce_failures(results["mismatch"] + results["error"], args.device, args.out)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
