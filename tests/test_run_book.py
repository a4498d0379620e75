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
