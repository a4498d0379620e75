"""A kernel's launch configuration made ready once: its sizes, and frames (argument
struct, launch record, fault record) that launch after launch reuse, so that a launch
costs a pack and a native call, not the making of ctypes and NumPy objects."""
import ctypes

import numpy as np

from ...fault import WORDS
from . import checklayout


class Frame:
    """One launch's memory; one launch at a time uses it."""

    __slots__ = ("packed", "args_ptr", "err", "launch", "launch_ptr", "keep", "arrays")

    def __init__(self, loaded, plan):
        self.packed = loaded.packer.struct()
        self.args_ptr = ctypes.addressof(self.packed)
        words = WORDS + (checklayout.STATE_WORDS if loaded.binary.checked else 0)
        self.err = np.zeros(words, np.int64)        # the fault record, then the checker's
        self.launch = (ctypes.c_int64 * 8)(*plan.grid, *plan.block, plan.shared_bytes,
                                           self.err.ctypes.data)
        self.launch_ptr = ctypes.addressof(self.launch)
        self.keep = self.arrays = ()

    def fill(self, loaded, args):
        """This launch's arguments in the struct (checked mode: and the arrays it checks)."""
        binary = loaded.binary
        symbols = binary.symbol_objects
        self.keep = loaded.packer.fill(self.packed, args, symbols)
        if binary.checked:
            self.arrays = arrays_of(args, symbols)


def arrays_of(args, symbols):
    """What checked mode watches in a launch: its arguments, then its symbols' host arrays."""
    return list(args) + [getattr(s, "host", None) for s in symbols]


class Plan:
    """One configuration (grid, block, dynamic shared bytes) of one loaded kernel."""

    __slots__ = ("loaded", "grid", "block", "shared_bytes", "nblocks", "shared_size",
                 "slot_size", "free")

    def __init__(self, loaded, grid, block, shared_bytes):
        binary = loaded.binary
        self.loaded, self.grid, self.block, self.shared_bytes = loaded, grid, block, shared_bytes
        self.nblocks = grid[0] * grid[1] * grid[2]
        self.shared_size = binary.shared_static_bytes + shared_bytes
        self.slot_size = binary.slot_bytes * block[0] * block[1] * block[2]
        self.free = []             # frames no launch uses (list.pop and append: atomic)

    def take(self):
        try:
            return self.free.pop()
        except IndexError:
            return Frame(self.loaded, self)

    def give(self, frame):
        frame.keep = frame.arrays = ()
        self.free.append(frame)


KEPT = 64        # configurations a kernel keeps: a program that varies its grid at every
                 # launch would otherwise grow one Plan per shape it ever used


def plan(loaded, grid, block, shared_bytes):
    """The loaded kernel's Plan for this configuration (made at its first launch)."""
    key = (grid, block, shared_bytes)
    found = loaded.plans.get(key)
    if found is None:
        if len(loaded.plans) >= KEPT:
            loaded.plans.clear()       # launches holding a frame keep it: they own it now
        found = loaded.plans[key] = Plan(loaded, grid, block, shared_bytes)
    return found
