#!/bin/sh
# The CPU device on many cores: launch host time (bench/cpu_launch.py), then every
# benchmark kernel against its C+OpenMP twin with the same number of threads
# (bench/run_cpu.py, compile probes skipped). About a minute on 16 cores.
# Run from the repository root:  sh bench/cpu_scaling.sh OUT_DIR [THREADS]
set -e
out=${1:?usage: sh bench/cpu_scaling.sh OUT_DIR [THREADS]}
threads=${2:-16}
mkdir -p "$out"
PYTHONPATH=src python3 bench/cpu_launch.py --threads "$threads" "$out/cpu-launch-$threads.json"
PYTHONPATH=src python3 bench/run_cpu.py --threads "$threads" --no-extras --out "$out"
