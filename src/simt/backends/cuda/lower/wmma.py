"""The warp matrix functions (lang/wmma.py) on the GPU: one NVVM WMMA intrinsic per call; a
fragment's registers live in its local array (its bytes in register order), which LLVM's
SROA turns back into registers."""
from llvmlite import ir as ll

from ....compiler.flat import flat_address
from ....compiler.lltypes import F16, F32, F64, I8, I32, function, i32, i64
from ....compiler.wmma import fill
from ....lang.registry import declare_target, lowering
from ....lang.wmma import (REG_BYTES, fill_fragment, load_matrix_sync, mma_sync, num_elements,
                           store_matrix_sync)

TARGET = declare_target("cuda")

REG_TYPES = {"h2": lambda: ll.VectorType(F16, 2), "f32": lambda: F32, "i32": lambda: I32,
             "f64": lambda: F64}


def _geometry(f):
    return f"m{f.m}n{f.n}k{f.k}"


# ---------------------------------------------------------------- GPU: NVVM intrinsics
def _reg_type(f):
    return REG_TYPES[f.regs[0]]()


def _read_regs(em, frag):
    """The fragment's registers, read from its local array."""
    name, count = frag.type.regs
    b, t = em.builder, _reg_type(frag.type)
    data = em.expr(frag).data
    return [b.load(b.gep(data, [i64(i * REG_BYTES[name])], source_etype=I8), typ=t)
            for i in range(count)]


def _write_regs(em, frag, value):
    name, count = frag.type.regs
    b = em.builder
    data = em.expr(frag).data
    for i in range(count):
        reg = value if count == 1 else b.extract_value(value, i)
        b.store(reg, b.gep(data, [i64(i * REG_BYTES[name])], source_etype=I8))


def _regs_struct(f):
    name, count = f.regs
    return _reg_type(f) if count == 1 else ll.LiteralStructType([_reg_type(f)] * count)


def _address(em, array_node, offset_node, label, loc):
    array = em.expr(array_node)
    offset = em.expr(offset_node)
    return flat_address(em, array, offset, label, loc)


@lowering(load_matrix_sync, target=TARGET)
def _load_gpu(em, e):
    frag, array, offset, ldm = e.args
    f = frag.type
    address = _address(em, array, offset, e.attrs["label"], e.loc)
    which = "c" if f.use == "c" else f.use
    name = (f"llvm.nvvm.wmma.{_geometry(f)}.load.{which}.{e.attrs['layout']}.stride.{f.kind}"
            f".p{address.type.addrspace}")
    fn = function(em.module, name, ll.FunctionType(_regs_struct(f), [address.type, I32]))
    _write_regs(em, frag, em.builder.call(fn, [address, em.expr(ldm)]))


@lowering(store_matrix_sync, target=TARGET)
def _store_gpu(em, e):
    array, offset, frag, ldm = e.args
    f = frag.type
    address = _address(em, array, offset, e.attrs["label"], e.loc)
    regs = _read_regs(em, frag)
    name = (f"llvm.nvvm.wmma.{_geometry(f)}.store.d.{e.attrs['layout']}.stride.{f.kind}"
            f".p{address.type.addrspace}")
    fn = function(em.module, name, ll.FunctionType(
        ll.VoidType(), [address.type] + [r.type for r in regs] + [I32]))
    em.builder.call(fn, [address] + regs + [em.expr(ldm)])


@lowering(mma_sync, target=TARGET)
def _mma_gpu(em, e):
    d, a, b, c = e.args
    layouts = f"{a.type.matrix_layout}.{b.type.matrix_layout}"
    kinds = f"{d.type.kind}.{c.type.kind}" if a.type.kind == "f16" else a.type.kind
    name = f"llvm.nvvm.wmma.{_geometry(a.type)}.mma.{layouts}.{kinds}"
    regs = _read_regs(em, a) + _read_regs(em, b) + _read_regs(em, c)
    fn = function(em.module, name, ll.FunctionType(_regs_struct(d.type), [r.type for r in regs]))
    _write_regs(em, d, em.builder.call(fn, regs))


@lowering(fill_fragment, target=TARGET)
def _fill_gpu(em, e):
    fill(em, e, e.args[0].type.gpu_elements)


@lowering(num_elements, target=TARGET)
def _num_gpu(em, e):
    return i32(e.attrs["fragment"].gpu_elements)
