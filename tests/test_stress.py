"""A short run of tools/stress.py on the device under test: host threads and processes
(spawn and fork) launching, copying and synchronizing at once, every result checked, no
failure and no leak of device memory or file descriptors. Long runs: see the tool."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import simt

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "stress.py"


def test_short_stress_run_has_no_failure_and_no_leak(device):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src")] + [p for p in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if p])
    run = subprocess.run([sys.executable, str(TOOL), "--device", device.name, "--seconds", "3",
                          "--threads", "3", "--processes", "1"],
                         env=env, capture_output=True, text=True, timeout=300)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    assert "failures: 0" in report and "LEAK" not in report, report
    ops = int(report.split("operations: ")[1].split()[0])
    assert ops > 100, report


def test_cpu_accounting_sees_memory_held_and_let_go():
    """The CPU device's bytes_in_use, which the stress tool's leak check reads."""
    with simt.use_device("cpu") as cpu:
        backend = cpu.backend
        before = backend.bytes_in_use()
        held = [simt.to_device(np.zeros(1 << 18)), simt.pinned_array(1 << 16, np.uint8)]
        view = held[0][10:20]
        assert backend.bytes_in_use() - before >= (1 << 21) + (1 << 16)
        held.clear()
        assert backend.bytes_in_use() - before >= 1 << 21     # the view keeps its memory
        del view
        assert backend.bytes_in_use() == before
