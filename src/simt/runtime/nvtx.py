"""NVTX ranges around launches and copies, for Nsight Systems: with ``SIMT_NVTX=1`` (or
``simt.config.config.nvtx = True``) a launch shows on the timeline as ``kernel[grid,
block]`` and a copy as ``copy_to_host 4194304 B``, in the NVTX domain "simt". Through
NVIDIA's ``nvtx`` package (``pip install nvtx``); off by default, and then the package is
not imported and a launch pays one attribute test."""
import functools
from typing import Any, Callable, TypeVar, cast

from ..config import config
from ..errors import NotSupportedError

DOMAIN = "simt"
_annotate = None
Method = TypeVar("Method", bound=Callable[..., Any])


def _api():
    """nvtx.annotate; NotSupportedError naming the package when it is not installed."""
    global _annotate
    if _annotate is None:
        try:
            import nvtx
        except ImportError:
            raise NotSupportedError(
                "NVTX ranges (SIMT_NVTX=1 or config.nvtx) need NVIDIA's nvtx package: "
                "pip install nvtx, or turn the setting off") from None
        _annotate = nvtx.annotate
    return _annotate


def launch(name, configuration, call):
    """``call`` (a kernel's launch function) inside a range named after the kernel and its
    launch configuration."""
    annotate = _api()
    message = f"{name}{list(configuration) if isinstance(configuration, tuple) else [configuration]}"

    def launch_in_range(*args):
        with annotate(message, domain=DOMAIN, color="green"):
            return call(*args)
    return launch_in_range


def copy(method: Method) -> Method:
    """A DeviceArray copy method that runs inside a range while NVTX is on."""
    @functools.wraps(method)
    def copy_in_range(self, *args, **kwargs):
        if not config.nvtx:
            return method(self, *args, **kwargs)
        with _api()(f"{method.__name__} {self.nbytes} B", domain=DOMAIN, color="blue"):
            return method(self, *args, **kwargs)
    return cast(Method, copy_in_range)      # the same signature, for type checkers
