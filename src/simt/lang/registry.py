"""The one registry of names kernels may call.

Each entry (an ``Intrinsic``) carries its op name, its documentation, and a
``build`` rule that types a call and returns the IR node. Lowering lives in
the code generator's table, keyed by the same op; devices that lack a
lowering raise NotSupportedError with the entry's ``unsupported`` text.
"""

REGISTRY = {}


class Intrinsic:
    """A function or value usable inside kernels, declared for the compiler.

    ``build(fc, args, kwargs, loc)`` types a call: ``fc`` is the front end (for
    casts and errors), ``args`` typed IR expressions. ``value=True`` marks a
    name read without a call (``threadIdx.x``). ``statement`` marks calls that
    are statements (barriers).
    """

    def __init__(self, op, doc, build=None, *, value=False, statement=False,
                 unsupported=None, python_name=None):
        self.op = op
        self.__doc__ = doc
        self.doc = doc
        self.build = build
        self.value = value
        self.statement = statement
        self.unsupported = unsupported or {}     # device kind -> why
        self.python_name = python_name or "simt." + op
        REGISTRY[op] = self

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{self.python_name}() can only be called inside a @simt.kernel "
                           f"or @simt.device function")

    def __repr__(self):
        return f"<simt intrinsic {self.python_name}>"


class Namespace:
    """A group of intrinsics reached by attribute (``simt.atomic.add``)."""

    def __init__(self, name, doc, **members):
        self.__name__ = name
        self.__doc__ = doc
        for key, value in members.items():
            setattr(self, key, value)

    def __repr__(self):
        return f"<simt namespace {self.__name__}>"
