"""Which array parameters a typed kernel writes: stores and atomics into them, directly,
through views, record fields and local names bound to them, or in the device functions
they are passed to. The launch path uses this to keep read-only host arrays read-only (runtime/access.py).
"""
import threading
import weakref

from ..ir import nodes as ir
from ..ir import types as T
from ..ir.walk import walk

_known = weakref.WeakKeyDictionary()     # ir.Function -> its written_params
_open = threading.local()                 # .functions: id -> writes so far, of those being found


def written_params(fn):
    """{parameter index: ir.Loc of a statement that writes it} of a typed ir.Function."""
    found = _known.get(fn)
    if found is not None:
        return found
    open_ = _open.__dict__.setdefault("functions", {})
    if id(fn) in open_:                  # a recursive call: what is known so far
        _open.hit_open = True
        return open_[id(fn)]
    # a function on a cycle of calls: repeated until its writes stop growing; those met
    # on the way that called a function still open are not kept (they may have seen
    # too little) but computed again
    outer_hit = getattr(_open, "hit_open", False)
    open_[id(fn)] = {}
    try:
        while True:
            _open.hit_open = False
            found = _Writes(fn).found
            if found.keys() == open_[id(fn)].keys():
                break
            open_[id(fn)] = found
    finally:
        del open_[id(fn)]
    hit = _open.hit_open and any(True for _ in open_)
    if not hit:
        _known[fn] = found
    _open.hit_open = outer_hit or hit
    return found


class _Writes:
    def __init__(self, fn):
        self.aliases = _aliases(fn.body)
        self.found = {}
        for node in walk(*fn.body):
            if isinstance(node, ir.Store):
                self._mark(node.array, node.loc)
            elif isinstance(node, ir.StoreField):
                self._mark(node.place, node.loc)
            elif isinstance(node, ir.Intrinsic) and getattr(node.entry, "writes", False):
                self._mark(node.args[0], node.loc)
            elif isinstance(node, ir.CallDevice):
                for index, loc in written_params(node.function).items():
                    self._mark(node.args[index], loc)

    def _mark(self, array, loc):
        for index in _roots(array, self.aliases):
            self.found.setdefault(index, loc)


def _roots(e, aliases):
    """The parameter indices an array expression may refer to."""
    if isinstance(e, ir.Param):
        return {e.index}
    if isinstance(e, (ir.View, ir.Load)):          # a Load: a record written in place
        return _roots(e.array, aliases)
    if isinstance(e, ir.Field):                    # a record's field, or its array field
        return _roots(e.record, aliases)
    if isinstance(e, ir.Var):
        return aliases.get(e.name, set())
    if isinstance(e, ir.IfExp):
        return _roots(e.then, aliases) | _roots(e.orelse, aliases)
    return set()


def _aliases(body):
    """{local name: parameter indices} for names bound to arrays (``row = a[i]``)."""
    binds = [s for s in walk(*body)
             if isinstance(s, ir.Assign) and isinstance(s.value.type, T.Array)]
    aliases, changed = {}, True
    while changed:
        changed = False
        for s in binds:
            roots = _roots(s.value, aliases)
            if not roots <= aliases.get(s.name, set()):
                aliases[s.name] = aliases.get(s.name, set()) | roots
                changed = True
    return aliases
