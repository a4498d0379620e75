"""numba's constant locals, for ``cuda.jit`` code only: ``N = 100`` at the top level of a
kernel, never assigned again, then ``cuda.shared.array(N, int32)``: numba propagates the
constant; simt asks where a compile-time constant is needed (``FrontEnd.static``) and
reads the literal from the assignment. Elsewhere the name stays a variable."""
import ast

_NONE = object()


def literal(fc, value):
    """The literal a variable was given once at the top level of cuda.jit code, or None."""
    name = getattr(value, "name", None)
    if not fc.wraparound or not isinstance(name, str):
        return None
    table = getattr(fc, "_numba_literals", None)
    if table is None:
        table = fc._numba_literals = _literals(fc.source.fndef)
    found = table.get(name, _NONE)
    return None if found is _NONE else found


def _literals(fndef):
    stores = {}
    for node in ast.walk(fndef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    params = {a.arg for a in fndef.args.args}
    out = {}
    for stmt in fndef.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if stores.get(name) != 1 or name in params:
                continue
            try:
                value = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                continue
            if _is_int_or_ints(value):
                out[name] = value
    return out


def _is_int_or_ints(value):
    if isinstance(value, tuple):
        return bool(value) and all(_is_int_or_ints(v) for v in value)
    return type(value) is int
