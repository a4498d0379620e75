"""simt's version (re-exported as simt.__version__; part of the disk cache's key)."""
__version__ = "0.1.0"
