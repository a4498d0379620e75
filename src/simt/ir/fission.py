"""Barrier fission: the body of a kernel with barriers cut into what the CPU device runs.

The CPU device runs a block's threads as loops (docs/cpu-device.md). A kernel with
barriers is cut at every barrier, barrier collective, warp operation and grid sync into
*runs*: barrier-free statements executed as one loop over the block's threads. Control
flow holding a barrier runs around the runs of its bodies: once per block when its
condition or bounds are uniform (uniform.py), else *masked*, each thread keeping a flag.
A warp operation ends its run with a ``WarpGather`` and starts the next with a
``WarpResult`` (backends/cpu/warp.py). This pass makes those decisions; the CPU emitter
lowers its pieces, and regions.Plan reads them to choose the variables that need
per-thread slots.
"""
from dataclasses import dataclass, field

from . import nodes as ir


@dataclass(eq=False)
class Run:
    """Statements run as one loop over the block's threads (none: no loop), after the
    uniform assignments ``hoisted`` ran once for the block: (Assign, closed value)."""
    stmts: list[ir.Stmt] = field(default_factory=list)
    hoisted: list = field(default_factory=list)


@dataclass(eq=False)
class Region:
    """A statement holding a barrier (If, While, ForRange, Collective, GridSync).
    ``uniform``: for If/While/ForRange, the closed condition or [start, stop, step] when
    it runs once per block, None when it runs masked; ``parts``: its bodies, cut."""
    stmt: ir.Stmt
    uniform: object
    parts: list


def fission(body, uniformity):
    """``body`` as a list of Run and Region pieces, in order."""
    pieces, run = [], Run()
    for s in body:
        if not ir.contains_barrier(s):
            value = uniformity.block_level(s)
            if value is not None:
                run.hoisted.append((s, value))      # a uniform variable's assignment
            else:
                run.stmts.append(s)
            continue
        if isinstance(s, ir.WarpOp):
            run.stmts.append(ir.WarpGather(s.loc, s))
            pieces.append(run)
            run = Run([ir.WarpResult(s.loc, s)])
            continue
        if run.stmts or run.hoisted:
            pieces.append(run)
        run = Run()
        parts = [fission(b, uniformity) for b in ir.child_bodies(s)]
        pieces.append(Region(s, uniformity.block_level(s), parts))
    if run.stmts or run.hoisted:
        pieces.append(run)
    return pieces
