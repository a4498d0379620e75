"""simt's settings, read once from the environment at import.

This is the only module that reads ``os.environ``. Change a setting at run time
by assigning to ``simt.config.config`` (``config.checks = True``); code reads
the field when it needs it. ``python -m simt info`` prints them all.
"""

import dataclasses
import os


def _flag(name, default):
    """An environment boolean: unset -> default; '', '0', 'false', 'no', 'off' -> False."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def _int(name, default):
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


@dataclasses.dataclass
class Config:
    """simt's settings. Each field names the environment variable it is read from."""

    device: "str | None" = dataclasses.field(
        default=None, metadata={"env": "SIMT_DEVICE",
                                "doc": "starting device ('cuda:0', 'cpu'); unset: first GPU, else cpu"})
    checks: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_CHECKS",
                                 "doc": "checked mode on the CPU device: not built yet, so '1' is refused"})
    cache: bool = dataclasses.field(
        default=True, metadata={"env": "SIMT_CACHE", "doc": "keep compiled kernels on disk; '0' disables"})
    cache_dir: str = dataclasses.field(
        default="~/.cache/simt", metadata={"env": "SIMT_CACHE_DIR", "doc": "where the disk cache lives"})
    cpu_threads: int = dataclasses.field(
        default=1, metadata={"env": "SIMT_CPU_THREADS", "doc": "worker threads running blocks on the CPU device"})
    sim_seed: int = dataclasses.field(
        default=0, metadata={"env": "SIMT_SIM_SEED",
                             "doc": "the sim device's order of threads: 0 thread order, others shuffled"})
    dump: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_DUMP", "doc": "print every compile stage (typed IR, LLVM IR, PTX)"})
    debug: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_DEBUG", "doc": "re-raise internal compiler exceptions unwrapped"})
    verify_ir: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_VERIFY_IR",
                                 "doc": "check the typed IR after every IR pass (the test suite turns it on)"})

    @classmethod
    def from_environ(cls):
        """Settings from the environment, defaults where a variable is unset."""
        return cls(
            device=os.environ.get("SIMT_DEVICE") or None,
            checks=_flag("SIMT_CHECKS", False),
            cache=_flag("SIMT_CACHE", True),
            cache_dir=os.path.expanduser(os.environ.get("SIMT_CACHE_DIR") or "~/.cache/simt"),
            cpu_threads=max(1, _int("SIMT_CPU_THREADS", os.cpu_count() or 1)),
            sim_seed=_int("SIMT_SIM_SEED", 0),
            dump=_flag("SIMT_DUMP", False),
            debug=_flag("SIMT_DEBUG", False),
            verify_ir=_flag("SIMT_VERIFY_IR", False),
        )

    def describe(self):
        """[(field, environment variable, value, doc)] for every setting."""
        return [(f.name, f.metadata["env"], getattr(self, f.name), f.metadata["doc"])
                for f in dataclasses.fields(self)]


config = Config.from_environ()
