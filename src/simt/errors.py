"""simt's exception classes (API.md section 8).

Every error a user sees is one of these. Messages say what went wrong, where
(kernel, Python line, block and thread when known) and what to do.
"""


class CudaError(Exception):
    """Base of every simt error."""


class CompileError(CudaError):
    """A kernel or device function uses Python that simt cannot compile.

    Attributes: ``filename``, ``line``, ``col``, ``construct`` and ``why``.
    """

    def __init__(self, message, filename=None, line=None, col=None, construct=None, why=None):
        super().__init__(message)
        self.filename = filename
        self.line = line
        self.col = col
        self.construct = construct
        self.why = why


class CompileWarning(UserWarning):
    """Kernel source that compiles but may not do what it says: a local variable that
    some paths leave unassigned (docs/kernel-language.md). Issued once per place, naming
    the kernel, the variable and the file and line."""


class InvalidConfiguration(CudaError):
    """A launch configuration the device cannot run (checked before anything runs)."""


class LaunchError(CudaError):
    """A kernel failed while running. Raised at the next synchronizing call."""

    def __init__(self, message, kernel=None, block=None, thread=None, filename=None, line=None):
        super().__init__(message)
        self.kernel = kernel
        self.block = block
        self.thread = thread
        self.filename = filename
        self.line = line


class IllegalAddressError(LaunchError):
    """An out-of-bounds or otherwise illegal memory access."""

    def __init__(self, message, array=None, index=None, shape=None, **where):
        super().__init__(message, **where)
        self.array = array
        self.index = index
        self.shape = shape


class DeviceAssertError(LaunchError):
    """An ``assert`` inside a kernel failed."""


class MisalignedAddressError(LaunchError):
    """A memory access at an address not aligned to its size."""


class RaceConditionError(LaunchError):
    """Checked mode: two threads touched one element between barriers, one writing."""


class BarrierDivergenceError(LaunchError):
    """Checked mode: a barrier or warp collective that not every thread reached."""


class UninitializedReadError(LaunchError):
    """Checked mode: a read of memory that nothing wrote, or of a local variable that
    this thread did not assign (``variable`` names it; None for memory)."""

    variable = None


class NarrowingConversionError(LaunchError):
    """``narrowing=True``: an implicit integer conversion to a narrower type changed the
    value (``value``: the value before, ``result``: after; ``source``, ``target``: the
    two types' names)."""

    value = result = source = target = None


class ContextUnusableError(CudaError):
    """A sticky error happened earlier on this GPU: its context can no longer be used."""


class OutOfMemoryError(CudaError):
    """An allocation larger than the free memory of the device."""


class NotSupportedError(CudaError):
    """A feature this device does not have; the message says which devices have it."""
