"""Lowerings of the cluster queries and distributed shared memory (lang/cluster.py).

GPU: the %cluster_ctarank / %cluster_nctarank registers and ``mapa.u64`` on the array's
generic address. CPU: calls into the CPU device's cluster table (backends/cpu/cluster.py
registers these symbols), which knows the launch's cluster shape and every running block's
shared memory; a launch without clusters answers as clusters of one block."""
from llvmlite import ir as ll

from ..fault import ASSERT
from ..lang.cluster import block_rank, map_shared_rank, num_blocks
from .hostsymbols import RANK, SHARED, SIZE
from .lltypes import I32, I64, ArrayValue, ptr

NO_BLOCK = ("cluster.map_shared_rank: the rank is not a block of this cluster (ranks are 0 to "
            "cluster.num_blocks() - 1)")


def _sreg(em, name):
    asm = ll.InlineAsm(ll.FunctionType(I32, []), f"mov.u32 $0, %{name};", "=r")
    return em.builder.call(asm, [])


@block_rank.lowering("cuda")
def _rank_gpu(em, e):
    return _sreg(em, "cluster_ctarank")


@num_blocks.lowering("cuda")
def _size_gpu(em, e):
    return _sreg(em, "cluster_nctarank")


@map_shared_rank.lowering("cuda")
def _map_gpu(em, e):
    array, rank = em.expr(e.args[0]), em.expr(e.args[1])
    b = em.builder
    generic = b.addrspacecast(array.data, ptr(0))
    asm = ll.InlineAsm(ll.FunctionType(I64, [I64, I32]), "mapa.u64 $0, $1, $2;", "=l,l,r")
    mapped = b.inttoptr(b.call(asm, [b.ptrtoint(generic, I64), rank]), ptr(0))
    return ArrayValue(e.type, mapped, array.shape, array.strides)


def _block(em):
    return [em.specials[f"blockIdx.{axis}"] for axis in "xyz"]


def _call(em, name, ret, args):
    fnty = ll.FunctionType(ret, [a.type for a in args])
    fn = em.module.globals.get(name) or ll.Function(em.module, fnty, name)
    return em.builder.call(fn, args)


@block_rank.lowering("cpu")
def _rank_cpu(em, e):
    return _call(em, RANK, I32, [em.llfunc.args[1]] + _block(em))


@num_blocks.lowering("cpu")
def _size_cpu(em, e):
    return _call(em, SIZE, I32, [em.llfunc.args[1]])


@map_shared_rank.lowering("cpu")
def _map_cpu(em, e):
    array, rank = em.expr(e.args[0]), em.expr(e.args[1])
    base = _call(em, SHARED, ptr(), [em.llfunc.args[1]] + _block(em) + [rank, em.shared_base])
    b = em.builder
    ok, bad = em.new_block("cluster_rank_ok"), em.new_block("cluster_rank_bad")
    b.cbranch(b.icmp_unsigned("!=", b.ptrtoint(base, I64), ll.Constant(I64, 0)), ok, bad)
    b.position_at_end(bad)
    em.target.emit_error(em, ASSERT, e.loc, message=NO_BLOCK)
    b = em.builder
    b.position_at_end(ok)
    offset = b.sub(b.ptrtoint(array.data, I64), b.ptrtoint(em.shared_base, I64))
    data = b.gep(base, [offset], source_etype=ll.IntType(8))
    return ArrayValue(e.type, data, array.shape, array.strides)

