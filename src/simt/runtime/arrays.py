"""Device arrays: n-d views over device memory, and the functions that make them.

A ``DeviceArray`` is an Allocation plus a byte offset, shape, strides and
dtype, exactly as a NumPy array is a buffer plus those. Basic indexing, ``.T``
and ``.reshape`` make views sharing the allocation. Copies to and from the host
of a non-contiguous view move the bytes the view spans, then apply the strides
on the host, so any layout NumPy can express copies correctly.

Other libraries' arrays come in through interop.py; pinned, mapped and managed host
arrays are made in hostarrays.py.
"""

import math
from typing import Any, Optional, Sequence, Union, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike, NDArray

from simt.runtime import devices, dlpack, memrecords, nvtx, pools
from simt.errors import NotSupportedError, OutOfMemoryError
from simt.devstreams import refuse_on_host

_BASIC_INDEX = (int, np.integer, slice, type(Ellipsis), type(None))


Shape = Union[int, Sequence[int]]                              # for the type hints
DeviceSpec = Optional[Union[str, int, "devices.Device"]]
HostArray = NDArray[Any]


def _c_strides(shape, itemsize):
    if 0 in shape:
        return (0,) * len(shape)     # as NumPy gives empty arrays
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _f_strides(shape, itemsize):
    return tuple(reversed(_c_strides(tuple(reversed(shape)), itemsize)))


def _span(shape, strides, itemsize):
    """(low, high): byte offsets, from element 0, of the memory a layout touches."""
    if 0 in shape:
        return 0, 0
    low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize
    return low, high


def _normalize_shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed: {shape}")
    return shape


_SIGS = {}          # (dtype, ndim, layout) -> the one T.Array for it
_SIG_CLASSES = {}   # (that T.Array, device name) -> the DeviceArray subclass of such arrays


def _contiguous(shape, strides, itemsize, dims):
    """NumPy's rule: strides match the running product over ``dims`` (extents of 1 aside)."""
    if 0 in shape:
        return True
    expected = itemsize
    for d in dims:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _signature(dtype, shape, strides):
    """The interned T.Array of an array: 'C', 'F' or 'A' as compiler.types.layout_of says."""
    ndim = len(shape)
    if _contiguous(shape, strides, dtype.itemsize, range(ndim - 1, -1, -1)):
        layout = "C"
    elif ndim > 1 and _contiguous(shape, strides, dtype.itemsize, range(ndim)):
        layout = "F"
    else:
        layout = "A"
    key = (dtype, ndim, layout)
    sig = _SIGS.get(key)
    if sig is None:
        from ..ir import types as T
        sig = _SIGS.setdefault(key, T.Array(*key))
    return sig


def _signature_class(key):
    """The DeviceArray subclass for one (signature, device name) (named DeviceArray: users
    never see it)."""
    cls = type("DeviceArray", (DeviceArray,), {"_sig": key[0], "__module__": __name__,
                                               "__qualname__": "DeviceArray"})
    return _SIG_CLASSES.setdefault(key, cls)


def _stream_handle(stream):
    """The backend handle of a simt Stream (None or 0: the default stream)."""
    if stream is None or (isinstance(stream, int) and stream == 0):
        return None
    refuse_on_host(stream, "a copy")
    return getattr(stream, "handle", stream)


def _wait(stream, backend):
    """Finish the work queued on ``stream`` (the device, for the default stream)."""
    if stream is not None and hasattr(stream, "synchronize"):
        stream.synchronize()
    else:
        backend.synchronize()


class _Interface:
    """Exposes an address as a NumPy array (via __array_interface__) and keeps its owner alive."""

    def __init__(self, ptr, shape, strides, dtype, owner, readonly=False):
        self.owner = owner
        self.__array_interface__ = {
            "version": 3, "shape": shape, "strides": strides, "typestr": dtype.str,
            "descr": dtype.descr, "data": (ptr, readonly)}


def _host_array(ptr, shape, strides, dtype, owner):
    """A NumPy array over host address ``ptr`` that keeps ``owner`` alive."""
    array = np.asarray(_Interface(ptr, shape, strides, dtype, owner))
    return array.view(dtype) if array.dtype != dtype else array


class DeviceArray:
    """An n-d array in device memory (numba's DeviceNDArray, CuPy's ndarray without the math).

    ``shape``, ``dtype``, ``strides`` (bytes), ``size``, ``ndim``, ``nbytes``,
    ``itemsize`` as NumPy; ``device``; ``ptr`` is the address of element 0 and
    ``alloc`` the Allocation that keeps the memory alive.
    """

    def __init__(self, shape: Shape, dtype: DTypeLike = np.float64,
                 strides: Optional[Sequence[int]] = None, order: str = "C", alloc: Any = None,
                 offset: int = 0, device: DeviceSpec = None):
        self.shape: "tuple[int, ...]" = _normalize_shape(shape)
        self.dtype: "np.dtype[Any]" = np.dtype(dtype)
        if strides is None:
            layout = _f_strides if order == "F" else _c_strides
            strides = layout(self.shape, self.dtype.itemsize)
        self.strides: "tuple[int, ...]" = tuple(int(s) for s in strides)
        if len(self.strides) != len(self.shape):
            raise ValueError(f"strides {self.strides} do not match shape {self.shape}")
        self.device = devices.lookup(device)
        if alloc is None:
            alloc = _allocate(self.device, _span(self.shape, self.strides, self.itemsize)[1])
        self.alloc = alloc
        self.offset = int(offset)
        # The layout and the device never change, so the class says them: a launch then
        # finds its prepared signature from type(arg) alone (runtime/launch.py), and an
        # array of another device takes the full path, which checks it can be reached.
        sig = _signature(self.dtype, self.shape, self.strides)
        key = (sig, self.device.name)
        self.__class__ = _SIG_CLASSES.get(key) or _signature_class(key)
        flat = (alloc.ptr + self.offset, *self.shape)
        if sig.layout == "A":
            flat += tuple(st // self.dtype.itemsize for st in self.strides)
        self._flat = flat      # a GPU kernel's parameters for this array (backends/cuda/params.py)

    # -- NumPy-like attributes -------------------------------------------------------

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (not of the span)."""
        return self.size * self.itemsize

    @property
    def ptr(self) -> int:
        """Address of element 0."""
        return self.alloc.ptr + self.offset

    @property
    def pitch(self) -> int:
        """Bytes from one row to the next (``strides[-2]``): a pitched_array's row pitch."""
        if self.ndim < 2:
            raise AttributeError(f"a {self.ndim}-D array has no row pitch")
        return self.strides[-2]

    @property
    def T(self) -> "DeviceArray":
        """The transpose: a view with axes reversed."""
        return self.transpose()

    def transpose(self, *axes: Any) -> "DeviceArray":
        """A view with axes permuted (reversed when none are given), as ndarray.transpose."""
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        axes = axes or tuple(reversed(range(self.ndim)))
        if sorted(int(a) % max(self.ndim, 1) for a in axes) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of {self.ndim} dimensions")
        axes = [int(a) % self.ndim for a in axes]
        return self._view([self.shape[a] for a in axes], [self.strides[a] for a in axes], 0)

    def _view(self, shape, strides, delta):
        view = DeviceArray(tuple(shape), self.dtype, tuple(strides), alloc=self.alloc,
                           offset=self.offset + delta, device=self.device)
        if self.readonly:
            view.readonly = True
        return self._viewing(view)

    def _viewing(self, view):
        """``view``, marked as a view of this array's memory (so free() refuses it)."""
        view.base = self if self.base is None else self.base
        return view

    def retyped(self, shape: Sequence[int], dtype: DTypeLike,
                strides: Sequence[int]) -> "DeviceArray":
        """A view of this array's memory as another dtype, shape and strides (bytes), from
        element 0 on (``simt.float4.view``)."""
        return self._viewing(DeviceArray(tuple(shape), dtype, tuple(strides), alloc=self.alloc,
                                         offset=self.offset, device=self.device))

    def _dummy(self):
        """A NumPy array with this layout over a 1-element buffer: for layout arithmetic only.

        It must never be read: its strides point past its buffer.
        """
        base = np.zeros(1, dtype=self.dtype)
        return np.lib.stride_tricks.as_strided(base, self.shape, self.strides, writeable=False)

    _sig = None        # the kernel-argument type: set by each signature's subclass
    readonly = False   # memory another library exported read-only: kernels must not write it
    base = None        # a view's: the array whose memory it views (as ndarray.base)

    def simt_type(self):
        """This array's kernel-argument type (one shared object per dtype, ndim and layout)."""
        return self._sig

    @property
    def flags(self) -> "dict[str, bool]":
        """{'C_CONTIGUOUS': bool, 'F_CONTIGUOUS': bool}, by NumPy's rules."""
        # worked out from shape and strides: every copy asks, and a NumPy array made to ask
        # (as_strided) cost ~4 us a copy
        shape, strides, itemsize, n = self.shape, self.strides, self.itemsize, len(self.shape)
        return {"C_CONTIGUOUS": _contiguous(shape, strides, itemsize, range(n - 1, -1, -1)),
                "F_CONTIGUOUS": _contiguous(shape, strides, itemsize, range(n))}

    def is_c_contiguous(self) -> bool:
        """True if the elements are contiguous in C (row-major) order."""
        return self.flags["C_CONTIGUOUS"]

    def is_f_contiguous(self) -> bool:
        """True if the elements are contiguous in Fortran (column-major) order."""
        return self.flags["F_CONTIGUOUS"]

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __repr__(self):
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device={self.device.name!r})"

    # -- views ------------------------------------------------------------------------

    @overload
    def __getitem__(self, key: "slice | tuple[slice, ...]") -> "DeviceArray": ...
    @overload
    def __getitem__(self, key: Any) -> Any: ...     # a view, or a NumPy scalar for all ints

    def __getitem__(self, key: Any) -> Any:
        """Basic indexing (ints, slices, ..., None) gives a view; all-int indices give a NumPy scalar."""
        view = self._index(key)
        if view.ndim == 0 and _all_ints(key):
            return view.copy_to_host()[()]
        return view

    def __setitem__(self, key: Any, value: Any) -> None:
        """``d[1:3] = x``: copy a host array, a scalar or a device array into the view."""
        view = self._index(key)
        if isinstance(value, DeviceArray):
            view.copy_from(value)
        else:
            view.copy_from(np.broadcast_to(np.asarray(value, dtype=self.dtype), view.shape))

    def _index(self, key):
        key = key if isinstance(key, tuple) else (key,)
        for item in key:
            if not isinstance(item, _BASIC_INDEX) or isinstance(item, (bool, np.bool_)):
                raise NotSupportedError(
                    f"device arrays take basic indices (ints, slices, ..., None), not {item!r}; "
                    "copy to the host for fancy indexing")
        if not any(item is Ellipsis for item in key):
            key = key + (Ellipsis,)          # keeps an all-int index a 0-d view
        dummy = self._dummy()
        picked = dummy[key]
        delta = picked.__array_interface__["data"][0] - dummy.__array_interface__["data"][0]
        return self._view(picked.shape, picked.strides, delta)

    def reshape(self, *shape: Any, order: str = "C") -> "DeviceArray":
        """A view with a new shape (one dimension may be -1); an error if that needs a copy."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        dummy = self._dummy()
        try:
            picked = np.reshape(dummy, shape, order=order, copy=False)
        except ValueError as exc:
            raise ValueError(f"cannot reshape {self!r} to {shape} without a copy "
                             f"({exc}); copy it first with .copy()") from None
        delta = picked.__array_interface__["data"][0] - dummy.__array_interface__["data"][0]
        return self._view(picked.shape, picked.strides, delta)

    def ravel(self) -> "DeviceArray":
        """A 1-d view of a C-contiguous array."""
        return self.reshape(-1)

    # -- copies -----------------------------------------------------------------------

    def _contiguous_order(self):
        """'C' or 'F' if the elements are contiguous that way, else None."""
        flags = self.flags
        return "C" if flags["C_CONTIGUOUS"] else "F" if flags["F_CONTIGUOUS"] else None

    @nvtx.copy
    def copy_to_host(self, out: Optional[HostArray] = None, stream: Any = None) -> HostArray:
        """Copy to a NumPy array (``out`` if given, else a new one of the same layout order); cudaMemcpy D2H."""
        backend = self.device.backend
        if out is not None:
            _check_destination(out, self.shape, self.dtype, "copy_to_host")
        order = self._contiguous_order()
        if order is not None and (out is None or _same_layout(out, self)):
            host = out if out is not None else np.empty(self.shape, self.dtype, order=order)
            if host.size:
                backend.copy_dtoh(_as_bytes(host), self.ptr, _stream_handle(stream))
            return host
        host = self._strided_to_host(backend, stream)
        if out is None:
            return host
        out[...] = host
        return out

    def _strided_to_host(self, backend, stream):
        low, high = _span(self.shape, self.strides, self.itemsize)
        raw = np.empty(high - low, dtype=np.uint8)
        if not raw.size:
            return np.empty(self.shape, self.dtype)
        backend.copy_dtoh(raw, self.ptr + low, _stream_handle(stream))
        _wait(stream, backend)
        return np.array(self._layout_over(raw, low))

    def _layout_over(self, raw, low):
        """This array's layout over a host copy ``raw`` of its span (which starts at ``low``)."""
        return np.ndarray(self.shape, self.dtype, buffer=raw, offset=-low, strides=self.strides)

    @nvtx.copy
    def copy_from(self, source: Any, stream: Any = None) -> "DeviceArray":
        """Copy a host array (or anything np.asarray takes, broadcast to this shape) or a DeviceArray into this one."""
        if isinstance(source, DeviceArray):
            DeviceArray.copy_to_device(source, self, stream=stream)   # simt's meaning, always
            return self
        host = _same_dtype(source, self.dtype, "copy_from")
        if host.shape != self.shape:
            try:
                host = np.broadcast_to(host, self.shape)
            except ValueError:
                raise ValueError(f"cannot copy an array of shape {host.shape} into a device "
                                 f"array of shape {self.shape}") from None
        self._write(host, stream)
        return self

    def _write(self, host, stream):
        backend = self.device.backend
        order = self._contiguous_order()
        if not self.size:
            return
        if order is not None:
            data = np.asarray(host, order=order)
            backend.copy_htod(self.ptr, _as_bytes(data), _stream_handle(stream))
            return
        # Read the span, write the strided elements on the host, write the span back.
        low, high = _span(self.shape, self.strides, self.itemsize)
        raw = np.empty(high - low, dtype=np.uint8)
        backend.copy_dtoh(raw, self.ptr + low, _stream_handle(stream))
        _wait(stream, backend)
        self._layout_over(raw, low)[...] = host
        backend.copy_htod(self.ptr + low, raw, _stream_handle(stream))
        _wait(stream, backend)

    @nvtx.copy
    def copy_to_device(self, other: "DeviceArray", stream: Any = None) -> "DeviceArray":
        """Copy this array's elements into ``other``, a DeviceArray of the same shape (any device); returns other."""
        if other.shape != self.shape:
            raise ValueError(f"cannot copy shape {self.shape} into shape {other.shape}")
        if other.dtype != self.dtype:
            raise TypeError(f"cannot copy {self.dtype} into {other.dtype} on the device")
        order = self._contiguous_order()
        same_backend = other.device.backend is self.device.backend
        flat = order is not None and _same_layout(other, self)
        if same_backend and flat:
            if self.nbytes:
                self.device.backend.copy_dtod(other.ptr, self.ptr, self.nbytes, _stream_handle(stream))
        elif flat and _cuda_pointers(self.device) and _cuda_pointers(other.device):
            if self.nbytes:           # GPU to GPU without the host (cudaMemcpyPeer)
                self.device.backend.copy_peer(other.ptr, other.device.backend, self.ptr,
                                              self.nbytes, _stream_handle(stream))
        else:
            other._write(self.copy_to_host(stream=stream), stream)
        return other

    def free(self, stream: Any = None) -> None:
        """Free this array's memory now rather than when the last view of it goes.

        Memory from a pool (``device_array(..., stream=s)``) goes back to it in the order
        of ``stream`` (cudaFreeAsync; None: the legacy default stream), to be reused by a
        later allocation; other memory is freed as cudaFree frees it (after the work that
        may use it), except on the CPU device, where it goes when the last view of it
        goes. Using the array or its views afterwards is an error CUDA does not catch.
        Only the array an allocation returned is freed, never a view of it (cudaFree
        refuses a pointer that is not an allocation's start)."""
        if self.base is not None:
            raise ValueError(f"{self!r} is a view of another array's memory, and only the "
                             "array returned by the allocation can be freed; call free() "
                             "on that array (this view's .base)")
        pools.free(self, stream)

    def copy(self) -> "DeviceArray":
        """A new C-contiguous device array with the same elements."""
        return DeviceArray.copy_to_device(self, DeviceArray(self.shape, self.dtype,
                                                            device=self.device))

    def __array__(self, dtype=None, copy=None):
        """np.asarray(d): a host copy (managed arrays: the memory itself unless copy=True)."""
        if getattr(self.alloc, "managed", False) and not copy:
            host = self._host_view()
        else:
            host = self.copy_to_host()
        return host if dtype is None else host.astype(dtype, copy=False)

    def _host_view(self):
        """A NumPy array aliasing this array's memory (CPU device and managed memory only).
        Where the device has no concurrent managed access (guide: unified memory on
        devices of compute capability below 6.0, Windows), the host must not touch managed
        memory while a kernel runs: the device is synchronized first (only the stream
        the memory is attached to, or nothing for memory attached to the host:
        Stream.attach_mem)."""
        backend = self.device.backend
        if not backend.host_accessible:
            if not getattr(self.alloc, "managed", False):
                raise NotSupportedError(f"{self!r} is not host-accessible; use copy_to_host()")
            if not backend.properties().concurrent_managed_access:
                _wait_for_owner(self.alloc, backend)
        return _host_array(self.ptr, self.shape, self.strides, self.dtype, self)

    # -- unified memory, IPC ------------------------------------------------------------

    def _managed_span(self, what):
        if not getattr(self.alloc, "managed", False):
            raise ValueError(f"{what} applies to managed memory (simt.managed_array); this "
                             f"array is {self.device.name} device memory")
        low, high = _span(self.shape, self.strides, self.itemsize)
        return self.ptr + low, high - low

    def prefetch(self, device: DeviceSpec = None, stream: Any = None) -> "DeviceArray":
        """Move this managed array's pages to ``device`` (default: the current device;
        'host' or the CPU device: host memory) in the order of ``stream``
        (cudaMemPrefetchAsync). On the CPU device managed memory is host memory: there
        is nothing to move, and the call only checks its arguments."""
        from . import unified
        ptr, nbytes = self._managed_span("prefetch")
        unified.prefetch(self, ptr, nbytes, device, stream)
        return self

    def advise(self, advice: str, device: DeviceSpec = None, unset: bool = False) -> "DeviceArray":
        """cudaMemAdvise on this managed array: 'read_mostly' (pages may be copied to
        every reader), 'preferred_location' (keep the pages on ``device``, 'host' for host
        memory) or 'accessed_by' (keep them mapped for ``device``); ``device`` default:
        the current one; ``unset=True`` takes the advice back. On the CPU device they
        change nothing (managed memory is host memory, read by the host)."""
        from . import unified
        ptr, nbytes = self._managed_span("advise")
        unified.advise(self, ptr, nbytes, advice, device, unset)
        return self

    def ipc_handle(self):
        """A picklable handle another process opens with simt.open_ipc_handle
        (cudaIpcGetMemHandle): the memory, not a copy. GPU only."""
        from .handles import array_handle
        return array_handle(self)

    # -- conveniences --------------------------------------------------------------------

    def astype(self, dtype: DTypeLike) -> "DeviceArray":
        """A new device array of this shape with the elements converted as NumPy's astype
        converts them (through the host: a conversion copies twice)."""
        return host_to_device(self.copy_to_host().astype(dtype), device=self.device)

    def view(self, dtype: DTypeLike) -> "DeviceArray":
        """The same memory as another dtype, as ndarray.view: the last dimension (which must
        be contiguous) is rescaled by the ratio of the item sizes."""
        dtype = np.dtype(dtype)
        host_layout = self._dummy().view(dtype)        # NumPy checks the layout and sizes
        return self._viewing(DeviceArray(host_layout.shape, dtype, host_layout.strides,
                                         alloc=self.alloc, offset=self.offset, device=self.device))

    def fill(self, value: Any) -> "DeviceArray":
        """Set every element to ``value`` (converted to the dtype as NumPy converts it)."""
        self.copy_from(np.full(self.shape, value, self.dtype))
        return self

    def __reduce__(self):
        """Pickling copies the elements to the host; unpickling makes a device array on the
        device current there (device memory cannot cross processes: see ipc for that)."""
        return _unpickle, (self.copy_to_host(),)

    # -- interchange ------------------------------------------------------------------

    @property
    def __cuda_array_interface__(self):
        """CUDA Array Interface v3 (GPU arrays only)."""
        if not self.device.backend.cuda_pointers:
            raise AttributeError("__cuda_array_interface__ is only defined for arrays on a GPU")
        contiguous = self.flags["C_CONTIGUOUS"]
        # stream 1: the legacy default stream, which simt's work is ordered with (blocking
        # streams included); a consumer on another stream waits for it before reading.
        return {"version": 3, "shape": self.shape, "typestr": self.dtype.str,
                "descr": self.dtype.descr, "data": (self.ptr if self.size else 0,
                                                    self.readonly),
                "strides": None if contiguous else self.strides, "stream": 1}

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """DLPack export (the array API standard's protocol). A DLPack 1.0 capsule
        (``dltensor_versioned``, flagged read-only for a read-only array) when the consumer's
        ``max_version`` is (1, 0) or later, else a legacy ``dltensor`` one. ``copy``: True
        exports a new copy (flagged as a copy), False and None this array's memory.
        ``dl_device`` (1, 0) of a GPU array exports a host copy (not with copy=False).
        ``stream`` is the consumer's: it is made to wait for simt's work (the legacy default
        stream) before it uses the memory."""
        versioned = dlpack.reads_versioned(max_version)
        source, flags = self, 0
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            return self._dlpack_to_host(dl_device, versioned, copy)
        if copy:
            source, flags = self.copy(), dlpack.FLAG_IS_COPIED
        elif self.readonly:
            if not versioned:
                raise BufferError(
                    f"{self!r} is read-only, which a DLPack capsule before version 1.0 cannot "
                    "say; the consumer must ask for max_version=(1, 0) (NumPy 2's np.from_dlpack "
                    "does), or take a copy (copy=True)")
            flags = dlpack.FLAG_READ_ONLY
        if stream not in (None, -1, 1) and self.device.backend.cuda_pointers:
            _wait_for_default_stream(self.device, stream)
        return dlpack.export(source, *self.__dlpack_device__(), versioned=versioned, flags=flags)

    def _dlpack_to_host(self, dl_device, versioned, copy):
        """The DLPack export of a host copy, for a consumer that asked for host memory."""
        if tuple(dl_device) not in ((dlpack.KDL_CPU, 0), (dlpack.KDL_CUDA_HOST, 0)):
            raise BufferError(f"this array lives on {self.device.name} (DLPack device "
                              f"{self.__dlpack_device__()}); it can be exported there, or to "
                              f"the host as a copy (dl_device=(1, 0)), not to {tuple(dl_device)}")
        if copy is False:
            raise BufferError(f"this array lives on {self.device.name}; exporting it to the "
                              "host (dl_device=(1, 0)) needs a copy, and copy=False forbids one")
        host = self.copy_to_host()
        return dlpack.export(host, dlpack.KDL_CPU, 0, versioned=versioned,
                             flags=dlpack.FLAG_IS_COPIED, ptr=host.ctypes.data)

    def __dlpack_device__(self):
        """(device type, index): kDLCPU = 1, kDLCUDA = 2, kDLCUDAManaged = 13."""
        kind, index = self.device.backend.dlpack_device
        if getattr(self.alloc, "managed", False) and kind == dlpack.KDL_CUDA:
            kind = dlpack.KDL_CUDA_MANAGED
        return kind, index


def _wait_for_owner(alloc, backend):
    """Before the host touches managed memory on a device without concurrent managed
    access: wait for the work that may use it (Stream.attach_mem says which: one
    stream's, none for 'host', else the whole device's)."""
    flags, stream = getattr(alloc, "attached", ("global", None))
    if flags == "single":
        stream.synchronize()
    elif flags == "global":
        backend.synchronize()


def _as_bytes(host):
    """The bytes of a contiguous NumPy array (C or F order) as a flat uint8 view."""
    return host.ravel(order="K").view(np.uint8)


def _check_destination(out, shape, dtype, what):
    """A copy writes ``out`` as it is: a writeable NumPy array of this shape and dtype."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{what}: out must be a NumPy array, got {type(out).__name__}")
    if not out.flags.writeable:
        raise ValueError(f"{what}: out is a read-only array (writeable=False); a copy never "
                         "writes read-only memory. Pass a writeable array, e.g. np.empty_like(out)")
    if out.dtype != dtype:
        raise TypeError(f"{what}: out holds {out.dtype}, the device array {dtype}; copies do "
                        f"not convert. Pass an out of dtype {dtype}, then convert with .astype()")
    if out.shape != shape:
        raise ValueError(f"{what}: out has shape {out.shape}, the device array {shape}")


def _same_dtype(source, dtype, what):
    """``source`` as a NumPy array of ``dtype``: an array (anything with a dtype) must have
    it already, as copies do not convert; Python scalars and lists convert as NumPy's
    assignment does."""
    if hasattr(source, "dtype"):
        host = np.asarray(source)
        if host.dtype != dtype:
            raise TypeError(f"{what}: cannot copy {host.dtype} data into a {dtype} device "
                            f"array; copies do not convert. Convert first: .astype(np.{dtype})")
        return host
    return np.asarray(source, dtype=dtype)


def _all_ints(key):
    key = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in key)


def _same_layout(a, b):
    """Same shape and strides (for contiguous arrays: one flat copy moves everything)."""
    return a.shape == b.shape and (a.strides == b.strides or a.size <= 1)


def _allocate(device, nbytes, method="alloc", *options):
    backend = device.backend
    try:
        made = getattr(backend, method)(nbytes, *options)
    except MemoryError:
        free, _ = backend.mem_get_info()
        raise OutOfMemoryError(f"cannot allocate {nbytes} bytes on {device.name}: "
                               f"{free} bytes are free") from None
    _remember(method, made, nbytes, device)
    return made


_KINDS = {"alloc": "device", "alloc_managed": "managed", "alloc_pinned": "host",
          "alloc_mapped": "host"}


def _remember(method, made, nbytes, device):
    """Record what an allocating hook made, for simt.pointer_attributes (runtime/pointers.py):
    an Allocation, a pinned uint8 buffer, or a mapped one with its device pointer."""
    owner = made[0] if isinstance(made, tuple) else made
    if isinstance(owner, np.ndarray):
        ptr = owner.__array_interface__["data"][0]
        while isinstance(owner.base, np.ndarray):    # the array that owns the memory: views
            owner = owner.base                       # of the buffer keep it alive, not it
    else:
        ptr = owner.ptr
    memrecords.record(owner, ptr, nbytes, _KINDS[method], device)


def _cuda_pointers(device):
    """Whether a device's addresses are CUDA pointers (asked of the class: no backend made)."""
    return devices.backend_class(device.kind).cuda_pointers


def _wait_for_default_stream(device, stream):
    """Make another library's ``stream`` wait for the work of simt's legacy default stream."""
    backend = device.backend
    _order(backend, waiter=backend.wrap_stream(stream), producer=backend.default_stream())


def _order(backend, waiter, producer):
    """Later work in stream ``waiter`` waits for the work queued so far in ``producer``."""
    event = backend.create_event(timing=False)
    event.record(producer)
    waiter.wait_event(event)


# -- making arrays ------------------------------------------------------------------------


def device_array(shape: Shape, dtype: DTypeLike = np.float64, order: str = "C", device: DeviceSpec = None,
                 stream: Any = None, pool: "Optional[pools.MemoryPool]" = None) -> "DeviceArray":
    """An uninitialized device array (cudaMalloc) on ``device`` (default: the current one).

    With ``stream`` (or ``pool``), the memory comes from a memory pool in the order of
    ``stream`` (cudaMallocAsync / cudaMallocFromPoolAsync; ``pool`` default: the device's
    default pool, simt.MemoryPool.default()); give it back with ``free(stream=...)``."""
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', not {order!r}")
    if stream is None and pool is None:
        return DeviceArray(shape, dtype, order=order, device=device)
    if pool is not None and not isinstance(pool, pools.MemoryPool):
        raise TypeError(f"pool must be a simt.MemoryPool (simt.MemoryPool() or "
                        f"simt.MemoryPool.default()), not {pool!r} ({type(pool).__name__})")
    device = devices.lookup(device) if pool is None or device is not None else pool.device
    pool = pools.MemoryPool.default(device) if pool is None else pool
    if pool.device != device:
        raise ValueError(f"the pool belongs to {pool.device.name}, the array to {device.name}")
    shape, dtype = _normalize_shape(shape), np.dtype(dtype)
    alloc = pool.allocation(math.prod(shape) * dtype.itemsize, stream)
    return DeviceArray(shape, dtype, order=order, alloc=alloc, device=device)


def empty(shape: Shape, dtype: DTypeLike = np.float64, order: str = "C",
          device: DeviceSpec = None) -> "DeviceArray":
    """An uninitialized device array (same as device_array)."""
    return device_array(shape, dtype, order, device)


def zeros(shape: Shape, dtype: DTypeLike = np.float64, order: str = "C",
          device: DeviceSpec = None) -> "DeviceArray":
    """A device array filled with zero bytes (cudaMemset)."""
    array = device_array(shape, dtype, order, device)
    if array.nbytes:
        array.device.backend.memset(array.ptr, 0, array.nbytes)
    return array


def device_array_like(array: Any, device: DeviceSpec = None) -> "DeviceArray":
    """An uninitialized device array with the shape, dtype and order (C or F) of ``array``."""
    order = "F" if _is_f_only(array) else "C"
    return device_array(array.shape, array.dtype, order, device)


def empty_like(array: Any, device: DeviceSpec = None) -> "DeviceArray":
    """An uninitialized device array with the shape, dtype and order of ``array``."""
    return device_array_like(array, device)


def zeros_like(array: Any, device: DeviceSpec = None) -> "DeviceArray":
    """A zero-filled device array with the shape, dtype and order of ``array``."""
    order = "F" if _is_f_only(array) else "C"
    return zeros(array.shape, array.dtype, order, device)


def _unpickle(host):
    return host_to_device(host)


def _is_f_only(array):
    flags = array.flags
    return bool(flags["F_CONTIGUOUS"]) and not bool(flags["C_CONTIGUOUS"])


def host_to_device(host_array: ArrayLike, stream: Any = None,
                   device: DeviceSpec = None) -> "DeviceArray":
    """A new device array holding a copy of a host array (cudaMalloc + cudaMemcpy H2D) or
    of a DeviceArray: ``simt.to_device`` (runtime/interop.py), less other libraries' GPU
    arrays. A Fortran-ordered array keeps its order; any other layout arrives C-contiguous.
    """
    if isinstance(host_array, DeviceArray):
        return DeviceArray.copy_to_device(host_array, device_array_like(host_array, device),
                                          stream)
    host = np.asarray(host_array)
    array = device_array_like(host, device)
    return array.copy_from(host, stream)


def mem_get_info() -> "tuple[int, int]":
    """(free, total) bytes of the current device's memory (cudaMemGetInfo)."""
    return devices.get_device().backend.mem_get_info()
