"""What every back end's compiled kernel carries, whatever its code is."""
from dataclasses import dataclass


@dataclass
class Binary:
    """A kernel compiled for one device: its code (in the subclass) plus what a launch
    and a fault report need to know."""
    name: str
    symbol: str                   # the kernel's entry in the code
    params: list                  # simt types of the parameters
    symbols: list                 # module-level Constant/Global arrays, as the back end names them
    shared_static_bytes: int
    labels: list                  # array names, by id, for fault reports
    files: list                   # (function, filename), by id
    messages: list                # assert messages, by id
