"""simt's pytest plugin: test your kernels on every device, with or without a GPU.

Installed with simt (a ``pytest11`` entry point), so a project's tests get:

- ``--simt-device cpu,cuda:0`` (comma-separated, or repeated; ``all`` means every device
  this machine has; default ``cpu``): the devices the ``simt_device`` fixture runs on.
- the ``simt_device`` fixture: each test that takes it runs once per device, with that
  device current (the test id says which: ``test_x[cpu]``, ``test_x[cuda_0]``).
- the ``requires_gpu`` marker: the test is skipped on devices that are not GPUs, and
  everywhere when the machine has none.
- ``poison(shape, dtype)`` and ``random_array(rng, shape, dtype)``: outputs a correct kernel
  overwrites, inputs that are never all zero.

So a CI machine without a GPU runs the same kernels as the GPU machines (docs/testing.md).
"""
import numpy as np
import pytest


def pytest_addoption(parser):
    group = parser.getgroup("simt")
    group.addoption("--simt-device", action="append", default=None, metavar="DEVICES",
                    help="simt devices for the simt_device fixture: cpu, cuda:0, ... "
                         "(comma-separated or repeated; 'all': every device; default cpu)")


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_gpu: run only on a GPU device (skipped on "
                                       "the CPU device and on machines without a GPU)")


def requested_devices(option):
    """Device names from the --simt-device values (None: ['cpu'])."""
    names = [name.strip() for value in (option or ["cpu"]) for name in value.split(",")]
    if "all" in names:
        from simt.runtime.devices import devices
        names = [device.name for device in devices()]
    return [name for name in dict.fromkeys(names) if name]


def pytest_generate_tests(metafunc):
    if "simt_device" in metafunc.fixturenames:
        names = requested_devices(metafunc.config.getoption("--simt-device"))
        metafunc.parametrize("simt_device", names, indirect=True,
                             ids=[name.replace(":", "_") for name in names])


@pytest.fixture
def simt_device(request):
    """The simt Device under test, current for the test's duration."""
    from simt.errors import NotSupportedError
    from simt.runtime.devices import use_device
    name = getattr(request, "param", "cpu")
    gpu_only = request.node.get_closest_marker("requires_gpu") is not None
    if gpu_only and not name.startswith("cuda"):
        pytest.skip(f"requires a GPU; this run is on {name}")
    try:
        context = use_device(name)
        device = context.__enter__()
    except (NotSupportedError, ValueError) as exc:
        pytest.skip(f"device {name} is not available here: {exc}")
    try:
        yield device
    finally:
        context.__exit__(None, None, None)


def pytest_runtest_setup(item):
    """A requires_gpu test that does not take simt_device runs only where a GPU is."""
    if item.get_closest_marker("requires_gpu") and "simt_device" not in item.fixturenames:
        from simt.runtime.devices import devices
        if not any(device.kind == "cuda" for device in devices()):
            pytest.skip("requires a GPU; this machine has none")


def poison(shape, dtype):
    """A host array that no correct kernel leaves as it is: NaN for floats, the bytes
    0x5A for integers, True for bools. Launch into it and compare every element."""
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.full(shape, np.nan, dtype=dtype)
    if dtype.kind == "b":
        return np.ones(shape, dtype=dtype)
    count = int(np.prod(shape, dtype=np.int64))
    return np.frombuffer(b"\x5a" * (count * dtype.itemsize), dtype=dtype).reshape(shape).copy()


def random_array(rng, shape, dtype):
    """Random values of ``dtype`` that are never zero (bools: random): integers in
    [-100, -1] and [1, 100] (unsigned: [1, 100]), floats standard normal."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        values = rng.integers(1, 101, size=shape)
        if dtype.kind == "i":
            values = values * rng.choice([-1, 1], size=shape)
        return values.astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    values = rng.standard_normal(shape)
    values[values == 0] = 1.0
    return values.astype(dtype)
