"""Checked mode's test of ``@simt.kernel(noalias=True)`` (CUDA's ``__restrict__``): a launch
that passes two overlapping arrays, one of which the kernel writes, breaks the promise the
compiled code relies on (a GPU may read stale or cached values), and is refused before it
runs. Two arrays that are only read may overlap, as C's ``restrict`` allows; strided views
that interleave without sharing an element (``a[::2]``, ``a[1::2]``) do not overlap.

The CPU device in checked mode and the sim device run it at every launch of such a kernel
(their ``run_launch``); it reads only addresses, never the memory."""
import itertools

import numpy as np

from ..errors import LaunchError
from ..ir import types as T

MAX_WORK = 100_000        # np.shares_memory's budget; past it, overlapping spans count
_TOO_HARD = getattr(np, "exceptions", np).TooHardError


def refuse_overlapping(kernel, params, args):
    """A LaunchError naming the two parameters when ``kernel`` is noalias and two of its
    array arguments share memory while it writes one of them (``params``: the compiled
    signature's types)."""
    if not kernel.options.get("noalias"):
        return
    types = tuple(params)
    arrays = []
    for i, (t, a) in enumerate(zip(types, args)):
        view = _address_view(a) if isinstance(t, T.Array) else None
        if view is not None:
            arrays.append((i, view))
    if len(arrays) < 2:
        return
    from ..compiler.writes import written_params
    fn = kernel.typed_ir(types)
    written = written_params(fn)
    for (i, a), (j, b) in itertools.combinations(arrays, 2):
        if (i in written or j in written) and _overlap(a, b):
            writer = i if i in written else j
            loc = written[writer]
            names = [fn.params[k][0] for k in (i, j)]
            raise LaunchError(
                f"kernel '{kernel.__name__}' is declared noalias=True (__restrict__), and "
                f"its array arguments '{names[0]}' and '{names[1]}' overlap in memory while "
                f"it writes '{fn.params[writer][0]}' ({loc.filename}, line {loc.line}): on a "
                f"GPU such a launch may read stale values. Pass arrays that do not overlap "
                f"(a copy: simt.to_device(x.copy_to_host()) or np.array(x)), or drop "
                f"noalias=True", kernel=kernel.__name__, filename=loc.filename, line=loc.line)


def _address_view(value):
    """A NumPy array with the argument's addresses, shape and strides (its memory is never
    read), or None for an empty array or a value with no address."""
    if isinstance(value, np.ndarray):
        return value if value.size else None
    ptr = getattr(value, "ptr", None)
    if ptr is None or not getattr(value, "size", 0):
        return None
    face = {"version": 3, "shape": tuple(value.shape), "strides": tuple(value.strides),
            "typestr": np.dtype(value.dtype).str, "data": (ptr, True)}
    return np.asarray(_Interface(face))


class _Interface:
    def __init__(self, face):
        self.__array_interface__ = face


def _overlap(a, b):
    try:
        return np.shares_memory(a, b, max_work=MAX_WORK)
    except _TOO_HARD:
        return np.may_share_memory(a, b)
