"""numba-cuda's host side: streams, events and devices over simt's (numba numbers the
devices of the current device's kind)."""
import contextlib

from ..errors import CudaError
from ..runtime import arrays as _arrays, devices as _devices, streams as _streams
from .attributes import read as _read_attribute


def numba_stream(stream):
    """A stream argument as simt takes it: numba's 0 is the default stream (None)."""
    return None if stream is None or (isinstance(stream, int) and stream == 0) else stream


class Stream(_streams.Stream):
    """numba's Stream: simt's, with ``auto_synchronize()``."""

    @contextlib.contextmanager
    def auto_synchronize(self):
        yield self
        self.synchronize()


def external_stream(ptr):
    """A stream over another library's CUstream address (simt.Stream.from_handle)."""
    return Stream.from_handle(ptr)


def stream():
    return Stream()


def default_stream():
    return _streams.default_stream()


legacy_default_stream = per_thread_default_stream = default_stream


class Event(_streams.Event):
    """numba's Event: simt's, with ``wait(stream)`` and ``elapsed_time``."""

    def record(self, stream=0):
        return super().record(stream=numba_stream(stream))

    def wait(self, stream=0):
        (numba_stream(stream) or default_stream()).wait_event(self)


def event(timing=True):
    return Event(timing=timing)


def event_elapsed_time(evtstart, evtend):
    return evtstart.elapsed_time(evtend)


def synchronize():
    _devices.synchronize()


def _same_kind():
    """numba numbers the GPUs; over simt, the devices of the current one's kind."""
    kind = _devices.get_device().kind
    return [d for d in _devices.devices() if d.kind == kind]


class _DeviceView:
    """numba's Device: ``id``, ``name``, ``compute_capability`` and CUDA's attribute
    names (``MAX_THREADS_PER_BLOCK``, ``MAX_BLOCK_DIM_X``, ``MULTIPROCESSOR_COUNT``, ...:
    attributes.py) over a simt Device."""

    def __init__(self, index, dev):
        self.id, self.simt_device = index, dev
        p = dev.properties
        self.name = p.name.encode() if isinstance(p.name, str) else p.name
        self.compute_capability = tuple(p.compute_capability)

    def __getattr__(self, name):
        if name.startswith("_") or "simt_device" not in self.__dict__:
            raise AttributeError(name)
        value = _read_attribute(self.__dict__["simt_device"], name)
        setattr(self, name, value)           # numba reads each attribute once, too
        return value

    def __repr__(self):
        return f"<simt device {self.id} '{self.name.decode()}' ({self.simt_device.name})>"

    @property
    def supports_float16(self):
        return self.compute_capability >= (5, 3) or self.simt_device.kind != "cuda"

    @property
    def supports_bfloat16(self):
        return self.compute_capability >= (8, 0) or self.simt_device.kind != "cuda"

    def get_device_identity(self):
        return {"pci_domain_id": self.PCI_DOMAIN_ID, "pci_bus_id": self.PCI_BUS_ID,
                "pci_device_id": self.PCI_DEVICE_ID}

    def __enter__(self):
        self._used = _devices.use_device(self.simt_device)
        self._used.__enter__()
        return self

    def __exit__(self, *exc):
        return self._used.__exit__(*exc)

    def reset(self):
        self.simt_device.synchronize()


class _Context:
    """numba's Context: ``device``, ``get_memory_info()``, ``synchronize()``."""

    def __init__(self, view):
        self.device = view

    def get_memory_info(self):
        with _devices.use_device(self.device.simt_device):
            return _arrays.mem_get_info()

    def synchronize(self):
        self.device.simt_device.synchronize()


def list_devices():
    return [_DeviceView(i, d) for i, d in enumerate(_same_kind())]


gpus = type("GPUs", (), {"__getitem__": lambda self, i: list_devices()[i],
                         "__len__": lambda self: len(_same_kind()),
                         "__iter__": lambda self: iter(list_devices()),
                         "current": property(lambda self: get_current_device())})()


def get_current_device():
    current = _devices.get_device()
    return _DeviceView(_same_kind().index(current), current)


def current_context(devnum=None):
    return _Context(get_current_device() if devnum is None else list_devices()[devnum])


def select_device(device_id):
    dev = _same_kind()[device_id]
    _devices.set_device(dev)
    return _DeviceView(device_id, dev)


def profile_start():
    """numba's cuda.profile_start: cuProfilerStart on a GPU (a profiler started with
    ``--capture-range=cudaProfilerApi`` collects from here); nothing on the cpu and sim
    devices, which no CUDA profiler watches."""
    _devices.get_device().backend.profiler(True)


def profile_stop():
    """numba's cuda.profile_stop: cuProfilerStop on a GPU; nothing on the cpu and sim."""
    _devices.get_device().backend.profiler(False)


@contextlib.contextmanager
def profiling():
    """numba's cuda.profiling(): profile_start() on entry, profile_stop() on exit."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()


def close():
    _devices.synchronize()


def is_available():
    return bool(_devices.devices())


def detect():
    """Print the devices simt can use (numba prints the GPUs); True when there are any."""
    found = _devices.devices()
    print(f"Found {len(found)} simt devices")
    for i, d in enumerate(found):
        print(f"id {i} {d.properties.name} [{d.name}]")
    return bool(found)


class CudaSupportError(CudaError):
    """numba's error for a missing CUDA driver (simt falls back to the CPU device)."""
