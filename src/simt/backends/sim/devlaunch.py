"""Launches from kernels on the sim device (dynamic parallelism, guide appendix D), as
the CPU device runs them (backends/devqueue.py): a thread that runs
``child[grid, block](args)`` has the launch checked as the device runtime checks it and
queued on its grid's Launch; when the grid has finished, ``run_children`` runs the queue,
each child followed by its own launches, a grid's tail launches last; a graph a kernel
node launched (simt.graph_launch) replays in its place. Every child is a
launch of its own with all of the sim device's checks: it sees what its parent wrote as
written, and its arguments are its parent's values as they were at the launch.
"""
from collections import namedtuple

from ...errors import NotSupportedError
from .. import devqueue
from .memory import SimArray

# a global array passed to a child: what Launch.span reads of a device array
View = namedtuple("View", "ptr shape strides")
GRAPH = "graph"            # a queued simt.graph_launch: (GRAPH, the exec's replay)


def graph_entry(replay):
    """The queue entry of a graph launched from a kernel (fire-and-forget)."""
    return (GRAPH, replay)


def argument(launch, value):
    """What a child launch gets for one of its parent's values: a global array as a View
    of the memory under it, a tuple item by item, a scalar as the sim holds it."""
    if isinstance(value, SimArray):
        found = launch.addresses.get(id(value.data))
        if found is None:
            raise NotSupportedError(f"array '{value.label}' is passed to a launch inside a "
                                    "kernel, but it is no global array of this launch: pass "
                                    "a kernel argument or a view of one")
        root, unit = found
        return View(root + value.off * unit, value.shape, value.strides)
    if type(value) is tuple:
        return tuple(argument(launch, v) for v in value)
    return value


def run_children(backend, family, pending, make_launch):
    """Run the launches one grid made depth first: each child grid, then its own
    launches, before the next launch of the same grid (tail launches last). A loop, not
    a recursion, so that nesting is bounded by the pending-launch limit, as on the CPU
    device. ``make_launch(kernel, grid, block, shared)`` is a child's Launch. Returns the
    first error, which ends the host launch."""
    levels = [iter(devqueue.in_order(pending, _stream))]
    while levels:
        launch = next(levels[-1], None)
        if launch is None:
            levels.pop()
            if levels:                  # the grid that made that level has finished
                family.finished()
            continue
        if launch[0] == GRAPH:           # a device graph launch: the whole graph, now
            error = launch[1]()
            family.finished()
            if error is not None:
                return error
            continue
        index, grid, block, shared, args, _ = launch
        run = make_launch(family.kernels[index], grid, block, shared)
        error = run.run(args)
        if error is not None:
            return error
        levels.append(iter(devqueue.in_order(run.children, _stream)))
    return None


def _stream(launch):
    return launch[-1] if launch[0] != GRAPH else 0     # a graph: fire-and-forget
