"""The reader: complete lines only, huge lines skimmed, bad bytes become plain reasons."""

import io

import orjson
import pytest

from viewer import reader


def lines_of(data: bytes, **kw):
    s = reader.LineScanner(io.BytesIO(data), **kw)
    return [(x.line, x.offset, x.length, x.data) for x in s], s


def test_partial_last_line_is_held_not_yielded():
    got, s = lines_of(b'{"a":1}\n{"b":2}\n{"par')
    assert [g[3] for g in got] == [b'{"a":1}', b'{"b":2}']
    assert s.offset == 16 and s.line == 2
    assert s.tail == (16, 5)


def test_blank_lines_count_but_are_not_records_and_crlf_is_stripped():
    got, s = lines_of(b'{"a":1}\r\n\n   \n{"b":2}\n')
    assert [(g[0], g[3]) for g in got] == [(1, b'{"a":1}'), (4, b'{"b":2}')]
    assert s.tail is None and s.line == 4


def test_resume_from_offset_reads_only_new_lines():
    data = b'{"a":1}\n{"b":2}\n'
    _, s = lines_of(data)
    got, s2 = lines_of(data + b'{"c":3}\n', offset=s.offset, line=s.line)
    assert got == [(3, 16, 7, b'{"c":3}')]


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_chunk_boundaries_do_not_matter(chunk):
    data = b"".join(orjson.dumps({"i": i, "t": "x" * (i * 7)}) + b"\n" for i in range(40))
    s = reader.LineScanner(io.BytesIO(data), chunk=chunk)
    got = [orjson.loads(x.data)["i"] for x in s]
    assert got == list(range(40))


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 20])
def test_lines_as_tuples_are_the_raw_lines_and_the_scanner_knows_where_it_stopped(chunk, monkeypatch):
    """`lines()` (the index pass's plain tuples) yields what iterating yields — blank lines, CRLF,
    a huge line, a partial last line — and a consumer that stops at a line finds the scanner's
    line count there; one that reads on finds where the next scan starts."""
    monkeypatch.setattr(reader, "HUGE_LINE", 100)
    data = b'{"a":1}\r\n\n  \n' + orjson.dumps({"t": "y" * 300}) + b'\n{"b":2}\n\n{"c":3}\n{"par'
    as_raw, s = lines_of(data, chunk=chunk, views=True)
    t = reader.LineScanner(io.BytesIO(data), chunk=chunk, views=True)
    as_tuples = [(line, offset, length, None if d is None else bytes(d)) for line, offset, length, d in t.lines()]
    assert as_tuples == [(a, b, c, None if d is None else bytes(d)) for a, b, c, d in as_raw]
    assert [x[0] for x in as_tuples] == [1, 4, 5, 7]
    assert (t.offset, t.line, t.tail) == (s.offset, s.line, s.tail) == (len(data) - 5, 7, (len(data) - 5, 5))
    for stop in (1, 4, 5, 7):
        u = reader.LineScanner(io.BytesIO(data), chunk=chunk)
        for line, *_ in u.lines():
            if line == stop:
                break
        assert u.line == stop


def test_huge_line_is_measured_not_held(monkeypatch):
    monkeypatch.setattr(reader, "HUGE_LINE", 100)
    big = orjson.dumps({"type": "user", "content": "y" * 1000})
    data = b'{"a":1}\n' + big + b'\n{"b":2}\n'
    got, s = lines_of(data, chunk=64)
    assert [(g[0], g[2], g[3] is None) for g in got] == [(1, 7, False), (2, len(big), True),
                                                        (3, 7, False)]


def test_skim_cuts_long_strings_and_read_cut_returns_exact_text(monkeypatch):
    monkeypatch.setattr(reader, "STRING_CAP", 50)
    monkeypatch.setattr(reader, "PREVIEW", 10)
    text = 'é"\\\n' * 40 + "end"
    value = {"type": "user", "content": [{"type": "text", "text": text}], "n": [1, 2.5, None, True]}
    data = b"junk" + orjson.dumps(value)
    f = io.BytesIO(data)
    got = reader.skim(f, 4, len(data) - 4)
    cut = got["content"][0]["text"]
    assert isinstance(cut, reader.CutStr)
    assert text.startswith(str(cut)) and len(cut) <= 10
    assert reader.read_cut(f, cut) == text
    assert got["n"] == [1, 2.5, None, True] and got["type"] == "user"


def test_skim_reports_malformed_json():
    data = b'{"a": [1, 2'
    got = reader.skim(io.BytesIO(data), 0, len(data))
    assert isinstance(got, reader.BadLine) and "malformed" in got.reason


def test_decode_bad_lines_become_reasons():
    assert isinstance(reader.decode(b"not json"), reader.BadLine)
    assert "not JSON" in reader.decode(b"hello").reason
    assert "malformed JSON" in reader.decode(b'{"a":').reason


def test_invalid_utf8_is_read_with_replacement():
    got = reader.decode(b'{"text": "caf\xe9"}')
    assert got == {"text": "caf\ufffd"}


def test_consumer_seeking_the_file_between_lines_does_not_confuse_the_scanner(monkeypatch):
    monkeypatch.setattr(reader, "HUGE_LINE", 50)
    data = b'{"a":1}\n' + orjson.dumps({"t": "x" * 500}) + b'\n{"b":2}\n{"c":3}\n'
    f = io.BytesIO(data)
    s = reader.LineScanner(f, chunk=64)
    got = []
    for line in s:
        value = reader.decode(line.data) if line.data else reader.skim(f, line.offset, line.length)
        got.append(value if line.data else len(value["t"]))
    assert got == [{"a": 1}, 500, {"b": 2}, {"c": 3}] and s.offset == len(data)


class CountingFile(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_total = 0

    def read(self, n=-1):
        out = super().read(n)
        self.read_total += len(out)
        return out


def test_a_huge_line_of_plain_text_is_refused_after_one_chunk():
    """Not JSON at its first byte: the skimmer stops there instead of scanning (and copying) the
    whole line, which cost quadratic time on every view of the session."""
    data = b"x" * (24 << 20)
    f = CountingFile(data)
    got = reader.skim(f, 0, len(data))
    assert isinstance(got, reader.BadLine) and "not JSON" in got.reason
    assert f.read_total <= 2 * reader.CHUNK


def test_skim_reads_a_long_valid_number_and_literals():
    data = b'{"n": ' + b"1" * 100 + b', "t": true, "z": null, "f": -1.5e3}'
    got = reader.skim(io.BytesIO(data), 0, len(data))
    assert isinstance(got, reader.BadLine) or got["t"] is True  # orjson refuses a 100-digit int
    data = b'[true, false, null, -1.5e3, 12]'
    assert reader.skim(io.BytesIO(data), 0, len(data)) == [True, False, None, -1500.0, 12]


@pytest.mark.parametrize("chunk", [1, 5, 64, 1 << 20])
def test_reading_ahead_yields_what_reading_in_turn_yields(chunk, monkeypatch, tmp_path):
    """A pass over a big file reads its next chunk on another thread (`ahead`): the lines, where
    the scan stops and the partial last line are those read in turn — with blank lines, CRLF, a
    huge line skimmed by seeking the same file between lines, and a resumed scan."""
    monkeypatch.setattr(reader, "HUGE_LINE", 100)
    data = b'{"a":1}\r\n\n  \n' + orjson.dumps({"t": "y" * 300}) + b'\n{"b":2}\n\n{"c":3}\n{"par'
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)

    def scan(ahead, offset=0, line=0):
        with open(path, "rb") as f:
            assert (reader._Ahead.of(f, chunk) is not None) is True  # (a file of the disk: read ahead)
            s = reader.LineScanner(f, offset, line, chunk=chunk, views=True, ahead=ahead)
            got = []
            for n, at, length, d in s.lines():
                # (a consumer that seeks and reads the file between lines, as skimming does)
                value = reader.decode(bytes(d)) if d is not None else reader.skim(f, at, length)
                got.append((n, at, length, orjson.dumps(value)))
            return got, (s.offset, s.line, s.tail)

    assert scan(True) == scan(False)
    assert len(scan(True)[0]) == 4
    assert scan(True, 14, 3) == scan(False, 14, 3)


def test_reading_ahead_of_a_file_that_grows_reads_on_from_where_it_stopped(tmp_path):
    """Lines written while a scan reads ahead are read by it or by the next scan, none twice, none
    lost (the read ahead at the end of the file finds nothing, as a read in turn would then)."""
    path = tmp_path / "s.jsonl"
    first = b"".join(orjson.dumps({"i": i}) + b"\n" for i in range(50))
    path.write_bytes(first)
    seen = []
    with open(path, "rb") as f:
        s = reader.LineScanner(f, chunk=64, ahead=True)
        for n, _, _, d in s.lines():
            seen.append(orjson.loads(bytes(d))["i"])
            if n == 10:
                with open(path, "ab") as w:
                    w.write(b"".join(orjson.dumps({"i": i}) + b"\n" for i in range(50, 60)) + b'{"i": 6')
    with open(path, "ab") as w:
        w.write(b'0}\n')
    with open(path, "rb") as f:
        t = reader.LineScanner(f, s.offset, s.line, chunk=64, ahead=True)
        seen += [orjson.loads(bytes(d))["i"] for _, _, _, d in t.lines()]
    assert seen == list(range(61)) and t.tail is None and t.offset == path.stat().st_size


def test_a_process_forked_after_reading_ahead_reads_ahead_with_threads_of_its_own(tmp_path):
    """A process forked once this one has read ahead (a gunicorn worker, an export's drawing
    process) has none of its threads: its own pass reads ahead on its own, never waiting on a
    thread that is not there."""
    import os

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"i": i}) + b"\n" for i in range(200)))

    def count() -> int:
        with open(path, "rb") as f:
            return sum(1 for _ in reader.LineScanner(f, chunk=64, ahead=True).lines())

    assert count() == 200 and reader._READERS  # (the pool exists, with its threads)
    pid = os.fork()
    if pid == 0:  # the child: exits 0 only if its scan ends with every line
        os._exit(0 if count() == 200 else 1)
    for _ in range(200):  # (up to 10 s: a child waiting on a thread it lacks never ends)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        import time
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise AssertionError("the forked process's scan never ended")
    assert os.waitstatus_to_exitcode(status) == 0
