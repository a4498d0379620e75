"""``a.ctypes.data`` of an array in ``cuda.jit`` code: the address of its first element
as a uint64, as numba gives it (numba-cuda's tests read it to check where local and
shared arrays start). simt.kernel code has no such attribute (calls.attribute refuses it).

The address is a generic one: on a GPU a shared or local array's pointer is converted out
of its address space first, so it is the address a generic load would use."""
from ..ir import nodes as ir
from ..ir import types as T


class Ctypes:
    """``a.ctypes``: only ``.data`` is read in kernels."""

    def __init__(self, array):
        self.data = _Address(array)


class _Address:
    value = True                 # read without a call (frontend._read_without_call)

    def __init__(self, array):
        self.array = array

    def build(self, fc, args, kwargs, loc):
        return ir.ArrayAttr(T.UINT64, loc, self.array, "data", 0)
