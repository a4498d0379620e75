"""bench/run_cpu.py's timing: C and simt's two devices take turns round by round."""
import importlib.util
import os

import pytest

import simt

PATH = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "run_cpu.py")


@pytest.fixture(scope="module")
def run_cpu():
    saved = dict(os.environ)            # the bench sets its thread counts and cache folder
    try:
        spec = importlib.util.spec_from_file_location("run_cpu", PATH)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


def test_the_ways_take_turns_each_on_its_device(run_cpu):
    previous = simt.get_device()
    off = simt.set_device("cpu", boundscheck=False)
    on = simt.set_device("cpu", boundscheck=True)
    seen = []
    ways = [("c", None, lambda: seen.append(("c", None))),
            ("off", off, lambda: seen.append(("off", simt.get_device()))),
            ("on", on, lambda: seen.append(("on", simt.get_device())))]
    try:
        times, rounds = run_cpu.timed_in_turns(ways, budget_s=0.0, least=3, most=3, pause_s=0)
    finally:
        simt.set_device(previous)
    assert rounds == 3 and set(times) == {"c", "off", "on"}
    assert all(t >= 0 for t in times.values())
    assert all(device is off for label, device in seen if label == "off")
    assert all(device is on for label, device in seen if label == "on")
    # a first untimed and timed run of each, then per turn an untimed run and a timed one
    labels = [label for label, _ in seen]
    assert labels[:6] == ["c", "c", "off", "off", "on", "on"]
    assert labels[6::2] == labels[7::2]
    assert labels[6::2] == ["c", "off", "on", "off", "on", "c", "on", "c", "off"]
