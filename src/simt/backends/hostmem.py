"""The host devices' memory (CPU, sim): host memory in aligned NumPy buffers.

``HostMemory`` is the memory half of the host devices (allocation, copies,
properties); the CPU and sim backends add streams and kernels. A
pointer is a host address; each Allocation keeps its NumPy buffer alive, so
memory is freed when the last array over it goes away.
"""

import ctypes
import functools
import os
import platform
import uuid

import numpy as np

from simt.runtime.backend import Allocation, Backend, DeviceProperties
from simt.errors import OutOfMemoryError
from . import aligned

ALIGNMENT = 64          # a cache line: as good as cudaMalloc's 256 for vector loads on the host
PITCH = 512            # row alignment of pitched allocations (texture_alignment)
PITCH = 512            # row alignment of pitched allocations (texture_alignment)
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def aligned_buffer(nbytes, alignment=ALIGNMENT):
    """An uninitialized uint8 NumPy array of nbytes whose address is a multiple of alignment."""
    return aligned.aligned_buffer(nbytes, alignment)


def fill(ptr, bits, element_size, count):
    """cuMemsetD8/D16/D32 on host memory."""
    if count:
        kind = {1: ctypes.c_uint8, 2: ctypes.c_uint16, 4: ctypes.c_uint32}[element_size]
        np.ctypeslib.as_array((kind * count).from_address(ptr))[:] = bits


def byte_rows(side, extent):
    """A (slices, rows, row bytes) uint8 view of one side of a 2-D/3-D copy
    (runtime/memory.Side): a CudaArray's texels, or rows at a pitch from an address."""
    width, height, depth = extent
    if side.kind == "array":
        return side.where.host.view(np.uint8).reshape(depth, height, width)
    slice_pitch = side.pitch * side.height
    span = (depth - 1) * slice_pitch + (height - 1) * side.pitch + width
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * span).from_address(side.where))
    return np.lib.stride_tricks.as_strided(raw, (depth, height, width),
                                           (slice_pitch, side.pitch, 1))


def row_spans(side, extent):
    """The (start, stop) address ranges of the rows of one pitched side of a 2-D/3-D copy
    (the bytes it writes: the padding between rows is not written)."""
    width, height, depth = extent
    slice_pitch = side.pitch * side.height
    return [(start, start + width)
            for start in (side.where + z * slice_pitch + y * side.pitch
                          for z in range(depth) for y in range(height))]


def _meminfo():
    """{'MemTotal': bytes, 'MemAvailable': bytes, ...} from /proc/meminfo, or {}."""
    try:
        with open("/proc/meminfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    info = {}
    for line in lines:
        key, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            info[key] = int(fields[0]) * (1024 if fields[1:] == ["kB"] else 1)
    return info


def _cpuinfo_field(field):
    """The first value of a /proc/cpuinfo field, or None."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == field:
                    return value.strip()
    except OSError:
        pass
    return None


def _clock_khz():
    """The CPU clock in kHz: the maximum from cpufreq, else /proc/cpuinfo's MHz."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            return int(f.read())
    except (OSError, ValueError):
        pass
    mhz = _cpuinfo_field("cpu MHz")
    try:
        return int(float(mhz) * 1000) if mhz else None
    except ValueError:
        return None


def _l2_bytes():
    try:
        return os.sysconf("SC_LEVEL2_CACHE_SIZE") or None
    except (ValueError, OSError, AttributeError):
        return None


class HostMemory(Backend):
    """Memory, copies and properties of the CPU device (kernels: see CpuBackend)."""

    kind = "cpu"
    host_accessible = True            # device memory is host memory

    def alloc(self, nbytes, alignment=ALIGNMENT):
        """An Allocation of nbytes of uninitialized host memory, aligned to ``alignment``."""
        buffer = self._buffer(nbytes, alignment)
        return Allocation(buffer.ctypes.data, nbytes, self, keepalive=buffer)

    def _buffer(self, nbytes, alignment):
        free, _ = self.mem_get_info()
        if nbytes > free:
            raise OutOfMemoryError(f"cannot allocate {nbytes} bytes on the CPU device: "
                                   f"{free} bytes are free")
        try:
            buffer = aligned_buffer(nbytes, alignment)
        except MemoryError:
            raise OutOfMemoryError(f"cannot allocate {nbytes} bytes on the CPU device: "
                                   f"{free} bytes were reported free") from None
        return buffer

    def alloc_pinned(self, nbytes, write_combined=False):
        """Page-aligned host memory as a uint8 NumPy array (as the CUDA backend returns);
        write-combining is a bus hint with nothing to change here."""
        return self._buffer(nbytes, PAGE)

    def alloc_mapped(self, nbytes, write_combined=False):
        """(uint8 NumPy array, device pointer): the same address, as host memory is device memory."""
        buffer = self.alloc_pinned(nbytes)
        return buffer, buffer.ctypes.data

    def alloc_managed(self, nbytes):
        """An Allocation usable from host and device: on the CPU, any memory is."""
        return self.alloc(nbytes, alignment=PAGE)

    def alloc_pitch(self, width_bytes, height, element_size):
        """Rows padded to a multiple of PITCH bytes, the alignment cudaMallocPitch gives
        on current GPUs, so pitched code sees the same layout on both devices."""
        pitch = -(-max(width_bytes, 1) // PITCH) * PITCH
        return self.alloc(pitch * height), pitch

    def alloc_pitch(self, width_bytes, height, element_size):
        """Rows padded to a multiple of PITCH bytes, the alignment cudaMallocPitch gives
        on current GPUs, so pitched code sees the same layout on both devices."""
        pitch = -(-max(width_bytes, 1) // PITCH) * PITCH
        return self.alloc(pitch * height), pitch

    def free(self, ptr):
        """Nothing to do: the Allocation's NumPy buffer owns the memory."""

    def copy_htod(self, dst_ptr, host_array, stream=None):
        _check_contiguous(host_array)
        ctypes.memmove(dst_ptr, host_array.ctypes.data, host_array.nbytes)

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        _check_contiguous(host_array)
        ctypes.memmove(host_array.ctypes.data, src_ptr, host_array.nbytes)

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        ctypes.memmove(dst_ptr, src_ptr, nbytes)

    def memset(self, ptr, byte, nbytes, stream=None):
        ctypes.memset(ptr, byte, nbytes)

    def memset_elements(self, ptr, bits, element_size, count, stream=None):
        fill(ptr, bits, element_size, count)

    def synchronize(self):
        """Wait for outstanding work (none in the memory half; CpuBackend extends this)."""

    def mem_get_info(self):
        """(free, total) bytes of host memory."""
        info = _meminfo()
        if "MemTotal" in info:
            return info.get("MemAvailable", info.get("MemFree", 0)), info["MemTotal"]
        page = PAGE
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page

    generation = 0                   # simt.reset_device counts up (Allocation.generation)
    cache_config = "prefer_none"

    def set_cache_config(self, config):
        """Recorded: the host's caches take no preference (docs/device-control.md)."""
        self.cache_config = config

    def get_cache_config(self):
        return self.cache_config

    def set_access_policy(self, stream, policy):
        """Recorded on the stream by the runtime: the host has no L2 to set aside."""

    def set_function_attribute(self, loaded, name, value):
        """Recorded on the kernel by the runtime (which enforces max_dynamic_shared_size)."""

    def reset(self):
        """reset_device's part every host device shares: a new generation of memory (the
        Allocations of before are stale) and the default cache preference."""
        self.generation += 1
        vars(self).pop("cache_config", None)

    def stream_priority_range(self):
        """An sm_90 GPU's range, so code that picks priorities from it runs unchanged; the
        priority is kept on the stream and orders nothing here (docs/runtime.md)."""
        return (0, -5)

    def properties(self):
        """DeviceProperties of the host CPU, with CUDA's limits (sm_90) for launches."""
        return _cpu_properties()

    def prefetch(self, ptr, nbytes, target, stream=None):
        """Managed memory is host memory here, where every reader is: nothing to move."""

    def advise(self, ptr, nbytes, advice, target, unset=False):
        """Nothing to advise: managed memory is host memory, read by the host."""

    def attach_mem(self, stream, ptr, nbytes, flags):
        """Nothing to attach: the host and every stream reach all memory at any time
        (concurrent_managed_access); the runtime checked the arguments."""

    def symbol_storage(self, symbol):
        """The symbol's own host array, which kernels of this device read and write."""
        host = symbol.host
        allocation = Allocation(host.ctypes.data, host.nbytes, self, keepalive=host)
        allocation.managed = symbol.managed
        return allocation


@functools.lru_cache(maxsize=1)
def _cpu_properties():
    cores = os.cpu_count() or 1
    return DeviceProperties(
        name=_cpuinfo_field("model name") or platform.processor() or platform.machine() or "cpu",
        kind="cpu",
        compute_capability=(9, 0),
        multiprocessor_count=cores,
        total_memory=HostMemory().mem_get_info()[1],
        clock_rate=_clock_khz(),
        l2_cache_size=_l2_bytes(),
        integrated=True,
        concurrent_kernels=True,
        driver_version=f"simt cpu ({platform.machine()})",
        uuid=str(uuid.uuid5(uuid.NAMESPACE_DNS, f"simt-cpu.{platform.node()}")),
        # host memory is the device's: the host reaches it directly, atomics included
        direct_managed_mem_access_from_host=True,
        pageable_memory_access=True,
        pageable_memory_access_uses_host_page_tables=True,
        host_native_atomic_supported=True,
        # no L2 to set aside (docs/runtime.md): persisting windows are recorded only
        persisting_l2_cache_max_size=0,
        access_policy_max_window_size=0,
        numa_id=-1,
    )


def _check_contiguous(host_array):
    if not host_array.flags.c_contiguous:
        raise ValueError("internal: host copies need a C-contiguous NumPy array")
