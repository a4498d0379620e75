"""Definite assignment: which reads of a local variable may find it unassigned.

Python raises UnboundLocalError at such a read; a kernel would read whatever the
variable's register holds. This pass, ahead of run time, sorts the reads:

- a read that no path assigns before (``a[i] = y; y = 2.0``) fails on every run that
  gets there: a ``CompileError``;
- a read that some paths reach assigned and others not is *maybe unassigned*: an
  ``if``/``elif`` chain with no ``else`` (numba-cuda's examples set a value in every arm
  of a chain over ``threadIdx.x % 4``), a name first assigned in a loop that may run zero
  times (its loop variable too), a name the loop body assigns only further down. Which
  paths run depends on values, so it compiles with a ``CompileWarning`` (once per read),
  undefined where it is unassigned, as in C; checked mode and the sim device report a
  thread that really reads it unassigned (ir/assigned.py).

A state is None where no path reaches (after return, break, continue, raise), else a
``State``: the names assigned on every path (``must``) and those assigned on some
(``maybe``: name -> why, for the warning's hint).
"""
import ast

from .source import syntax_nodes

HINTS = {
    "branch": "it is assigned on some paths only (an if or elif chain without else)",
    "loop": "it is assigned only in a loop, which may run zero times",
    "carried": "the loop assigns it further down: the first iteration reads it unassigned",
}


LAMBDA_HINT = ("a lambda copies the variables it reads where it is made, as a C++ lambda with "
               "[=] does: assign it before the lambda (a lambda cannot call itself; write a "
               "@simt.device function for that)")


class State:
    def __init__(self, must, maybe):
        self.must = set(must)
        self.maybe = dict(maybe)

    def copy(self):
        return State(self.must, self.maybe)


def check(fndef, params, report, warn, nodes=None):
    """Call ``report(node, message, hint)`` (which raises) at the first read of a local
    variable of ``fndef`` that no path assigns before it, and ``warn(node, message,
    hint)`` at each read that some path leaves unassigned. ``nodes``: every syntax node
    of ``fndef`` (source.syntax_nodes), where the caller has them."""
    Checker(fndef, report, warn, nodes).block(fndef.body, State(params, {}))


class Checker:
    def __init__(self, fndef, report, warn, nodes=None):
        declared, stored = set(), set()
        for node in syntax_nodes(fndef) if nodes is None else nodes:
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                stored.add(node.id)
        self.locals = stored - declared
        self.report = report
        self.warn = warn
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
        state.must |= {node.id for node in syntax_nodes(stmt)
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
        then = self.block(stmt.body, state.copy())
        orelse = self.block(stmt.orelse, state.copy())
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
        for node in syntax_nodes(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                    and node.id not in entry.must and node.id not in entry.maybe:
                entry.maybe[node.id] = "carried"
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
                after.maybe[name] = "loop"
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
            whys = [s.maybe.get(name) for s in states]
            maybe[name] = "loop" if "loop" in whys else \
                "carried" if set(whys) == {"carried"} else "branch"
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
        """Check the reads of an expression."""
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self.read(node, state)
        elif isinstance(node, ast.Lambda):  # it copies the locals it reads where it is
            self.lambda_reads(node.body, {a.arg for a in node.args.args}, state)  # made
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp,
                               ast.GeneratorExp, ast.NamedExpr)):
            return                          # the front end refuses these
        else:
            for child in ast.iter_child_nodes(node):
                self.reads(child, state)

    def lambda_reads(self, node, params, state):
        """The reads of a lambda's body that none of its parameters (nor those of the
        lambdas inside it) bind: compiler/lambdas.py captures them."""
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in params:
                self.read(node, state, LAMBDA_HINT)
        elif isinstance(node, ast.Lambda):
            self.lambda_reads(node.body, params | {a.arg for a in node.args.args}, state)
        else:
            for child in ast.iter_child_nodes(node):
                self.lambda_reads(child, params, state)

    def read(self, node, state, hint=None):
        name = node.id
        if name not in self.locals or name in state.must:
            return
        why = state.maybe.get(name)
        if why is None:
            self.report(node, f"'{name}' is read before it is assigned",
                        hint or "assign it before this line (Python would raise "
                        "UnboundLocalError)")
        self.warn(node, f"'{name}' may be read before it is assigned: {HINTS[why]}",
                  "a thread that reads it unassigned gets an undefined value, as in C "
                  "(checks=True and the sim device report it): assign it on every path "
                  "before this line")


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
