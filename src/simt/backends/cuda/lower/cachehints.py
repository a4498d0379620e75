"""Cache-hinted loads and stores (lang/cachehints.py) on the GPU: one PTX instruction each
with its cache operator (``ld.global.nc``, ``ld.global.cg`` ..., ``st.global.wb`` ...),
written as inline PTX since LLVM has no way to ask for them."""
from llvmlite import ir as ll

from ....lang.cachehints import ENTRIES, LOADS as LOAD_NAMES, STORES as STORE_NAMES, \
    element_address
from ....compiler.lltypes import bool_of_byte
from ....lang.registry import declare_target, lowering

TARGET = declare_target("cuda")

LOADS = [ENTRIES[n] for n in LOAD_NAMES]
STORES = [ENTRIES[n] for n in STORE_NAMES]
# element bits -> (PTX type, register constraint, register width)
REGISTERS = {8: ("u8", "r", 32), 16: ("b16", "h", 16), 32: ("b32", "r", 32), 64: ("b64", "l", 64)}


def _register(t):
    """(PTX type, constraint, register width) for an element of type t."""
    return REGISTERS[t.dtype.itemsize * 8]


def _from_bits(b, bits, t):
    """A loaded register as a value of type t."""
    width = t.dtype.itemsize * 8
    if width < bits.type.width:
        bits = b.trunc(bits, ll.IntType(width))
    if t.kind == "b":
        return bool_of_byte(b, bits)
    if t.kind == "f":
        return b.bitcast(bits, {16: ll.HalfType(), 32: ll.FloatType(), 64: ll.DoubleType()}[width])
    return bits


def _to_bits(b, value, t, reg_width):
    width = t.dtype.itemsize * 8
    if t.kind == "f":
        value = b.bitcast(value, ll.IntType(width))
    elif t.kind == "b":
        value = b.zext(value, ll.IntType(width))
    return b.zext(value, ll.IntType(reg_width)) if reg_width > width else value


@lowering(*LOADS, target=TARGET)
def _load_cuda(em, e):
    address, array_type = element_address(em, e, 1, "read")
    t = array_type.element
    ptx_type, reg, width = _register(t)
    fnty = ll.FunctionType(ll.IntType(width), [address.type])
    asm = ll.InlineAsm(fnty, f"ld.global.{LOAD_NAMES[e.op][0]}.{ptx_type} $0, [$1];", f"={reg},l",
                       side_effect=True)
    return _from_bits(em.builder, em.builder.call(asm, [address]), t)


@lowering(*STORES, target=TARGET)
def _store_cuda(em, e):
    address, array_type = element_address(em, e, 2, "write")
    t = array_type.element
    ptx_type, reg, width = _register(t)
    value = _to_bits(em.builder, em.expr(e.args[1]), t, width)
    fnty = ll.FunctionType(ll.VoidType(), [address.type, value.type])
    asm = ll.InlineAsm(fnty, f"st.global.{STORE_NAMES[e.op][0]}.{ptx_type} [$0], $1;",
                       f"l,{reg},~{{memory}}", side_effect=True)
    em.builder.call(asm, [address, value])
