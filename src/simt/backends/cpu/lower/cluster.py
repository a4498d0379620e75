"""The cluster queries and distributed shared memory (lang/cluster.py) on the CPU device:
calls into its cluster table (backends/cpu/cluster.py registers these symbols), which knows
the launch's cluster shape and every running block's shared memory; a launch without
clusters answers as clusters of one block. The table knows a launch by the address of its
fault record (``em.err_ptr``), which device functions hold as kernels do."""
from llvmlite import ir as ll

from ....compiler.lltypes import I32, I64, ArrayValue, i32, ptr
from ....fault import ASSERT
from ....lang.cluster import (NO_BLOCK, block_index, block_rank, dim_blocks, map_shared_rank,
                              num_blocks)
from ....lang.registry import declare_target, lowering
from ..hostsymbols import DIM, RANK, SHARED, SIZE

TARGET = declare_target("cpu")



def _block(em):
    return [em.specials[f"blockIdx.{axis}"] for axis in "xyz"]


def _call(em, name, ret, args):
    fnty = ll.FunctionType(ret, [a.type for a in args])
    fn = em.module.globals.get(name) or ll.Function(em.module, fnty, name)
    return em.builder.call(fn, args)


@lowering(block_rank, target=TARGET)
def _rank_cpu(em, e):
    return _call(em, RANK, I32, [em.err_ptr] + _block(em))


@lowering(num_blocks, target=TARGET)
def _size_cpu(em, e):
    return _call(em, SIZE, I32, [em.err_ptr])


def _dim(em, axis):
    return _call(em, DIM, I32, [em.err_ptr, i32("xyz".index(axis))])


@lowering(dim_blocks, target=TARGET)
def _dim_cpu(em, e):
    return _dim(em, e.attrs["axis"])


@lowering(block_index, target=TARGET)
def _index_cpu(em, e):
    axis = e.attrs["axis"]
    return em.builder.urem(em.specials[f"blockIdx.{axis}"], _dim(em, axis))


@lowering(map_shared_rank, target=TARGET)
def _map_cpu(em, e):
    array, rank = em.expr(e.args[0]), em.expr(e.args[1])
    base = _call(em, SHARED, ptr(), [em.err_ptr] + _block(em) + [rank, em.shared_base])
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
