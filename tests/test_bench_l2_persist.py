"""bench/l2_persist.py runs on every device with tiny sizes and gets NumPy's answer (the
lead runs it on the H200 for the timings)."""
import importlib.util
import os

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench",
                     "l2_persist.py")


def _bench():
    spec = importlib.util.spec_from_file_location("l2_persist", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_l2_persist_bench_runs(device, tmp_path, capsys):
    bench = _bench()
    out = tmp_path / "l2.json"
    assert bench.main(["--device", device.name, "--hot-kib", "16", "--cold-mib", "0.25",
                       "--reps", "2", "--json", str(out)]) == 0
    assert "result right" in capsys.readouterr().out
    assert out.exists()
