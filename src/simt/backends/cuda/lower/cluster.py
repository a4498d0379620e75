"""The cluster queries and distributed shared memory (lang/cluster.py) on the GPU: the
%cluster_ctarank / %cluster_nctarank / %cluster_nctaid / %cluster_ctaid registers and
``mapa.u64`` on the array's generic address."""
from llvmlite import ir as ll

from ....compiler.lltypes import I32, I64, ArrayValue, ptr
from ....lang.cluster import block_index, block_rank, dim_blocks, map_shared_rank, num_blocks
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")


def _sreg(em, name):
    asm = ll.InlineAsm(ll.FunctionType(I32, []), f"mov.u32 $0, %{name};", "=r")
    return em.builder.call(asm, [])


@lowering(block_rank, target=TARGET)
def _rank_gpu(em, e):
    return _sreg(em, "cluster_ctarank")


@lowering(num_blocks, target=TARGET)
def _size_gpu(em, e):
    return _sreg(em, "cluster_nctarank")


@lowering(dim_blocks, target=TARGET)
def _dim_gpu(em, e):
    return _sreg(em, f"cluster_nctaid.{e.attrs['axis']}")


@lowering(block_index, target=TARGET)
def _index_gpu(em, e):
    return _sreg(em, f"cluster_ctaid.{e.attrs['axis']}")


@lowering(map_shared_rank, target=TARGET)
def _map_gpu(em, e):
    array, rank = em.expr(e.args[0]), em.expr(e.args[1])
    b = em.builder
    generic = b.addrspacecast(array.data, ptr(0))
    asm = ll.InlineAsm(ll.FunctionType(I64, [I64, I32]), "mapa.u64 $0, $1, $2;", "=l,l,r")
    mapped = b.inttoptr(b.call(asm, [b.ptrtoint(generic, I64), rank]), ptr(0))
    return ArrayValue(e.type, mapped, array.shape, array.strides)
