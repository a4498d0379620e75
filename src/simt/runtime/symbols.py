"""Module-level symbols, host side: ``simt.Constant`` (``__constant__``), ``simt.Global``
(``__device__``) and ``simt.Managed`` (``__managed__``).

Kernels name them as module-level globals (compiler/calls.py turns a ``_Symbol`` into a
declared array); each device that runs such a kernel holds the symbol's storage: the CPU
and sim devices use the symbol's own NumPy array (``_Symbol.host``), a GPU a device
allocation (managed memory for ``Managed``; a __constant__ global of each module for
``Constant``), made by backends/cuda/kernels.py. ``device_array()`` is
cudaGetSymbolAddress: a DeviceArray over the storage a device holds, made there now if no
kernel has placed it yet.
"""
from typing import Any

import numpy as np

from simt.lang.memory import _Symbol
from simt.runtime import devices
from simt.runtime.arrays import DeviceArray, DeviceSpec


class _HostSide:
    """What the host does with a symbol beyond copies (those are _Symbol's)."""

    def device_array(self: "_Symbol", device: DeviceSpec = None) -> DeviceArray:
        """A DeviceArray view of this symbol's storage on ``device`` (default: the current
        one), as cudaGetSymbolAddress gives its address: kernels that read the symbol see
        what is written through the view, and the view sees what they write. The storage
        is made on that device now if no kernel using the symbol has run there. GPUs keep a
        ``Constant`` in each module that reads it, so no one address holds it there: on a
        GPU, ``device_array()`` of a Constant raises NotSupportedError (update it with
        ``copy_from``)."""
        device = devices.lookup(device)
        alloc = device.backend.symbol_storage(self)
        view = DeviceArray(self.shape, self.dtype, alloc=alloc, device=device)
        view.readonly = bool(self.readonly)
        view.base = self          # a view: free() refuses it (the symbol owns the memory)
        return view

    def copy_to_host(self: "_Symbol", stream: Any = None) -> np.ndarray:
        """cudaMemcpyFromSymbol: the current device's contents (each device that ran a
        kernel using the symbol holds its own copy; the CPU and sim devices hold it in the
        symbol's host array, which a read from a GPU must not overwrite)."""
        handle = self.placements.get(devices.lookup(None).name)
        if handle is None:                 # the cpu and sim devices, or not placed there yet
            return self.host.copy()
        out = np.empty_like(self.host)
        handle.read(out, stream)
        return out

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)


class Constant(_HostSide, _Symbol):
    """A module-level ``__constant__`` array: kernels read it as ``C[i]``; the host
    updates it with ``.copy_from(host_array)`` (cudaMemcpyToSymbol)."""

    readonly = True

    def __init__(self, host_array):
        host = np.ascontiguousarray(host_array)
        super().__init__(host.shape, host.dtype)
        self.host[...] = host


class Global(_HostSide, _Symbol):
    """A module-level ``__device__`` array, read and written by kernels; the host
    reads it with ``.copy_to_host()`` and writes it with ``.copy_from()``; zeroed at
    first, as CUDA's ``__device__`` variables are."""


class Managed(_HostSide, _Symbol):
    """A module-level ``__managed__`` array: kernels read and write it as a ``simt.Global``,
    and the host reads and writes it in place, as a NumPy array (``np.asarray(M)``,
    ``M[i]``, ``M[:] = values``): on a GPU it is managed memory (cuMemAllocManaged), on
    the CPU and sim devices host memory. Like Global, each device that runs a kernel using
    it holds its own storage (``copy_from`` writes all of them); the host's view is the
    current device's. As in CUDA, the host must not touch it while a kernel that uses it
    may be running: synchronize first (on GPUs without concurrent managed access simt
    synchronizes for you, as for ``simt.managed_array``)."""

    managed = True

    def __array__(self, dtype=None, copy=None):
        """The current device's storage, the memory itself (a copy with ``copy=True``)."""
        host = np.asarray(self.device_array())
        if copy:
            host = host.copy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def copy_to_host(self, stream=None):
        """A copy of the current device's storage (cudaMemcpyFromSymbol), in the order of
        ``stream`` (None: the legacy default stream, and done on return)."""
        view = self.device_array()
        host = view.copy_to_host(stream=stream)
        if stream is not None:
            stream.synchronize()
        return host

    def __getitem__(self, key):
        return np.asarray(self)[key]

    def __setitem__(self, key, value):
        np.asarray(self)[key] = value

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        return f"Managed(shape={self.shape}, dtype={self.dtype})"
