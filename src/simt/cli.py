"""The command line: ``python -m simt info | examples | run NAME [--device D] [--out DIR]``."""

import argparse
import importlib
import pkgutil
import sys

from simt.config import config
from simt.runtime import devices
from simt.errors import CudaError


def _format_value(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple):
        return " x ".join(str(v) for v in value) if len(value) == 3 else ".".join(map(str, value))
    return "unknown" if value is None else str(value)


def info(out=sys.stdout):
    """Print every device and its properties (deviceQuery), then the settings."""
    found = devices.devices()
    print(f"simt found {len(found)} device(s); current: {devices.get_device().name}\n", file=out)
    for device in found:
        print(f"Device {device.name!r}", file=out)
        try:
            properties = device.properties.as_dict()
        except CudaError as exc:
            print(f"  unavailable: {exc}\n", file=out)
            continue
        width = max(len(key) for key in properties)
        for key, value in properties.items():
            print(f"  {key:<{width}}  {_format_value(value)}", file=out)
        print(file=out)
    print("Settings (environment variable = value: meaning)", file=out)
    for name, env, value, doc in config.describe():
        print(f"  {env} = {value!r}: {doc}", file=out)


def find_examples():
    """{NAME: example} for every module of simt.examples with NAME, DESCRIPTION and main(),
    and every entry of a module's EXAMPLES list (objects with the same three attributes)."""
    import simt.examples as package
    found = {}
    for module_info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if module_info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"simt.examples.{module_info.name}")
        except Exception as exc:   # a broken example must not hide the others
            print(f"simt: example module {module_info.name!r} failed to import: {exc}",
                  file=sys.stderr)
            continue
        if all(hasattr(module, attr) for attr in ("NAME", "DESCRIPTION", "main")):
            found[module.NAME] = module
        for example in getattr(module, "EXAMPLES", ()):   # modules holding several programs
            found[example.NAME] = example
    return found


def list_examples(out=sys.stdout):
    """Print one line per example, in the book's order: its name and description."""
    examples = find_examples()
    if not examples:
        print("no examples installed", file=out)
    from simt.examples._common import book_order
    width = max((len(name) for name in examples), default=0)
    ordered = sorted(examples.items(), key=lambda item: book_order(getattr(item[1], "SECTION", "")))
    for name, module in ordered:
        print(f"{name:<{width}}  {module.DESCRIPTION}", file=out)


def run_example(name, device=None, out_dir=None):
    """Run example ``name`` on ``device``; return the exit status."""
    examples = find_examples()
    if name not in examples:
        print(f"simt: no example {name!r}; the examples are: {', '.join(examples) or 'none'}",
              file=sys.stderr)
        return 2
    if device is not None:
        devices.set_device(device)
    print(f"running {name} on {devices.get_device().name}", file=sys.stderr)
    examples[name].main(device=device, out_dir=out_dir)
    return 0


def _parser():
    parser = argparse.ArgumentParser(prog="python -m simt", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="list the devices, their properties and the settings")
    commands.add_parser("examples", help="list the runnable examples")
    run = commands.add_parser("run", help="run one example")
    run.add_argument("name")
    run.add_argument("--device", help="cpu or cuda:N (default: SIMT_DEVICE, else the first GPU, else cpu)")
    run.add_argument("--out", help="directory for the example's output files")
    return parser


def main(argv=None):
    """Entry point; returns the exit status (0 ok, 1 simt error, 2 usage error)."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "info":
            info()
        elif args.command == "examples":
            list_examples()
        else:
            return run_example(args.name, args.device, args.out)
    except CudaError as exc:
        if config.debug:
            raise
        print(f"simt: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:   # bad device names and settings
        if config.debug:
            raise
        print(f"simt: {exc}", file=sys.stderr)
        return 2
    return 0
