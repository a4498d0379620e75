"""bench/launch_own_cost.py's launch functions launch: bound as the GPU back end binds them,
with the null driver call, each kind's function returns None (a refusal calls None and
raises), so the bench times launches, not refusals."""
import importlib.util
import os

import pytest

from simt.backends.cuda import packlaunch, trampoline

PATH = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "launch_own_cost.py")


def test_every_kind_launches_through_the_null_driver(device):
    if trampoline.DATA_OFFSET is None or packlaunch.TYPE_OFFSET is None:
        pytest.skip("objects of unknown layout in this interpreter")
    spec = importlib.util.spec_from_file_location("launch_own_cost", PATH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    code = trampoline.make(packlaunch.ir(trampoline.DATA_OFFSET), packlaunch.NAME)
    null = trampoline.make(bench.NULL_LAUNCH, "null_launch")
    assert code is not None and null is not None
    for kind, args in bench.kinds().items():
        go = bench.bound(code, null, args, can_fail=True)
        assert go(*args) is None, kind
        with pytest.raises(TypeError):
            go(*args, "one more")            # refused: ``refused`` is None here
    assert bench.per_call_ns(go, args, calls=10, rounds=1) > 0
