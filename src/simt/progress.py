"""Progress of long work (animated examples, benchmark suites): a tqdm bar when tqdm is
installed and stderr is a terminal, else a plain line on stderr at every tenth (whole
lines, which do not garble the program's own output on the same terminal)."""
import sys


def steps(iterable, total=None, what="steps"):
    """Yield the items of ``iterable`` while showing how far the loop is."""
    total = len(iterable) if total is None and hasattr(iterable, "__len__") else total
    bar = _tqdm(total, what)
    if bar is not None:
        with bar:
            for item in iterable:
                yield item
                bar.update(1)
        return
    every = max(1, (total or 10) // 10)
    for done, item in enumerate(iterable, 1):
        yield item
        if done == total or done % every == 0:
            print(f"  {done}/{total if total is not None else '?'} {what}", file=sys.stderr,
                  flush=True)


def _tqdm(total, what):
    if not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=" " + what.rstrip("s"), leave=False, file=sys.stderr)
