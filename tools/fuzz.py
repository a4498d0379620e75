"""Differential fuzzer for simt: generated kernels against a NumPy evaluator.

    python tools/fuzz.py --count 1000 --device cpu --seed 0 --out fuzz-failures [--jobs 8]

runs seeds S .. S+N-1 on the device, prints the kernels run, mismatches, errors and skipped
ones, and writes each failing kernel (source, seed and what differed) to the --out folder.
docs/fuzzing.md says what the generator covers and how a failure becomes a regression test.
"""
import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fuzz_check import run_seeds   # noqa: E402
from fuzz_gen import FEATURES      # noqa: E402

# Features whose kernels hit a known, unfixed bug (each has an xfail test in
# tests/test_fuzz_regressions.py); --without-known leaves them out.
KNOWN_BUGS = ()


def run_chunk(task):
    """Run a list of seeds in this (fresh) process; returns ({kind: [seed]}, the seeds not
    run). It stops after a kernel that raised: a sticky CUDA error (an illegal
    address, a trap) leaves the context unusable, and every later kernel of the process
    would fail with it, so the rest go to a fresh process."""
    seeds, device, out, without, isolate = task
    with tempfile.TemporaryDirectory(prefix="simt-fuzz-") as folder:
        results, rest = run_seeds(seeds, device, folder, out, without, isolate)
    return {kind: [o.program.seed for o in items] for kind, items in results.items()}, rest


def run_all(args, without):
    """Every seed, in chunks, each chunk in a new process (spawned: a CUDA context does not
    survive fork), ``args.jobs`` at a time; prints a line per chunk, returns {kind: [seed]}."""
    size = 100 if args.jobs == 1 else 50
    seeds = list(range(args.seed, args.seed + args.count))
    results = {"ok": [], "mismatch": [], "error": [], "crash": [], "skipped": []}
    start = time.time()
    with pool_of(args.jobs) as pool:
        pending = {pool.submit(run_chunk, (seeds[k:k + size], args.device, args.out, without,
                                           args.isolate)) for k in range(0, len(seeds), size)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                chunk, rest = future.result()
                for kind, ran in chunk.items():
                    results[kind] += ran
                if rest:
                    pending.add(pool.submit(run_chunk, (rest, args.device, args.out, without,
                                                        args.isolate)))
                print(f"{sum(len(v) for v in results.values())} kernels, "
                      f"{len(results['mismatch'])} mismatches, {len(results['error'])} errors, "
                      f"{len(results['crash'])} crashes, "
                      f"{len(results['skipped'])} skipped, {time.time() - start:.0f} s",
                      flush=True)
    return results


def pool_of(jobs):
    """``jobs`` worker processes, each used for one task only."""
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               max_tasks_per_child=1)


def reduce_one(task):
    """Shrink one failing kernel; write it to ``out``/seed_N.min.py; returns a line."""
    from fuzz_check import check, check_isolated
    from fuzz_gen import generate
    from fuzz_reduce import reduce
    seed, device, out, without, isolate = task
    with tempfile.TemporaryDirectory(prefix="simt-fuzz-reduce-") as folder:
        small, spent = reduce(generate(seed, without), device, folder,
                              check=check_isolated if isolate else check)
    path = os.path.join(out, f"seed_{seed}.min.py")
    with open(path, "w") as f:
        f.write(small.source())
    return f"seed {seed}: reduced in {spent} runs -> {path}"


def reduce_failures(seeds, args, without):
    """A shrunk reproducer of each failing kernel, ``args.jobs`` at a time."""
    with pool_of(args.jobs) as pool:
        tasks = [(seed, args.device, args.out, without, args.isolate) for seed in seeds]
        for line in pool.map(reduce_one, tasks):
            print(line, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100, help="kernels to run")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--device", default="cpu", help="cpu, cuda:0 ...")
    parser.add_argument("--jobs", type=int, default=1, help="processes (compiling is the "
                        "slow part; on a GPU machine with 16 cores, --jobs 8)")
    parser.add_argument("--isolate", action="store_true", help="run each kernel in its own "
                        "process, so that one that crashes is reported rather than ending the run")
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
    results = run_all(args, without)
    bad = sorted(results["mismatch"] + results["error"] + results["crash"])
    print(f"kernels run: {sum(len(v) for v in results.values())} on {args.device}; "
          f"mismatches: {len(results['mismatch'])}; errors: {len(results['error'])}; "
          f"crashes: {len(results['crash'])}; "
          f"skipped (non-finite floats): {len(results['skipped'])}")
    if bad:
        print(f"failing seeds: {bad} (reports in {args.out}/)")
    if bad and args.reduce:
        reduce_failures(bad, args, without)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
