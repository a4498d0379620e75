"""Definite assignment: a kernel may not read a local variable before it is assigned.

Python raises UnboundLocalError at such a read; a kernel would read garbage, so the
front end refuses it at compile time. Python decides at run time, this pass ahead of
it, so where the paths that reach a read depend on values it accepts (a read guarded
by a condition tested after the paths diverged, a value from an earlier iteration of
a loop), and refuses what fails on every run that gets there:

- a read with no assignment before it on any path (``a[i] = y; y = 2.0``);
- a read, at the level of the ``if`` that assigns on one branch only, after that ``if``;
- a read at the top of a loop body of a name the body assigns only further down;
- after a loop that surely ran (``range`` of constants with at least one step,
  ``while True`` left by ``break``), a name the body assigns on some paths only.
  After another loop, a name first assigned in its body is accepted: whether the
  loop ran depends on values (``while off < blockDim.x``).

A state is None where no path reaches (after return, break, continue, raise), else a
``State``: the names assigned on every path (``must``) and those assigned on some
(``maybe``: name -> (why, guard depth)). The guard depth counts the conditions (``if``
branches, ``x if c else y``, ``and``/``or`` operands) around a point.
"""
import ast


class State:
    def __init__(self, must, maybe):
        self.must = set(must)
        self.maybe = dict(maybe)

    def copy(self):
        return State(self.must, self.maybe)


def check(fndef, params, report):
    """Raise (through ``report(node, message, hint)``) at the first read of a local
    variable of ``fndef`` that is not assigned before it."""
    Checker(fndef, report).block(fndef.body, State(params, {}))


class Checker:
    def __init__(self, fndef, report):
        declared, stored = set(), set()
        for node in ast.walk(fndef):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stored.add(node.id)
        self.locals = stored - declared
        self.report = report
        self.guards = 0
        self.loops = []          # per enclosing loop: the states at its breaks and continues

    # ------------------------------------------------------------ statements
    def block(self, stmts, state):
        for stmt in stmts:
            if state is None:     # unreachable: Python never runs it
                return None
            state = getattr(self, "stmt_" + type(stmt).__name__, self.stmt_other)(stmt, state)
        return state

    def stmt_other(self, stmt, state):
        """Statements the front end refuses anyway: accept what they assign."""
        state.must |= {node.id for node in ast.walk(stmt)
                       if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
        return state

    def stmt_Assign(self, stmt, state):
        self.reads(stmt.value, state)
        for target in stmt.targets:
            self.store(target, state)
        return state

    def stmt_AnnAssign(self, stmt, state):
        if stmt.value is not None:
            self.reads(stmt.value, state)
            self.store(stmt.target, state)
        return state

    def stmt_AugAssign(self, stmt, state):
        if isinstance(stmt.target, ast.Name):
            self.read(stmt.target, state)
        self.reads(stmt.value, state)
        self.store(stmt.target, state)
        return state

    def stmt_Expr(self, stmt, state):
        self.reads(stmt.value, state)
        return state

    def stmt_Assert(self, stmt, state):
        self.reads(stmt.test, state)
        if stmt.msg is not None:
            self.reads(stmt.msg, state)
        return state

    def stmt_Pass(self, stmt, state):
        return state

    def stmt_Return(self, stmt, state):
        if stmt.value is not None:
            self.reads(stmt.value, state)
        return None

    def stmt_Raise(self, stmt, state):
        return None

    def stmt_Break(self, stmt, state):
        if self.loops:
            self.loops[-1][0].append(state)
        return None

    def stmt_Continue(self, stmt, state):
        if self.loops:
            self.loops[-1][1].append(state)
        return None

    def stmt_If(self, stmt, state):
        self.reads(stmt.test, state)
        self.guards += 1
        then = self.block(stmt.body, state.copy())
        orelse = self.block(stmt.orelse, state.copy())
        self.guards -= 1
        return self.merge([then, orelse])

    def stmt_For(self, stmt, state):
        self.reads(stmt.iter, state)
        entry = self.enter_loop(stmt, state)
        self.store(stmt.target, entry)
        return self.loop(stmt, state, entry, _surely_runs_for(stmt))

    def stmt_While(self, stmt, state):
        self.reads(stmt.test, state)
        return self.loop(stmt, state, self.enter_loop(stmt, state), _always(stmt.test))

    def enter_loop(self, stmt, state):
        """The state at the top of a loop body: names the body assigns may hold a value
        of an earlier iteration ("carried")."""
        entry = state.copy()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                    and node.id not in entry.must and node.id not in entry.maybe:
                entry.maybe[node.id] = ("carried", self.guards)
        return entry

    def loop(self, stmt, before, entry, surely_runs):
        self.loops.append(([], []))
        end = self.block(stmt.body, entry)
        breaks, continues = self.loops.pop()
        exits = [end] + continues + breaks
        if not surely_runs:
            exits.append(before)
        after = self.merge(exits)
        if after is not None and not surely_runs:      # did it run? Python knows, we do not
            for name in set(after.maybe) - set(before.maybe):
                after.maybe[name] = ("doubt", None)
        if stmt.orelse and after is not None:
            after = self.block(stmt.orelse, after)
        return after

    def merge(self, states):
        """The state where paths join."""
        states = [s for s in states if s is not None]
        if not states:
            return None
        must = set.intersection(*(s.must for s in states))
        maybe = {}
        for name in set().union(*(s.must | set(s.maybe) for s in states)) - must:
            whys = [("must", None) if name in s.must else s.maybe.get(name, ("absent", None))
                    for s in states]
            kinds = {why for why, _ in whys}
            depths = [d for _, d in whys if d is not None]
            if "doubt" in kinds or {"carried", "must"} <= kinds:
                maybe[name] = ("doubt", None)
            elif kinds == {"carried"}:
                maybe[name] = ("carried", min(depths))
            else:
                maybe[name] = ("branch", min(depths + [self.guards]))
        return State(must, maybe)

    # ------------------------------------------------------------ expressions
    def store(self, target, state):
        if isinstance(target, ast.Name):
            state.must.add(target.id)
            state.maybe.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for item in target.elts:
                self.store(item, state)
        elif isinstance(target, ast.Starred):
            self.store(target.value, state)
        else:                               # a[i] = ..., x.attr = ...: reads a, i, x
            for child in ast.iter_child_nodes(target):
                self.reads(child, state)

    def reads(self, node, state):
        """Check the reads of an expression, in the order Python evaluates them."""
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self.read(node, state)
        elif isinstance(node, ast.IfExp):
            self.reads(node.test, state)
            self.guarded([node.body, node.orelse], state)
        elif isinstance(node, ast.BoolOp):
            self.reads(node.values[0], state)
            self.guarded(node.values[1:], state)
        elif isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                               ast.GeneratorExp, ast.NamedExpr)):
            return                          # the front end refuses these
        else:
            for child in ast.iter_child_nodes(node):
                self.reads(child, state)

    def guarded(self, nodes, state):
        self.guards += 1
        for node in nodes:
            self.reads(node, state)
        self.guards -= 1

    def read(self, node, state):
        name = node.id
        if name not in self.locals or name in state.must:
            return
        why, depth = state.maybe.get(name, ("absent", None))
        if why == "doubt" or why != "absent" and self.guards > depth:
            return
        hint = {"absent": "assign it before this line (Python would raise UnboundLocalError)",
                "branch": "it is assigned on some paths only: assign it on every path before "
                          "this line, e.g. before the if or loop that assigns it",
                "carried": "the loop assigns it only further down: assign it before the loop"
                }[why]
        self.report(node, f"'{name}' is read before it is assigned", hint)


def _surely_runs_for(stmt):
    """A ``for`` over ``range`` of literal ints with at least one step."""
    it = stmt.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords):
        return False
    try:
        args = [ast.literal_eval(a) for a in it.args]
        return all(type(a) is int for a in args) and len(range(*args)) > 0
    except (ValueError, TypeError, SyntaxError):
        return False


def _always(test):
    """``while True`` (or another true literal): left only by break or return."""
    try:
        return bool(ast.literal_eval(test))
    except (ValueError, TypeError, SyntaxError):
        return False
