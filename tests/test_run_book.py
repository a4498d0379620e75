"""bench/run_book.py's parts that need no GPU: simt's side of the programs prints the book's
lines (on the CPU device, small sizes), and the frame arithmetic."""
import importlib.util
import os

import pytest

PATH = os.path.join(os.path.dirname(__file__), os.pardir, "bench", "run_book.py")


@pytest.fixture(scope="module")
def run_book():
    spec = importlib.util.spec_from_file_location("run_book", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_simt_programs_print_the_books_lines(run_book, capsys):
    run_book.check()
    assert "ran on the CPU device" in capsys.readouterr().out


def test_times_are_read_as_the_book_prints_them(run_book):
    text = ("Average Time per frame:  3.0 ms\nAverage Time per frame:  2.0 ms\n"
            "Average Time per frame:  2.5 ms\n")
    first, steady = run_book.frame_times(run_book.times(text, "frames"))
    assert first == 3.0 and steady == pytest.approx((2.5 * 3 - 3.0) / 2)
    copies = "Time using cudaMalloc:  4.5 ms\n\tMB/s ...\nTime using cudaHostAlloc:  2.0 ms\n"
    assert run_book.times(copies, r"Time using (cudaMalloc|cudaHostAlloc)") == [4.5, 2.0]


def test_each_run_and_the_programs_own_checks_are_kept(run_book):
    frames = ["Average Time per frame:  3.0000 ms\nAverage Time per frame:  2.0000 ms\n"] * 2
    assert run_book.each_run(frames, "frames") == [1.0, 1.0]
    hashed = ["Time to hash:  70.1 ms\nAll 26214400 elements found in hash table.\n",
              "Time to hash:  69.0 ms\n26214000 elements found in hash table.  Should be 26214400\n"]
    assert run_book.each_run(hashed, r"Time to hash") == [70.1, 69.0]
    assert run_book.verified(hashed, "appA_hashtable_gpu.cu") == "1/2"
    assert run_book.verified(hashed, "ch07_heat.cu") is None
    assert run_book.verified("nvcc failed", "appA_hashtable_gpu.cu") is None


def test_the_build_changes_apply_to_the_books_sources(run_book):
    """Each heat and ray source prints its time in one of DIGITS' forms (a change that matched
    nothing would leave one decimal unnoticed); the hash table's second build orders lock.h."""
    for source, changes in run_book.DIGITS.items():
        with open(os.path.join(run_book.BOOK, "cbe", source)) as f:
            text = f.read()
        assert sum(text.count(old) for old, _ in changes) == 1, source
    ordered = [row for row in run_book.PROGRAMS.values() if row[4:] == (["-DSIMT_ORDERED_LOCK"],)]
    assert len(ordered) == 1 and ordered[0][0] == "appA_hashtable_gpu.cu"
    with open(os.path.join(run_book.BOOK, "include", "lock.h")) as f:
        lock = f.read()
    assert "#ifdef SIMT_ORDERED_LOCK" in lock and "atom.acquire.gpu.cas" in lock
