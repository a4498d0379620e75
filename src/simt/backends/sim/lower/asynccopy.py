"""The sim device's arrive/wait barriers (lang/barrier.py), asynchronous copies
(lang/pipeline.py) and TMA (lang/tma.py): calls of sim/mbarrier.py (``_k_mb``) and
sim/copies.py (``_k_cp``). A wait whose phase has not completed is a yield (sim/schedule.py
resumes the thread once it completes); try_wait is a yield point too, so a spin loop on it
makes progress. Copies complete at once, so commits and waits on them (and the proxy fence
before a TMA store) do nothing."""
from ....errors import NotSupportedError
from ....ir import nodes as ir
from ....lang import barrier, tma
from ....lang.pipeline import commit, memcpy_async, wait as pipeline_wait
from ....lang.sync import fence_proxy_async
from ..mbarrier import PARITY, TOKEN
from .rules import rule


def _label(g, node):
    """The user's name of an array operand, for the checks' messages."""
    if isinstance(node, ir.Param):
        return g.fn.params[node.index][0]
    if isinstance(node, ir.ArrayRef):
        return node.decl.name.split("_", 3)[-1]
    if isinstance(node, ir.View):
        return _label(g, node.array)
    return getattr(node, "name", "")


def _site(g, e, k):
    return g.site(e.loc, _label(g, e.args[k]))


# ---------------------------------------------------------------- the barrier's counts
rule(barrier.init)(lambda g, e, a: f"_k_mb.init(_k_t, {a[0]}, {a[1]})")
rule(barrier.arrive)(lambda g, e, a: f"_k_mb.arrive(_k_t, {a[0]}, False)")
rule(barrier.arrive_drop)(lambda g, e, a: f"_k_mb.arrive(_k_t, {a[0]}, True)")
rule(barrier.expect_tx)(lambda g, e, a: f"_k_mb.expect_tx(_k_t, {a[0]}, {a[1]})")
rule(barrier.arrive_expect_tx)(lambda g, e, a: f"_k_mb.arrive_expect_tx(_k_t, {a[0]}, {a[1]})")
rule(barrier.phase)(lambda g, e, a: f"_k_mb.get(_k_t, {a[0]}).phase")
rule(barrier.count)(lambda g, e, a: f"_k_mb.count(_k_t, {a[0]}, {e.attrs['drop']})")
rule(barrier.complete)(lambda g, e, a: f"_k_mb.complete(_k_t, {a[0]})")


# ---------------------------------------------------------------- waits
def _wait(kind, is_try):
    """True at once when the phase has completed, else a yield until it does (its value:
    True; for a try_wait that nothing could complete, False once: schedule.py)."""
    def lower(g, e, a):
        bar, value = a[0], a[1]
        payload = f"(_k_mb.get(_k_t, {bar}), {kind}, {value}, {is_try})"
        return (f"(_k_mb.passed(_k_t, {bar}, {kind}, {value}) or "
                f"(yield ('mbar', {g.site(e.loc)}, {payload})))")
    return lower


rule(barrier.wait)(_wait(TOKEN, False))
rule(barrier.try_wait)(_wait(TOKEN, True))
rule(barrier.wait_parity)(_wait(PARITY, False))


# ---------------------------------------------------------------- copies
@rule(memcpy_async)
def _memcpy_async(g, e, a):
    """A barrier operand (a[5]) changes nothing: the copy is done before the thread's
    arrival, which releases it to the waiters."""
    dst, src = g.site(e.loc, e.attrs["dst"]), g.site(e.loc, e.attrs["src"])
    return f"_k_cp.memcpy_async({a[0]}, {a[1]}, {a[2]}, {a[3]}, {a[4]}, {dst}, {src})"


@rule(commit, pipeline_wait, tma.commit_group, tma.wait_group, fence_proxy_async)
def _nothing_in_flight(g, e, a):
    return "None"


@rule(tma.load)
def _tma_load(g, e, a):
    if e.attrs.get("multicast"):
        raise NotSupportedError("simt.tma.load with multicast is not emulated on the sim "
                                "device yet: run it on a GPU (sm_90)")
    coords = "".join(c + ", " for c in a[3:])
    return f"_k_cp.tma_load(_k_t, {a[0]}, {a[1]}, ({coords}), {a[2]}, {_site(g, e, 0)})"


@rule(tma.store)
def _tma_store(g, e, a):
    coords = "".join(c + ", " for c in a[2:])
    return f"_k_cp.tma_store({a[0]}, {a[1]}, ({coords}), {_site(g, e, 1)})"


@rule(tma.copy)
def _tma_copy(g, e, a):
    dst, src = e.args[0].type.dtype, e.args[1].type.dtype
    if dst != src:
        raise NotSupportedError(f"simt.tma.copy between arrays of {dst.name} and {src.name} "
                                f"is not supported on the sim device: it copies elements, so "
                                f"both arrays need one dtype ({e.loc})")
    return (f"_k_cp.tma_copy(_k_t, {a[0]}, {a[1]}, {a[2]}, {a[3]}, {_site(g, e, 0)}, "
            f"{_site(g, e, 1)})")
