"""simt's types: scalars named by NumPy dtypes, CUDA's vector types, records (C structs),
arrays, tuples.

Promotion follows NumPy 2 (NEP 50): a *weak* scalar is a Python literal (or a
variable that only ever held literals) and takes the type of the typed value
it meets.
"""
import dataclasses

import numpy as np

from .records import check as check_record, fields as record_fields, natural_alignment

# the dtype metadata key that marks a @simt.struct class's dtype (lang/structs.py)
STRUCT_METADATA = "simt.struct"

_WEAK_SAMPLE = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


class Type:
    """Base of simt types. Types are immutable and compare by value."""

    def key(self):
        raise NotImplementedError

    def __eq__(self, other):
        return self is other or (type(self) is type(other) and self.key() == other.key())

    def __hash__(self):
        return hash((type(self).__name__, self.key()))


# bfloat16 has no NumPy dtype: simt's types name it by this storage struct (its 16 bits),
# whether a program's arrays use it or ml_dtypes' bfloat16 (lang/half.py)
BF16_STORAGE = np.dtype([("bfloat16", "<u2")])


def is_bfloat16_dtype(dtype):
    """Whether a NumPy dtype is bfloat16: ml_dtypes' or simt's storage struct."""
    return dtype.itemsize == 2 and (dtype.names == ("bfloat16",) or
                                    (dtype.names is None and dtype.name == "bfloat16"))


# FP8 (lang/float8.py) likewise: a one-byte storage struct per format, whether a program's
# arrays use it or ml_dtypes' float8_e4m3fn / float8_e5m2; code holds it as its 8 bits
F8E4M3_STORAGE = np.dtype([("float8_e4m3", "u1")])
F8E5M2_STORAGE = np.dtype([("float8_e5m2", "u1")])
_FLOAT8_STRUCTS = {"float8_e4m3": F8E4M3_STORAGE, "float8_e5m2": F8E5M2_STORAGE}
_FLOAT8_ML_DTYPES = {"float8_e4m3fn": F8E4M3_STORAGE, "float8_e5m2": F8E5M2_STORAGE}


def float8_storage(dtype):
    """The storage struct of an FP8 dtype (ml_dtypes' or simt's), or None for another.
    ml_dtypes' float8_e4m3 (with infinities) is not CUDA's e4m3: float8_e4m3fn is."""
    if dtype.itemsize != 1:
        return None
    if dtype.names is None:
        return _FLOAT8_ML_DTYPES.get(dtype.name)
    return _FLOAT8_STRUCTS.get(dtype.names[0]) if len(dtype.names) == 1 else None


class Scalar(Type):
    """A number of one NumPy dtype; ``weak`` marks an untyped Python literal. bfloat16's
    dtype is ``BF16_STORAGE``; its kind is 'f' and code holds it as its 16 bits."""

    def __init__(self, dtype, weak=False):
        self.dtype = np.dtype(dtype)
        if is_bfloat16_dtype(self.dtype):
            self.dtype = BF16_STORAGE
        self.dtype = float8_storage(self.dtype) or self.dtype
        self.weak = weak

    def key(self):
        dtype, kept = self.dtype, self.__dict__.get("_dtype_key")
        if kept is None or kept[0] is not dtype:    # worked out once per dtype held: types
            kept = self._dtype_key = (dtype, _dtype_key(dtype))    # are compared often
        return (kept[1], self.weak)

    @property
    def kind(self):
        if self.dtype is BF16_STORAGE or self.float8:
            return "f"
        return self.dtype.kind                                          # 'b' 'i' 'u' 'f' 'c'

    @property
    def is_bfloat16(self):
        return self.dtype is BF16_STORAGE

    @property
    def float8(self):
        """The FP8 format's name ('float8_e4m3', 'float8_e5m2'), or None."""
        return self.dtype.names[0] if self.dtype.names is not None and \
            self.dtype.itemsize == 1 else None

    @property
    def bits(self):
        return 1 if self.kind == "b" else self.dtype.itemsize * 8

    def strong(self):
        return Scalar(self.dtype) if self.weak else self

    def __repr__(self):
        name = "bfloat16" if self.is_bfloat16 else self.float8 or self.dtype.name
        return ("weak " if self.weak else "") + name


def narrows(source, target):
    """Whether converting a ``source`` value to ``target`` may change it because the
    target integer type is narrower (what ``narrowing=True`` checks: bool excluded)."""
    return isinstance(source, Scalar) and isinstance(target, Scalar) and \
        source.kind in "iu" and target.kind in "iu" and target.bits < source.bits


class Vector(Type):
    """One of CUDA's built-in vector types (float4, int2, half2 ...): ``n`` components of
    scalar dtype ``dtype``, named .x .y .z .w. In memory it is the aligned NumPy struct
    ``struct`` (lang/vectors.py); its own kind of type, beside any future record type."""

    def __init__(self, dtype, n, name=None):
        self.dtype = Scalar(dtype).dtype
        self.n = n
        self.name = name or vector_name(self.dtype, n)

    def key(self):
        return (_dtype_key(self.dtype), self.n)

    @property
    def element(self):
        return Scalar(self.dtype)

    @property
    def kind(self):
        return self.element.kind

    @property
    def struct(self):
        return vector_dtype(self.dtype, self.n)

    @property
    def align(self):
        """CUDA's alignment: the whole vector for 2 and 4 components (at most 16 bytes),
        the component for 1 and 3."""
        size = self.dtype.itemsize
        return min(size * self.n, 16) if self.n in (2, 4) else size

    def __repr__(self):
        return self.name


VECTOR_NAMES = {"i1": "char", "u1": "uchar", "i2": "short", "u2": "ushort", "i4": "int",
                "u4": "uint", "i8": "longlong", "u8": "ulonglong", "f2": "half",
                "f4": "float", "f8": "double"}


def vector_name(dtype, n):
    return ("bfloat16" if is_bfloat16_dtype(dtype) else VECTOR_NAMES[dtype.str[1:]]) + str(n)


def vector_dtype(dtype, n):
    """The NumPy struct of vector type ``dtype`` x ``n``: fields x, y, z, w."""
    return np.dtype([(c, np.dtype(dtype)) for c in "xyzw"[:n]], align=True)




def _dtype_key(dtype):
    """A dtype as a key: its str, or for a struct its fields (every struct of 16 bytes has
    the str '|V16')."""
    if is_bfloat16_dtype(dtype):
        return "bfloat16"
    if float8_storage(dtype) is not None:
        return float8_storage(dtype).names[0]
    if dtype.names is None:
        return dtype.str
    token = struct_token(dtype)
    return str(dtype) if token is None else f"{dtype} struct {token}"


def struct_token(dtype):
    """The name of the ``@simt.struct`` class whose dtype this is (lang/structs.py marks
    it in the dtype's metadata, which NumPy keeps on arrays, their elements and copies),
    else None."""
    metadata = dtype.metadata
    return None if not metadata else metadata.get(STRUCT_METADATA)


def element_type(dtype):
    """The type of one element of an array of ``dtype``: a Scalar, a Vector for the
    struct of a vector type, a Struct for a ``@simt.struct`` class's dtype (checked
    first: a struct of fields x, y, z has a float3's layout), else a Record for a
    structured dtype."""
    dtype = np.dtype(dtype)
    if dtype.names and struct_token(dtype) is not None:
        return Struct(dtype)
    if dtype.names is None or is_bfloat16_dtype(dtype) or float8_storage(dtype) is not None:
        return Scalar(dtype)
    n = len(dtype.names)
    if n == 0:
        return Record(dtype)                    # refused there, by name
    component = dtype.fields[dtype.names[0]][0]
    if dtype.names == tuple("xyzw"[:n]) and dtype == vector_dtype(component, n) and \
            (is_bfloat16_dtype(component) or component.str[1:] in VECTOR_NAMES):
        return Vector(component, n)
    return Record(dtype)


class Array(Type):
    """An array of ``ndim`` dimensions in memory ``space``; layout 'C', 'F' or 'A'.
    ``align``: set where its elements' addresses are known to be less aligned than
    their dtype (an array field of a packed record): what their accesses may assume."""

    def __init__(self, dtype, ndim, layout="A", space="global", align=None):
        self.dtype = np.dtype(dtype)
        self.ndim = ndim
        self.layout = layout
        self.space = space
        self.align = align

    def key(self):
        base = (_dtype_key(self.dtype), self.ndim, self.layout, self.space)
        return base if self.align is None else base + (self.align,)

    @property
    def element(self):
        return element_type(self.dtype)

    def with_(self, **changes):
        fields = dict(dtype=self.dtype, ndim=self.ndim, layout=self.layout, space=self.space,
                      align=self.align)
        fields.update(changes)
        return Array(**fields)

    def __repr__(self):
        align = f", align {self.align}" if self.align is not None else ""
        return f"{self.element!r}[{', '.join(':' * self.ndim)}] ({self.layout}, {self.space}{align})"


class Tuple(Type):
    """A fixed-length tuple of typed values."""

    def __init__(self, items):
        self.items = tuple(items)

    def key(self):
        return self.items

    def __repr__(self):
        return "(" + ", ".join(map(repr, self.items)) + ("," if len(self.items) == 1 else "") + ")"


class NamedTuple(Tuple):
    """A ``collections.namedtuple`` / ``typing.NamedTuple`` value: a tuple whose items
    also have names (``cls`` is the Python class, for building one on the host)."""

    def __init__(self, items, names, cls):
        super().__init__(items)
        self.names = tuple(names)
        self.cls = cls

    def key(self):
        return (self.items, self.names, getattr(self.cls, "__qualname__", ""))

    def __repr__(self):
        return f"{self.cls.__name__}(" + ", ".join(
            f"{n}={t!r}" for n, t in zip(self.names, self.items)) + ")"


class Record(Type):
    """A C struct: a NumPy structured dtype (ir/records.py checks and lays it out).
    ``align`` is what its accesses may assume about an element's address: C's alignment
    when the dtype is laid out as a C compiler would (NumPy's ``align=True``, or packed
    fields that happen to fall on their alignment), else 1 (a packed struct)."""

    def __init__(self, dtype):
        self.dtype = check_record(np.dtype(dtype))
        self.align = natural_alignment(self.dtype) or 1

    def key(self):
        return (str(self.dtype.descr), self.dtype.itemsize, self.align)

    @property
    def names(self):
        return self.dtype.names

    def __repr__(self):
        fields = ", ".join(f"{n}: {_dtype_text(d)} @{o}" for n, d, o in record_fields(self.dtype))
        return f"record{{{fields}}} ({self.dtype.itemsize} bytes)"


class Struct(Record):
    """A ``@simt.struct`` class's values: a record (its fields, layout and every record
    rule) whose methods and operators are the class's (compiler/structs.py). ``token``
    names the class and the hash of its source (lang/structs.py's registry)."""

    def __init__(self, dtype):
        super().__init__(dtype)
        self.token = struct_token(self.dtype)

    def key(self):
        return super().key() + (self.token,)

    @property
    def class_name(self):
        return self.token.partition("@")[0].rpartition(".")[2]

    def __repr__(self):
        return f"struct {self.class_name} ({self.dtype.itemsize} bytes)"


def _dtype_text(dtype):
    if dtype.subdtype is not None:
        return f"{_dtype_text(dtype.subdtype[0])}{list(dtype.subdtype[1])}"
    return repr(Record(dtype)) if dtype.names else dtype.name


class Texture(Type):
    """A texture object argument. Everything that changes the generated code is part of
    the type: texel dtype and channels, dimensions, layering, where the texels live
    ('linear', 'pitch2d', 'array'), filter, address mode, coordinates and read mode."""

    FIELDS = ("dtype", "channels", "ndim", "layered", "source", "filter", "address",
              "normalized_coords", "read_mode", "cubemap", "mipmap_filter")

    def __init__(self, dtype, channels, ndim, layered, source, filter, address,
                 normalized_coords, read_mode, cubemap=False, mipmap_filter=None):
        self.dtype = np.dtype(dtype)
        self.channels, self.ndim, self.layered, self.source = channels, ndim, layered, source
        self.filter, self.address = filter, address
        self.normalized_coords, self.read_mode = normalized_coords, read_mode
        # a cubemap reads 6 faces (x 'layers' when layered); a texture over a
        # MipmappedArray ('mipmap' source) filters between levels with mipmap_filter
        self.cubemap, self.mipmap_filter = cubemap, mipmap_filter
        # made once: a launch function compares a new texture's type with its own
        self._key = tuple(str(getattr(self, f)) for f in self.FIELDS)

    def key(self):
        return self._key

    def __repr__(self):
        return "texture<" + ", ".join(self.key()) + ">"


class Surface(Type):
    """A surface object argument over a CUDA array of ``dtype`` x ``channels`` (a cubemap
    surface is a 2D layered one of 6 faces per layer)."""

    def __init__(self, dtype, channels, ndim, layered, cubemap=False):
        self.dtype = np.dtype(dtype)
        self.channels, self.ndim, self.layered = channels, ndim, layered
        self.cubemap = cubemap

    def key(self):
        return (self.dtype.str, self.channels, self.ndim, self.layered, self.cubemap)

    def __repr__(self):
        kind = ("cubemap " if self.cubemap else "") + ("layered " if self.layered else "")
        return f"surface<{self.dtype.name}x{self.channels}, {kind}{self.ndim}d>"


class GraphHandle(Scalar):
    """An opaque 64-bit handle of the graph runtime passed to kernels: a conditional
    handle (``what='conditional'``, simt.Graph.conditional_handle) or an instantiated
    graph a kernel may launch (``what='exec'``). Held as a uint64 everywhere (its own
    class only so that the typing rules of simt.graph_set_condition and
    simt.graph_launch can tell it from a number, and the cache keys differ)."""

    def __init__(self, what):
        super().__init__(np.uint64)
        self.what = what

    def key(self):
        return (self.what,)

    def __repr__(self):
        return f"graph_{self.what}_handle"


class TensorMap(Type):
    """A TMA tensor map argument (simt.tensor_map; runtime/tensormaps.py): what changes the
    generated code is the element dtype, the rank, the box (NumPy axis order), the swizzle
    ('none', '32B', '64B', '128B') and the out-of-bounds fill. The tensor's base, extents
    and strides are values of the launch."""

    def __init__(self, dtype, ndim, box, swizzle, oob_fill):
        self.dtype = np.dtype(dtype)
        self.ndim, self.box = ndim, tuple(int(b) for b in box)
        self.swizzle, self.oob_fill = swizzle, oob_fill

    @property
    def box_bytes(self):
        """Bytes one load or store of the box moves (out-of-bounds elements included)."""
        n = self.dtype.itemsize
        for b in self.box:
            n *= b
        return n

    def key(self):
        return (self.dtype.str, self.ndim, self.box, self.swizzle, self.oob_fill)

    def __repr__(self):
        box = "x".join(map(str, self.box))
        return (f"tensor_map<{self.dtype.name}, {self.ndim}d, box {box}, swizzle {self.swizzle}, "
                f"fill {self.oob_fill}>")


class FunctionArg(Type):
    """A ``@simt.device`` function passed to a kernel: the kernel's code is specialised for
    it (the function is part of the launch's type key, as numba specialises on
    dispatchers), and nothing is passed at run time (compiler/group_args.py)."""

    def __init__(self, function):
        self.function = function

    def key(self):
        return (id(self.function),)       # the type holds the function: the id stays its own

    def __repr__(self):
        return f"device_function<{self.function.__name__}>"


class Void(Type):
    def key(self):
        return ()

    def __repr__(self):
        return "void"


VOID = Void()
BOOL = Scalar(np.bool_)
INT32 = Scalar(np.int32)
UINT32 = Scalar(np.uint32)
INT64 = Scalar(np.int64)
UINT64 = Scalar(np.uint64)
FLOAT32 = Scalar(np.float32)
FLOAT64 = Scalar(np.float64)
BFLOAT16 = Scalar(BF16_STORAGE)
FLOAT8_E4M3 = Scalar(F8E4M3_STORAGE)
FLOAT8_E5M2 = Scalar(F8E5M2_STORAGE)
WEAK_INT = Scalar(np.int64, weak=True)
WEAK_FLOAT = Scalar(np.float64, weak=True)
WEAK_COMPLEX = Scalar(np.complex128, weak=True)
WEAK_BOOL = Scalar(np.bool_, weak=True)


@dataclasses.dataclass(frozen=True)
class Warp:
    """A device's warp facts: ``size`` lanes, lane masks of type ``mask`` (an unsigned
    scalar with a bit per lane). They are target data (compiler/target.py ``Target.warp``,
    runtime/backend.py ``Backend.warp``): the front end types a kernel for them, so a
    64-wide device is a new ``Warp(64, UINT64)``, not a change of the language."""

    size: int
    mask: Scalar
    # the compute capability ``simt.arch()`` folds to (CUDA's __CUDA_ARCH__): the GPU target
    # a kernel is compiled for, (0, 0) on the CPU and sim devices (backends' warp_for)
    arch: tuple = (0, 0)

    def __post_init__(self):
        if self.size & (self.size - 1) or not 0 < self.size <= self.mask.bits:
            raise ValueError(f"a warp of {self.size} lanes needs a power of 2 that fits "
                             f"its {self.mask} lane mask")

    @property
    def full_mask(self):
        """Every lane: the mask's value with a bit set for each of the ``size`` lanes."""
        return (1 << self.size) - 1


WARP32 = Warp(32, UINT32)        # NVIDIA GPUs, and the CPU and sim devices, which mirror them

SCALAR_DTYPES = [np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128)]


def _operand(t):
    return _WEAK_SAMPLE[t.kind] if t.weak else t.dtype


def promote(*types):
    """The result type of arithmetic between scalars, as NumPy 2 computes it. bfloat16
    promotes as float16 does, except that it stays bfloat16 where float16 would, and
    meets float16 in float32 (as ml_dtypes' promotion does where it defines one). FP8
    values take part as float32, as CUDA's __nv_fp8 types convert to float."""
    if any(t.float8 for t in types):
        return promote(*[FLOAT32 if t.float8 else t for t in types])
    if any(t.is_bfloat16 for t in types):
        return _promote_bfloat16(types)
    key = tuple(t.key() for t in types)     # NumPy's answer kept: it costs 15 us a call
    found = _PROMOTED.get(key)
    if found is None:
        weak = all(t.weak for t in types)
        found = _PROMOTED[key] = (np.result_type(
            *[_WEAK_SAMPLE[t.kind] if weak else _operand(t) for t in types]), weak)
    return Scalar(found[0], weak=found[1])


_PROMOTED = {}      # promote's NumPy results: Scalar keys -> (dtype, weak)


def _promote_bfloat16(types):
    typed = [t for t in types if not t.weak and not t.is_bfloat16]
    if not typed:
        return BFLOAT16
    if any(t.dtype == np.float16 for t in typed):
        return promote(FLOAT32, *typed)
    wide = promote(Scalar(np.float16), *typed)
    return BFLOAT16 if wide.dtype == np.float16 else wide


def unify(old, new):
    """The type of a variable that has held values of types ``old`` and ``new``,
    or None if they cannot share a variable."""
    if old is None:
        return new
    if old == new:
        return old
    if isinstance(old, Scalar) and isinstance(new, Scalar):
        if old.weak and not new.weak:
            return new if _literal_fits(old, new) else promote(old, new)
        if new.weak and not old.weak:
            return old if _literal_fits(new, old) else promote(old, new)
        return promote(old, new)
    if isinstance(old, Array) and isinstance(new, Array):
        if old.dtype == new.dtype and old.ndim == new.ndim and old.space == new.space:
            aligns = [a.align for a in (old, new) if a.align is not None]
            return old.with_(layout="A", align=min(aligns) if aligns else None)
        return None
    if isinstance(old, Tuple) and isinstance(new, Tuple) and len(old.items) == len(new.items):
        items = [unify(a, b) for a, b in zip(old.items, new.items)]
        if None in items:
            return None
        if isinstance(old, NamedTuple) and isinstance(new, NamedTuple) and \
                (old.names, old.cls) == (new.names, new.cls):
            return NamedTuple(items, old.names, old.cls)
        return Tuple(items)
    return None


def _literal_fits(weak, strong):
    """Whether a literal of kind ``weak`` may take the strong type (int into float, not float into int)."""
    order = "buifc"
    return order.index(weak.kind) <= order.index(strong.kind) or strong.kind == "b" and weak.kind == "b"


def typeof(value):
    """The simt type of a host value passed to a kernel or captured as a constant."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, int):
        return INT64
    if isinstance(value, float):
        return FLOAT64
    if isinstance(value, complex):
        return Scalar(np.complex128)
    if isinstance(value, np.generic):
        element = element_type(value.dtype)
        if isinstance(element, Vector):
            raise TypeError(f"pass a {element.name} as simt.{element.name}(value), not as a "
                            "NumPy structured scalar")
        return element
    if hasattr(value, "_simt_type"):            # simt.Texture, simt.Surface, simt.float4(...)
        return value._simt_type
    if isinstance(value, tuple):
        items = [typeof(v) for v in value]
        fields = getattr(type(value), "_fields", None)
        if fields is not None:
            return NamedTuple(items, fields, type(value))
        return Tuple(items)
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is not None and shape is not None:
        return Array(dtype, len(shape), layout_of(value))
    raise TypeError(f"cannot pass a {type(value).__name__} to a kernel")


def layout_of(array):
    if array.ndim <= 1 and _contiguous_1d(array):
        return "C"
    flags = array.flags                 # NumPy's flags object, or DeviceArray's dict of NumPy's names
    if flags["C_CONTIGUOUS"]:
        return "C"
    if flags["F_CONTIGUOUS"]:
        return "F"
    return "A"


def _contiguous_1d(array):
    if array.ndim == 0:
        return True
    return array.strides[0] == array.dtype.itemsize or array.shape[0] <= 1


def parse_signature(text):
    """Parse ``"void(float32[:], int32)"`` into a list of argument types."""
    text = text.strip()
    if "(" in text:
        text = text[text.index("(") + 1:text.rindex(")")]
    args = []
    for part in _split_top(text):
        part = part.strip()
        if not part:
            continue
        if "[" in part:
            name, dims = part.split("[", 1)
            dims = dims.rstrip("]")
            ndim = len(dims.split(","))
            layout = "C" if dims.replace(" ", "").endswith("::1") else "A"
            if dims.replace(" ", "").startswith("::1") and ndim > 1:
                layout = "F"
            args.append(Array(_named_dtype(name.strip()), ndim, layout))
        else:
            args.append(Scalar(_named_dtype(part)))
    return args


def _named_dtype(name):
    """A signature's type name: NumPy's, or one of simt's own (bfloat16, float8_e4m3,
    float8_e5m2), which NumPy knows only once ml_dtypes is imported."""
    own = {"bfloat16": BF16_STORAGE, **_FLOAT8_STRUCTS}.get(name)
    if own is not None:
        return own
    try:
        return np.dtype(name)
    except TypeError:
        raise TypeError(f"unknown type {name!r} in the signature: use a NumPy dtype name "
                        f"(float32, int64...), bfloat16, float8_e4m3 or float8_e5m2") from None


def _split_top(text):
    depth, start, parts = 0, 0, []
    for i, ch in enumerate(text):
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts
