"""Line tables for ``lineinfo=True``: LLVM debug metadata that maps the code to the user's
Python lines, so that the GPU's PTX carries ``.file`` / ``.loc`` directives (what nvcc's
``-lineinfo`` gives) and Nsight Compute and compute-sanitizer show Python lines.

One compile unit per module, of emission kind ``DebugDirectivesOnly``: line directives
and nothing else (no variables, no types), so the code is the same as without it. Each
LLVM function that codegen makes for a kernel or device function gets a DISubprogram;
each statement's instructions get a DILocation (codegen.FunctionEmitter.emit_stmts).
"""
import os

from llvmlite import ir as ll

DWARF_VERSION = 4
DEBUG_INFO_VERSION = 3          # LLVM's current debug metadata version


class LineTables:
    """The debug metadata of one LLVM module: files, subprograms, locations."""

    def __init__(self, module, filename):
        self.module = module
        self.files = {}
        self.locations = {}
        self.unit = module.add_debug_info("DICompileUnit", {
            "language": ll.DIToken("DW_LANG_C"), "file": self.file(filename),
            "producer": "simt", "isOptimized": True, "runtimeVersion": 0,
            "emissionKind": ll.DIToken("DebugDirectivesOnly")}, is_distinct=True)
        module.add_named_metadata("llvm.dbg.cu", self.unit)
        for key, value in (("Dwarf Version", DWARF_VERSION),
                           ("Debug Info Version", DEBUG_INFO_VERSION)):
            module.add_named_metadata("llvm.module.flags",
                                      [ll.IntType(32)(2), key, ll.IntType(32)(value)])

    def file(self, filename):
        found = self.files.get(filename)
        if found is None:
            path = os.path.abspath(filename) if not filename.startswith("<") else filename
            directory, name = os.path.split(path)
            found = self.files[filename] = self.module.add_debug_info(
                "DIFile", {"filename": name, "directory": directory})
        return found

    def subprogram(self, llfunc, function):
        """Attach a DISubprogram for the IR ``function`` to ``llfunc``; return it."""
        empty = self.module.add_debug_info("DISubroutineType", {
            "types": self.module.add_metadata([])})
        loc = function.loc
        sp = self.module.add_debug_info("DISubprogram", {
            "name": function.name, "linkageName": llfunc.name, "scope": self.file(loc.filename),
            "file": self.file(loc.filename), "line": loc.line, "type": empty,
            "scopeLine": loc.line, "spFlags": ll.DIToken("DISPFlagDefinition | DISPFlagOptimized"),
            "unit": self.unit}, is_distinct=True)
        llfunc.set_metadata("dbg", sp)
        return sp

    def location(self, loc, sp):
        """The DILocation of the Python place ``loc`` inside subprogram ``sp``."""
        key = (loc.line, loc.col, id(sp))
        found = self.locations.get(key)
        if found is None:
            found = self.locations[key] = self.module.add_debug_info("DILocation", {
                "line": loc.line, "column": loc.col + 1, "scope": sp})
        return found
