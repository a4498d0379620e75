"""The device registry: which devices exist, and which one this host thread uses.

A ``Device`` is a name ('cuda:0', 'cpu', 'sim') plus launch options; the backend
that does the work is created on first use and shared by every ``Device`` object
of that name. Options such as the CPU's ``boundscheck`` live on the Device, so
``set_device('cpu', boundscheck=False)`` makes the current device a new Device
object named 'cpu' that carries those options, over the same backend and memory.
Devices compare equal by name: arrays made under one set of options work under
any other.
"""

import contextlib
import dataclasses
import threading

from simt.compiler.options import DEFAULTS, refuse_checks
from simt.config import config
from simt.errors import NotSupportedError

# Options each kind of device accepts, with their defaults (compiler/options.py holds the
# compile defaults; ``checks`` is refused until checked mode exists).
_OPTION_DEFAULTS = {
    "cpu": lambda: {"boundscheck": DEFAULTS["cpu"].boundscheck, "checks": False},
    "cuda": lambda: {"boundscheck": DEFAULTS["cuda"].boundscheck},
    "sim": dict,
}


@dataclasses.dataclass
class DeviceProperties:
    """What ``Device.properties`` reports: the fields of cudaDeviceProp that matter here.

    Sizes are in bytes, clock rates in kHz (as cudaDeviceProp). ``None`` means unknown.
    """

    name: str = "unknown"
    kind: str = "abstract"
    compute_capability: tuple = (0, 0)
    multiprocessor_count: int = 1
    warp_size: int = 32
    max_threads_per_block: int = 1024
    max_block_dim: tuple = (1024, 1024, 64)
    max_grid_dim: tuple = (2**31 - 1, 65535, 65535)
    max_threads_per_multiprocessor: int = 2048
    max_blocks_per_multiprocessor: int = 32
    shared_memory_per_block: int = 48 * 1024
    shared_memory_per_block_optin: int = 227 * 1024
    shared_memory_per_multiprocessor: int = 228 * 1024
    total_memory: int = 0
    total_constant_memory: int = 65536
    max_registers_per_block: int = 65536
    registers_per_multiprocessor: int = 65536
    l2_cache_size: "int | None" = None
    clock_rate: "int | None" = None
    memory_clock_rate: "int | None" = None
    memory_bus_width: "int | None" = None
    texture_alignment: int = 512
    max_pitch: int = 2**31 - 1
    async_engine_count: int = 0
    concurrent_kernels: bool = True
    cooperative_launch: bool = True
    unified_addressing: bool = True
    managed_memory: bool = True
    can_map_host_memory: bool = True
    integrated: bool = False
    ecc_enabled: bool = False
    pci_bus_id: "str | None" = None
    driver_version: "str | None" = None

    def as_dict(self):
        """The properties as a plain dict, in declaration order."""
        return dataclasses.asdict(self)


# One backend per device name, shared by every Device object of that name.
_backends = {}
_backends_lock = threading.Lock()


def _make_backend(kind, index):
    if kind == "cpu":
        return _cpu_backend_class()()
    if kind == "cuda":
        from simt.backends.cuda.device import CudaBackend
        return CudaBackend(index)
    if kind == "sim":
        try:
            from simt.backends.sim.device import SimBackend
        except ModuleNotFoundError as exc:
            raise NotSupportedError("the 'sim' device is not available in this build of simt; "
                                    "use 'cpu', which checks every index") from exc
        return SimBackend()
    raise ValueError(f"no backend for device kind {kind!r}")


def _cpu_backend_class():
    try:
        from simt.backends.cpu.device import CpuBackend
    except ModuleNotFoundError as exc:
        if exc.name != "simt.backends.cpu.device":
            raise
        # The full CPU backend (kernels) is absent: memory still works.
        from simt.backends.cpu.memory import CpuMemory as CpuBackend
    return CpuBackend


class Device:
    """A device kernels run on and arrays live on: 'cuda:N', 'cpu' or 'sim'.

    Attributes: ``name``, ``kind`` ('cpu', 'cuda' or 'sim'), ``index``,
    ``options`` (e.g. the CPU's ``boundscheck``),
    ``backend`` (created on first use) and ``properties``.
    """

    def __init__(self, kind, index=0, **options):
        if kind not in _OPTION_DEFAULTS:
            raise ValueError(f"unknown device kind {kind!r}")
        self.kind = kind
        self.index = index
        self.name = f"cuda:{index}" if kind == "cuda" else kind
        self.options = _OPTION_DEFAULTS[kind]()
        self._set_options(options)

    def _set_options(self, options):
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            valid = ", ".join(sorted(self.options)) or "none"
            raise ValueError(f"device {self.name!r} has no option {', '.join(unknown)} "
                             f"(its options: {valid})")
        refuse_checks(options.get("checks"))
        self.options.update(options)

    def with_options(self, **options):
        """A Device of the same name and backend with some options changed."""
        device = Device(self.kind, self.index, **self.options)
        device._set_options(options)
        return device

    @property
    def backend(self):
        """The backend object (shared by every Device of this name)."""
        backend = _backends.get(self.name)
        if backend is None:
            with _backends_lock:
                backend = _backends.get(self.name)
                if backend is None:
                    backend = _backends[self.name] = _make_backend(self.kind, self.index)
        return backend

    @property
    def properties(self):
        """The device's ``DeviceProperties``."""
        return self.backend.properties()

    def synchronize(self):
        """Wait for all work on this device (cudaDeviceSynchronize)."""
        self.backend.synchronize()

    def __eq__(self, other):
        return isinstance(other, Device) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        defaults = _OPTION_DEFAULTS[self.kind]()
        changed = "".join(f", {key}={value!r}" for key, value in self.options.items()
                          if defaults.get(key) != value)
        return f"Device({self.name!r}{changed})"


_cuda_cache = None


def _cuda_devices():
    """The GPUs, as Devices; [] when cuda-bindings or a driver is missing (never an error)."""
    global _cuda_cache
    if _cuda_cache is None:
        try:
            from simt.backends.cuda import device as cudadev
            count = int(cudadev.device_count())
        except Exception:   # no bindings, no driver, no GPU: all mean "no GPUs"
            count = 0
        _cuda_cache = [Device("cuda", index) for index in range(count)]
    return _cuda_cache


def _extra_devices():
    """Devices listed after 'cpu'. The hook for 'sim', once its backend exists."""
    return []


def devices():
    """Every device: the GPUs ('cuda:0', ...) first, then 'cpu'."""
    return [*_cuda_devices(), Device("cpu"), *_extra_devices()]


def _parse(spec):
    """A new Device (default options) for a spec: a Device, an int, or a name."""
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, bool):
        raise TypeError("a device is a name, an int (GPU index) or a simt Device, not a bool")
    if isinstance(spec, int):
        spec = f"cuda:{spec}"
    if not isinstance(spec, str):
        raise TypeError(f"a device is a name, an int (GPU index) or a simt Device, not {spec!r}")
    name = spec.strip().lower()
    if name in ("cpu", "cpu:0"):
        return Device("cpu")
    if name == "sim":
        return Device("sim")
    if name in ("cuda", "gpu"):
        name = "cuda:0"
    gpus = _cuda_devices()
    for gpu in gpus:
        if gpu.name == name:
            return Device("cuda", gpu.index)
    valid = ", ".join([d.name for d in gpus] + ["cpu", "sim"])
    raise ValueError(f"no device {spec!r} on this machine; valid devices: {valid}")


def lookup(spec=None, **options):
    """The Device for ``spec`` with ``options`` applied; ``spec=None`` is the current device."""
    device = get_device() if spec is None else _parse(spec)
    if device.kind == "cpu":
        refuse_checks(config.checks)
    return device.with_options(**options) if options else device


def _starting_device():
    if config.device:
        try:
            return lookup(config.device)
        except ValueError as exc:
            raise ValueError(f"SIMT_DEVICE={config.device!r}: {exc}") from None
    gpus = _cuda_devices()
    return gpus[0] if gpus else lookup("cpu")


class _Current(threading.local):
    device = None        # this host thread's current Device (None until first use)


_local = _Current()


def get_device():
    """The current device of this host thread (first use: SIMT_DEVICE, else the first GPU, else cpu)."""
    device = getattr(_local, "device", None)
    if device is None:
        device = _local.device = _starting_device()
    return device


def set_device(spec, **options):
    """Make ``spec`` the current device of this host thread, and return it.

    ``spec`` is 'cpu', 'cuda:N', 'sim', an int (a GPU index) or a Device.
    Options (CPU: ``boundscheck=True``; ``checks=True`` is refused until checked mode
    exists) apply to this
    selection; selecting the device again without them restores the defaults.
    """
    device = lookup(spec, **options)
    _local.device = device
    return device


@contextlib.contextmanager
def use_device(spec, **options):
    """``with use_device('cpu', boundscheck=False): ...``: a current device for the block, then the previous one."""
    previous = getattr(_local, "device", None)
    device = set_device(spec, **options)
    try:
        yield device
    finally:
        _local.device = previous


def synchronize():
    """Wait for all work on the current device (cudaDeviceSynchronize); raise pending launch errors."""
    get_device().backend.synchronize()
