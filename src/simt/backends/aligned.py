"""Host buffers that start on a chosen alignment (NumPy only: the compiled code's modules
import it without the runtime)."""
import numpy as np


def aligned_buffer(nbytes, alignment):
    """An uninitialized uint8 NumPy array of nbytes whose address is a multiple of alignment."""
    raw = np.empty(max(nbytes, 1) + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + nbytes]
