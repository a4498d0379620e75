"""The one registry of names kernels may call.

Each entry (an ``Intrinsic``) holds in one place its documentation, its typing
rule (``build``) and its lowerings. A lowering every LLVM target shares is
registered here or in compiler/ (``@entry.lowering()``); a device's own
lowering is registered from that device's folder (backends/<device>/lower/:
``@lowering(entry, target=TARGET)``), which first declares its target
(``declare_target``). So the registry learns its targets from the backends, and
no layer above them names a device. IR nodes an entry builds carry the entry
(``entry.node(...)``), so the code generator finds the lowering without parsing
op names. A target without a lowering gets a NotSupportedError carrying
``unsupported[target]`` (set by ``refuse``, from the device's folder too).

Typing rules see the front end only through the ``Builder`` interface below.
"""
from typing import Any, Protocol

from ..ir import nodes as ir
from ..lazy import lazy_module      # noqa: F401  (for lowerings: see lazy.py)

REGISTRY = {}            # op -> entry
CALLABLES = {}           # a Python object kernels may call (print, math.sin, np.sin) -> entry
TARGETS = {}             # target name -> Target declared by its device folder (declare_target)


class Target:
    """A device's entry in the registry: its name, and whether it shares the lowerings
    registered for every LLVM target (``llvm``; the sim device makes Python instead)."""

    def __init__(self, name, llvm):
        self.name = name
        self.llvm = llvm

    def __repr__(self):
        return f"<simt target {self.name}>"


def declare_target(name, *, llvm=True):
    """Declare a target (once per device folder, before it registers lowerings)."""
    target = TARGETS.get(name)
    if target is None:
        target = TARGETS[name] = Target(name, llvm)
    elif target.llvm != llvm:
        raise ValueError(f"target {name!r} is declared twice, differently")
    return name


class Static:
    """A compile-time Python value met in kernel code (a module, a constant, a dtype...)."""

    def __init__(self, value, name=""):
        self.value = value
        self.name = name


class Builder(Protocol):
    """What typing rules may ask of the front end; ``loc`` is an ``ir.Loc``."""

    def fail(self, loc, message, hint=None): """Raise a CompileError at loc."""
    def expr(self, value, loc): """An ir.Expr from a built argument (Statics become Const)."""
    def cast(self, value, t, loc): """value converted to type t, by the language's rules."""
    def truth(self, value, loc): """value as a bool condition."""
    def binop(self, op, lhs, rhs, loc): """lhs op rhs with the usual promotions."""
    def index(self, value, loc): """value as an int64 index."""
    def wrap_indices(self, array, indices, loc): """Indices into array as the kernel's
        index rule reads them (cuda.jit: negative ones count from the end)."""
    def subscript(self, base, index, loc, label): """base[index] (a load, view or tuple item)."""
    def call_device(self, function, args, loc): """A call of a @simt.device function."""
    def temp(self, prefix): """A fresh variable name."""
    def assign_type(self, name, t, loc): """Declare (or widen) variable name's type."""
    def bind_name(self, name, value, loc): """The statements binding name = value."""
    def hoist(self, *stmts): """Emit stmts before the statement being built."""
    def collective(self, op, pred, result, loc): """A block-wide barrier collective's value."""
    def shared_scratch(self, dtype, count, loc): """A hidden shared array (an ArrayRef)."""
    def pending_name(self): """The name the value being built will be bound to."""
    def static(self, value, what, loc): """The compile-time value of an argument."""
    def static_dtype(self, value, loc): """A compile-time NumPy dtype argument."""
    def constant_int(self, value, what, loc): """A compile-time integer argument."""
    def one_arg(self, args, name, loc): """The only argument of a one-argument call."""
    def label_of(self, value): """How an array argument is named in messages."""
    def warp(self): """The target's warp facts (ir.types.Warp: size, mask type, full_mask)."""
    wraparound: bool    # compiled under cuda.jit: numba's rules (negative indices, arrays)


class Intrinsic:
    """A function or value usable inside kernels, declared for the compiler.

    ``build(fc, args, kwargs, loc)`` types a call: ``fc`` is a ``Builder``,
    ``args`` what the front end built for the arguments (IR or Static).
    ``value=True`` marks a name read without a call (``threadIdx.x``);
    ``statement`` calls that are statements (barriers). ``lowered_as`` names
    the IR node classes the typing rule builds when the entry has no lowering
    of its own (``syncthreads`` is an ``ir.Barrier``; ``()`` for compile-time
    values). ``public=False`` marks entries only other typing rules build.
    ``python_objects`` are the Python callables a kernel may call for it.
    ``writes`` marks calls that write their first argument, an array
    (atomics, ordered and cache-hinted stores: compiler/writes.py).
    """

    def __init__(self, op, doc, build=None, *, value=False, statement=False,
                 unsupported=None, python_name=None, lowered_as=None, public=True,
                 python_objects=(), writes=False):
        self.op = op
        self.__doc__ = doc
        self.doc = doc
        self.build = build
        self.value = value
        self.statement = statement
        self.unsupported = unsupported or {}     # target -> why it lacks this
        self.python_name = python_name or "simt." + op
        self.lowered_as = lowered_as
        self.public = public
        self.lowerings = {}                       # target (None: every target) -> fn(em, node)
        self.python_objects = tuple(python_objects)
        self.writes = writes
        self.arity = None                         # positional arguments, where the rule fixes them
        if op in REGISTRY:
            raise ValueError(f"intrinsic {op} is registered twice")
        REGISTRY[op] = self
        for obj in self.python_objects:
            CALLABLES[obj] = self

    def node(self, t, loc, args, attrs=None, op=None):
        """The IR call of this entry (``op`` names a variant its lowering reads)."""
        return ir.Intrinsic(t, loc, op or self.op, list(args), attrs or {}, entry=self)

    def lowering(self, target=None):
        """Decorator: ``fn(em, node)`` lowers this entry on target (None: on all)."""
        return lowering(self, target=target)

    def lowering_for(self, target):
        """The lowering for ``target``: its own, else (LLVM targets) the shared one."""
        own = self.lowerings.get(target)
        if own is not None:
            return own
        declared = TARGETS.get(target)
        return self.lowerings.get(None) if declared is None or declared.llvm else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:   # Any: the typing rule types it
        raise RuntimeError(f"{self.python_name}() can only be called inside a @simt.kernel "
                           f"or @simt.device function")

    def __repr__(self):
        return f"<simt intrinsic {self.python_name}>"


def _known(target):
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; declared targets are "
                         f"{', '.join(TARGETS) or 'none'} (declare_target, in the device's "
                         f"folder)")


def lowering(*entries, target=None):
    """Decorator registering ``fn(em, node)`` as the lowering of entries on target (None:
    on every LLVM target)."""
    if target is not None:
        _known(target)

    def register(fn):
        for entry in entries:
            if target in entry.lowerings:
                raise ValueError(f"{entry.python_name} already has a lowering for {target}")
            entry.lowerings[target] = fn
        return fn
    return register


def refuse(*entries, target, why):
    """Record why ``target`` has no lowering of entries (the NotSupportedError's reason)."""
    _known(target)
    for entry in entries:
        if target in entry.lowerings:
            raise ValueError(f"{entry.python_name} has a {target} lowering and a reason "
                             f"for lacking one")
        entry.unsupported[target] = why


def also_callable(obj, entry):
    """Let kernels call the Python callable ``obj`` (a host function of the same name, such
    as simt.memset) as ``entry``."""
    CALLABLES[obj] = entry


def callable_entry(obj):
    """The entry a Python callable (print, math.sin, np.sin) stands for in kernels, or None."""
    try:
        return CALLABLES.get(obj)
    except TypeError:                             # unhashable
        return None


class Namespace:
    """A group of intrinsics reached by attribute (``simt.atomic.add``)."""

    def __init__(self, name, doc, **members):
        self.__name__ = name
        self.__doc__ = doc
        for key, value in members.items():
            setattr(self, key, value)

    def entries(self):
        return [v for v in vars(self).values() if isinstance(v, Intrinsic)]

    def __repr__(self):
        return f"<simt namespace {self.__name__}>"


class PlainDeviceFunction:
    """A Python function called as a device function, made by the compiler itself (the
    front end's call_device reads these attributes; runtime/kernel.py's DeviceFunction is
    the user's, and compiling does not reach the runtime)."""

    _simt_device = True
    inline = None

    def __init__(self, pyfunc):
        self.pyfunc, self.ir_cache, self.__name__ = pyfunc, {}, pyfunc.__name__
