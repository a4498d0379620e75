"""A device made as the docs say a new one is made (docs/architecture.md, "How to add a
device"): this folder and one line in ``runtime/devices.BACKENDS`` (tests/test_devices.py
adds the line). It runs no kernels: its lowerings refuse every entry, with the reason."""
