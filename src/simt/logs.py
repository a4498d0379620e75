"""The ``simt`` logger: silent unless ``SIMT_LOG_LEVEL`` (or the application's own
logging setup) asks for its messages. It says what a user cannot see otherwise: each
compile and its time, disk-cache hits, misses and discarded entries, contexts made."""
import logging

from .config import config

log = logging.getLogger("simt")
LEVELS = ("debug", "info", "warning", "error")


def configure(level=None):
    """Send the logger's messages from ``level`` (default: SIMT_LOG_LEVEL) to stderr."""
    level = config.log_level if level is None else level.strip().lower()
    if not level:
        return
    if level not in LEVELS:
        raise ValueError(f"SIMT_LOG_LEVEL={level!r} is not a level; use one of {', '.join(LEVELS)}")
    if not any(getattr(h, "simt_handler", False) for h in log.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("simt %(levelname)s: %(message)s"))
        handler.simt_handler = True
        log.addHandler(handler)
    log.setLevel(level.upper())
