"""simt's settings, read once from the environment at import.

This is the only module that reads ``os.environ``. Change a setting at run time
by assigning to it, ``simt.config.cache = False`` (the same as
``simt.config.config.cache = False``); code reads the field when it needs it.
``python -m simt info`` prints them all.
"""

import dataclasses
import os
import sys
import types


def _flag(name, default):
    """An environment boolean: unset -> default; '', '0', 'false', 'no', 'off' -> False."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def _dump(value):
    """SIMT_DUMP: '' or a false word -> '' (off); a true word -> '1' (print); else a folder."""
    word = value.strip().lower()
    if word in ("", "0", "false", "no", "off"):
        return ""
    return "1" if word in ("1", "true", "yes", "on") else os.path.expanduser(value.strip())


def _int(name, default):
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


def _choice(name, choices):
    """An environment setting that is one of ``choices`` (unset: the first)."""
    value = (os.environ.get(name) or choices[0]).strip().lower()
    if value not in choices:
        raise ValueError(f"{name}={value!r}: use one of {', '.join(choices)}")
    return value


@dataclasses.dataclass
class Config:
    """simt's settings. Each field names the environment variable it is read from."""

    device: "str | None" = dataclasses.field(
        default=None, metadata={"env": "SIMT_DEVICE",
                                "doc": "starting device ('cuda:0', 'cpu'); unset: first GPU, else cpu"})
    checks: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_CHECKS",
                                 "doc": "checked mode on the CPU device and GPUs (docs/finding-bugs.md)"})
    cache: bool = dataclasses.field(
        default=True, metadata={"env": "SIMT_CACHE", "doc": "keep compiled kernels on disk; '0' disables"})
    cache_dir: str = dataclasses.field(
        default="~/.cache/simt", metadata={"env": "SIMT_CACHE_DIR",
                                           "doc": "where the disk cache lives (unset: $XDG_CACHE_HOME/simt, else ~/.cache/simt)"})
    cpu_threads: int = dataclasses.field(
        default=1, metadata={"env": "SIMT_CPU_THREADS", "doc": "worker threads running blocks on the CPU device"})
    sim_seed: int = dataclasses.field(
        default=0, metadata={"env": "SIMT_SIM_SEED",
                             "doc": "the sim device's order of threads: 0 thread order, others shuffled"})
    dump: str = dataclasses.field(
        default="", metadata={"env": "SIMT_DUMP",
                              "doc": "every compile stage (typed IR, LLVM IR, PTX): '1' prints them, a folder gets one file each"})
    log_level: str = dataclasses.field(
        default="", metadata={"env": "SIMT_LOG_LEVEL",
                              "doc": "messages of the 'simt' logger on stderr from this level: debug, info, warning, error"})
    debug: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_DEBUG", "doc": "re-raise internal compiler exceptions unwrapped"})
    default_stream: str = dataclasses.field(
        default="legacy", metadata={"env": "SIMT_DEFAULT_STREAM",
                                    "doc": "what stream=None means: 'legacy' (the legacy default "
                                           "stream) or 'per-thread' (each host thread's own)"})
    nvtx: bool = dataclasses.field(
        default=False, metadata={"env": "SIMT_NVTX",
                                 "doc": "NVTX ranges around launches and copies, for Nsight Systems "
                                        "(needs the nvtx package)"})
    launch_blocking: bool = dataclasses.field(
        default=False, metadata={"env": "CUDA_LAUNCH_BLOCKING",
                                 "doc": "every launch returns once its kernel ran, and raises its "
                                        "error there (the cpu and sim devices; on a GPU the "
                                        "driver reads the variable itself)"})
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
            cache_dir=os.path.expanduser(os.environ.get("SIMT_CACHE_DIR") or _default_cache_dir()),
            cpu_threads=max(1, _int("SIMT_CPU_THREADS", os.cpu_count() or 1)),
            sim_seed=_int("SIMT_SIM_SEED", 0),
            dump=_dump(os.environ.get("SIMT_DUMP", "")),
            log_level=os.environ.get("SIMT_LOG_LEVEL", "").strip().lower(),
            debug=_flag("SIMT_DEBUG", False),
            nvtx=_flag("SIMT_NVTX", False),
            verify_ir=_flag("SIMT_VERIFY_IR", False),
            launch_blocking=_flag("CUDA_LAUNCH_BLOCKING", False),
            default_stream=_choice("SIMT_DEFAULT_STREAM", ("legacy", "per-thread")),
        )

    def describe(self):
        """[(field, environment variable, value, doc)] for every setting."""
        return [(f.name, f.metadata["env"], getattr(self, f.name), f.metadata["doc"])
                for f in dataclasses.fields(self)]


def _default_cache_dir():
    """The XDG base directory rule: $XDG_CACHE_HOME when set to an absolute path."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return os.path.join(xdg if os.path.isabs(xdg) else "~/.cache", "simt")


config = Config.from_environ()


class _SettingsModule(types.ModuleType):
    """This module, whose attributes named as settings are the settings: assigning
    ``simt.config.cache`` made a module attribute nobody read, so the setting was silently
    ignored. A new public name that is no setting is refused for the same reason. Each
    setting is a property of this class (a data descriptor, so pytest's monkeypatch
    restores it by assignment)."""

    def __setattr__(self, name, value):
        if name.startswith("_") or name in SETTINGS or name in self.__dict__:
            super().__setattr__(name, value)
            return
        import difflib             # here: importing simt stays as cheap as it was
        close = difflib.get_close_matches(name, SETTINGS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise AttributeError(f"simt.config has no setting {name!r}; {hint}the settings are "
                             f"{', '.join(SETTINGS)}")


def _setting(name):
    """The property that reads and writes ``config.<name>``."""
    return property(lambda module: getattr(config, name),
                    lambda module, value: setattr(config, name, value))


SETTINGS = tuple(field.name for field in dataclasses.fields(Config))
for _name in SETTINGS:
    setattr(_SettingsModule, _name, _setting(_name))
del _name
sys.modules[__name__].__class__ = _SettingsModule
