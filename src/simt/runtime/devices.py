"""The device registry: which devices exist, and which one this host thread uses.

A ``Device`` is a name ('cuda:0', 'cpu') plus launch options; the backend that
does the work (its class found by name in ``BACKENDS``) is created on first use and
shared by every ``Device`` object of that name. Options such as the CPU's
``boundscheck`` live on the Device, so ``set_device('cpu', boundscheck=False)``
makes the current device a new Device object named 'cpu' that carries those
options, over the same backend and memory.
Devices compare equal by name: arrays made under one set of options work under
any other.
"""

import contextlib
from typing import TYPE_CHECKING, Any, Iterator
import importlib
import threading

from simt.config import config
from simt.errors import InvalidConfiguration, NotSupportedError
from simt.logs import log

if TYPE_CHECKING:
    from simt.runtime.backend import DeviceProperties

# The device kinds, and the backend class each is made from ("module:Class"), imported
# on first use. The order is the order of simt.devices(). A new device is a folder under
# simt/backends with its Backend subclass and its lowerings (a ``lower`` package that
# declares the target to lang/registry.py), plus one line here.
BACKENDS = {
    "cuda": "simt.backends.cuda.device:CudaBackend",
    "cpu": "simt.backends.cpu.device:CpuBackend",
    "sim": "simt.backends.sim.device:SimBackend",
}

_classes = {}


def lowering_module(kind):
    """The package that registers device kind's lowerings with the registry (lang/registry.py):
    ``lower`` in the folder of its Backend class."""
    return BACKENDS[kind].partition(":")[0].rsplit(".", 1)[0] + ".lower"


def load_lowerings():
    """Register every device's lowerings (a compile loads only its own device's); the
    registry's targets are then the kinds of BACKENDS."""
    for kind in BACKENDS:
        importlib.import_module(lowering_module(kind))


def backend_class(kind):
    """The Backend subclass of a device kind, imported by its name in BACKENDS."""
    cls = _classes.get(kind)
    if cls is None:
        if kind not in BACKENDS:
            raise ValueError(f"unknown device kind {kind!r} (known: {', '.join(BACKENDS)})")
        module, _, name = BACKENDS[kind].partition(":")
        cls = _classes[kind] = getattr(importlib.import_module(module), name)
    return cls


# One backend per device name, shared by every Device object of that name.
_backends = {}
_backends_lock = threading.Lock()


class Device:
    """A device kernels run on and arrays live on: 'cuda:N' or 'cpu'.

    Attributes: ``name``, ``kind`` (a key of BACKENDS: 'cpu' or 'cuda'), ``index``,
    ``options`` (e.g. the CPU's ``boundscheck`` and ``checks``),
    ``backend`` (created on first use) and ``properties``.
    """

    def __init__(self, kind: str, index: int = 0, **options: Any):
        cls = backend_class(kind)
        self.kind = kind
        self.index = index
        self.name: str = cls.device_name(index)
        self.options = cls.default_options()
        self._set_options(options)

    def _set_options(self, options):
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise ValueError(f"device {self.name!r} has no option {', '.join(unknown)} "
                             f"(its options: {valid})")
        self.options.update(options)

    def with_options(self, **options: Any) -> "Device":
        """A Device of the same name and backend with some options changed."""
        device = Device(self.kind, self.index, **self.options)
        device._set_options(options)
        return device

    @property
    def backend(self) -> Any:
        """The backend object (shared by every Device of this name)."""
        backend = _backends.get(self.name)
        if backend is None:
            with _backends_lock:
                backend = _backends.get(self.name)
                if backend is None:
                    backend = _backends[self.name] = backend_class(self.kind)(self.index)
        return backend

    @property
    def properties(self) -> "DeviceProperties":
        """The device's ``DeviceProperties``."""
        return self.backend.properties()

    def synchronize(self) -> None:
        """Wait for all work on this device (cudaDeviceSynchronize)."""
        self.backend.synchronize()

    def __eq__(self, other):
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        defaults = backend_class(self.kind).default_options()
        changed = "".join(f", {key}={value!r}" for key, value in self.options.items()
                          if defaults.get(key) != value)
        return f"Device({self.name!r}{changed})"


_found = {}


def _devices_of(kind):
    """The devices of one kind, counted once; [] where none can be used (never an error:
    for GPUs, no cuda-bindings, no driver and no GPU all mean none)."""
    if kind not in _found:
        cls = backend_class(kind)
        try:
            count = int(cls.device_count())
        except Exception:
            count = 0
        _found[kind] = [Device(kind, index) for index in range(count)]
    return _found[kind]


def why_none(kind):
    """Why no device of ``kind`` is listed (None when some are)."""
    if _devices_of(kind):
        return None
    try:
        return backend_class(kind).why_none()
    except Exception as exc:          # a backend that cannot even say why
        return f"{type(exc).__name__}: {exc}"


def devices() -> "list[Device]":
    """Every device, kind by kind in BACKENDS order: the GPUs ('cuda:0', ...), then 'cpu'."""
    return [device for kind in BACKENDS for device in _devices_of(kind)]


_ALIASES = {"cpu:0": "cpu", "cuda": "cuda:0", "gpu": "cuda:0"}


def _parse(spec):
    """A new Device (default options) for a spec: a Device, an int (a GPU index), or a name."""
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, bool):
        raise TypeError("a device is a name, an int (GPU index) or a simt Device, not a bool")
    if isinstance(spec, int):
        spec = f"cuda:{spec}"
    if not isinstance(spec, str):
        raise TypeError(f"a device is a name, an int (GPU index) or a simt Device, not {spec!r}")
    name = _ALIASES.get(spec.strip().lower(), spec.strip().lower())
    kind = name.partition(":")[0]
    for device in _devices_of(kind) if kind in BACKENDS else ():   # only that backend loads
        if device.name == name:
            return Device(device.kind, device.index)
    valid = ", ".join(d.name for d in devices())
    raise ValueError(f"no device {spec!r} on this machine; valid devices: {valid}")


def lookup(spec=None, **options):
    """The Device for ``spec`` with ``options`` applied; ``spec=None`` is the current device."""
    device = get_device() if spec is None else _checked_mode(_parse(spec))
    return device.with_options(**options) if options else device


def _checked_mode(device):
    """SIMT_CHECKS=1 selects checked mode on a device that has the ``checks`` option (the
    CPU and GPUs; an explicit ``checks=False`` in the same call still turns it off)."""
    if config.checks and device.options.get("checks") is False:
        return device.with_options(checks=True)
    return device


def _starting_device():
    if config.device:
        try:
            device = _parse(config.device)
        except (ValueError, NotSupportedError) as exc:
            raise type(exc)(f"SIMT_DEVICE={config.device!r}: {exc}") from None
    else:                          # the first GPU, else the CPU (the sim device is chosen)
        device = (_devices_of("cuda") or _devices_of("cpu"))[0]
        if device.kind == "cpu":
            log.info("no GPU: %s; running on the CPU device", why_none("cuda"))
    return _checked_mode(device)


class _Current(threading.local):
    device = None        # this host thread's current Device (None until first use)


_local = _Current()


def get_device() -> "Device":
    """The current device of this host thread (first use: SIMT_DEVICE, else the first GPU, else cpu)."""
    device = getattr(_local, "device", None)
    if device is None:
        device = _local.device = _starting_device()
    return device


def set_device(spec: "str | int | Device", **options) -> "Device":
    """Make ``spec`` the current device of this host thread, and return it.

    ``spec`` is 'cpu', 'cuda:N', an int (a GPU index) or a Device.
    Options (CPU: ``boundscheck=True``, ``checks=False``; GPUs: ``boundscheck=False``, ``checks=False``, ``narrowing=False``: docs/finding-bugs.md) apply to this selection; selecting the device again without them restores the defaults.
    """
    device = lookup(spec, **options)
    _local.device = device
    return device


@contextlib.contextmanager
def use_device(spec: "str | int | Device", **options) -> "Iterator[Device]":
    """``with use_device('cpu', boundscheck=False): ...``: a current device for the block, then the previous one."""
    previous = getattr(_local, "device", None)
    device = set_device(spec, **options)
    try:
        yield device
    finally:
        _local.device = previous


def synchronize() -> None:
    """Wait for all work on the current device (cudaDeviceSynchronize); raise pending launch errors."""
    get_device().backend.synchronize()


def stream_handle_of(stream, device, what):
    """The backend handle of a ``stream`` argument for work on ``device``: a simt.Stream
    of that device, or None or 0 for the legacy default stream (None). For modules that
    sit below runtime/streams.py (streams.stream_handle says the same)."""
    if stream is None or (isinstance(stream, int) and not isinstance(stream, bool)
                          and stream == 0):
        return None
    if not hasattr(stream, "impl") or not hasattr(stream, "handle"):
        raise InvalidConfiguration(f"{what}: the stream must be a simt.Stream, "
                                   f"simt.default_stream() or None, got {stream!r}")
    if stream.device != device:
        raise InvalidConfiguration(f"{what}: the stream belongs to {stream.device.name}, the "
                                   f"work to {device.name}; make the stream while that device "
                                   f"is current (simt.use_device)")
    return stream.handle


DEVICE_FLAGS = ("schedule_auto", "schedule_spin", "schedule_yield", "schedule_blocking_sync",
                "map_host")


def set_device_flags(*flags: str, device: "str | int | Device | None" = None) -> None:
    """How host threads wait for the device (cudaSetDeviceFlags): at most one of
    'schedule_auto', 'schedule_spin', 'schedule_yield', 'schedule_blocking_sync', plus
    'map_host' (mapped host memory; always on in current CUDA). On the CPU device,
    spin and yield make a waiting thread poll, giving up the GIL between polls, and
    blocking_sync and auto make it sleep on a condition (docs/memory.md)."""
    unknown = [f for f in flags if f not in DEVICE_FLAGS]
    if unknown:
        raise ValueError(f"unknown device flags {unknown}; the flags are "
                         f"{', '.join(DEVICE_FLAGS)}")
    schedules = [f for f in flags if f.startswith("schedule_")]
    if len(set(schedules)) > 1:
        raise ValueError(f"device flags {schedules}: choose one scheduling flag")
    lookup(device).backend.set_flags(frozenset(flags))
