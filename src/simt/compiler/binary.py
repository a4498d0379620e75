"""What every back end's compiled kernel carries, whatever its code is."""
from dataclasses import dataclass

from . import pipeline


@dataclass
class Binary:
    """A kernel compiled for one device: its code (in the subclass) plus what a launch
    and a fault report need to know, and every stage its compile made (pipeline.py).

    On disk only text and object code survive: in-memory forms (typed IR, LLVM
    modules) and the module-level symbols' objects belong to the process that made
    them (a binary loaded from disk gets its symbols again, runtime/cache.py)."""
    name: str
    symbol: str                   # the kernel's entry in the code
    params: list                  # simt types of the parameters
    symbols: list                 # module-level Constant/Global arrays, as the back end names them
    shared_static_bytes: int
    labels: list                  # array names, by id, for fault reports
    files: list                   # (function, filename), by id
    messages: list                # assert messages, by id
    stages: dict                  # stage name -> its output, in the order made
    symbol_objects: list          # the Constant/Global objects of ``symbols``, in order
    compile_seconds: float

    def __getstate__(self):
        state = dict(self.__dict__)
        state["stages"] = {k: v for k, v in self.stages.items()
                           if isinstance(v, (str, bytes))}
        state["symbol_objects"] = None
        return state

    def stage_text(self, stage):
        """A stage's output as text (pipeline.text)."""
        return pipeline.text(stage, self.stages[stage])
