"""The small fixed interface every device backend implements.

The runtime (arrays, launch path, streams) talks to devices only through this.
A backend fills in the methods; the runtime does argument checks and error text.
Pointers are plain ints (device addresses; host addresses on the CPU device).
"""


class Allocation:
    """A block of device memory. Freed when the last reference goes away."""

    def __init__(self, ptr, nbytes, backend, keepalive=None):
        self.ptr = ptr
        self.nbytes = nbytes
        self.backend = backend
        self.keepalive = keepalive   # the object that owns the memory (CPU: a NumPy buffer)

    def __del__(self):
        backend = getattr(self, "backend", None)
        if backend is not None and self.keepalive is None:
            try:
                backend.free(self.ptr)
            except Exception:
                pass


class Backend:
    """What a device must provide. ``stream`` arguments are backend stream
    handles or None for the default stream."""

    kind = "abstract"          # 'cpu', 'cuda' or 'sim'

    def properties(self):
        """A simt.runtime.devices.DeviceProperties for this device."""
        raise NotImplementedError

    def alloc(self, nbytes):
        """Return an Allocation of at least nbytes (raise OutOfMemoryError)."""
        raise NotImplementedError

    def free(self, ptr):
        raise NotImplementedError

    def copy_htod(self, dst_ptr, host_array, stream=None):
        """Copy a C-contiguous NumPy array to device address dst_ptr."""
        raise NotImplementedError

    def copy_dtoh(self, host_array, src_ptr, stream=None):
        """Fill a C-contiguous NumPy array from device address src_ptr."""
        raise NotImplementedError

    def copy_dtod(self, dst_ptr, src_ptr, nbytes, stream=None):
        raise NotImplementedError

    def memset(self, ptr, byte, nbytes, stream=None):
        raise NotImplementedError

    def synchronize(self):
        """Wait for all work on the device; raise any pending LaunchError."""
        raise NotImplementedError

    def mem_get_info(self):
        """(free, total) bytes."""
        raise NotImplementedError


class Native:
    """What a back end's ``native_launch`` hook gives runtime/binder.py, which writes
    the launch function around it.

    ``lines``: the statements of one launch; ``{args}`` in them stands for the
    arguments, each followed by a comma. ``scope``: the names they use. ``plan``
    (back ends that pack a parameter buffer, with ``pack(storage, 0, *values)`` in
    ``scope``): per parameter, None for an array (its values are its ``_flat``) or
    the expressions of its values, with ``{a}`` standing for the argument."""

    def __init__(self, lines, scope, plan=None):
        self.lines = lines
        self.scope = scope
        self.plan = plan
