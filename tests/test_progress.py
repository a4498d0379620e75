"""Long work shows how far it is: plain lines on stderr without a terminal or tqdm."""
from simt.progress import steps


def test_plain_lines_at_every_tenth(capsys):
    assert list(steps(range(20), what="frames")) == list(range(20))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].strip() == "2/20 frames" and lines[-1].strip() == "20/20 frames"
    assert len(lines) == 10


def test_an_iterable_without_a_length():
    assert list(steps(iter("abc"))) == ["a", "b", "c"]
