"""Open an input (file, `-` for stdin, .gz, .zst, binary journal file or directory) as a
stream of byte chunks that end at line boundaries.

Binary journals are read through the real `journalctl`, as JSON: one entry per line, so
that phase 1 can cut the stream anywhere and phase 2 can parse any window of it.
"""

from __future__ import annotations

import gzip
import io
import shutil
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, cast

from analyzer.choices import InputForm
from analyzer.errors import InputError
from analyzer.readers.detect import GZIP_MAGIC, JOURNAL_MAGIC, ZSTD_MAGIC, detect, looks_binary
from analyzer.readers.paste import tidy

CHUNK = 8 * 1024 * 1024
HEAD = 64 * 1024


@dataclass
class Source:
    """One input: where it came from, its form, and its chunks (read once)."""

    name: str
    form: InputForm
    head: bytes
    stream: IO[bytes]
    process: subprocess.Popen[bytes] | None = None
    size: int | None = None  # bytes in all, where known (a plain file); for progress
    first_line: int = 1  # input line number of the first byte (a slice of a file starts later)
    bytes_read: int = 0
    undecodable: int = 0  # lines that are not valid UTF-8 (read with replacement characters)
    _closed: bool = field(default=False, repr=False)

    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        carry = self.head
        try:
            while True:
                block = self._read(size)
                if not block:
                    break
                cut = block.rfind(b"\n") + 1
                if cut == 0:
                    carry += block
                    continue
                chunk = carry + memoryview(block)[:cut]  # one copy of the block, not two
                carry = block[cut:]
                yield self._count(chunk)
            if carry:
                if self.bytes_read == 0 and self.form is InputForm.console:  # a paste: the whole input is the head
                    carry = tidy(carry)
                yield self._count(carry)
        finally:
            self.close()

    def _count(self, chunk: bytes) -> bytes:
        self.bytes_read += len(chunk)
        self.undecodable += count_undecodable(chunk)
        return chunk

    def _read(self, size: int) -> bytes:
        try:
            return self.stream.read(size)
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"corrupt or truncated compressed data ({_reason(exc)})", self.name) from exc
        except OSError as exc:
            raise InputError(f"cannot read: {_reason(exc)}", self.name) from exc
        except Exception as exc:  # zstandard raises its own ZstdError
            if type(exc).__name__ == "ZstdError":
                raise InputError(f"corrupt zstd data: {exc}", self.name) from exc
            raise

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.stream is not sys.stdin.buffer:
            self.stream.close()
        if self.process is not None:
            self.process.wait()
            err = self.process.stderr.read() if self.process.stderr else b""
            if self.process.returncode not in (0, None):
                raise journalctl_failed(err, self.name)


def count_undecodable(data: bytes) -> int:
    """Lines of `data` that are not valid UTF-8."""
    if data.isascii():  # 20x faster than decoding; most logs are ASCII
        return 0
    try:
        data.decode("utf-8")  # C speed; only data with bad bytes is looked at line by line
    except UnicodeDecodeError:
        return sum(1 for line in data.split(b"\n") if not _utf8(line))
    return 0


def _utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def open_slice(name: str, form: InputForm, start: int, end: int, first_line: int) -> Source:
    """Bytes [start, end) of a plain file, both at line starts, whose first line is input line
    `first_line`: what one worker reads when a large file is split between several."""
    stream = cast(IO[bytes], _Slice(Path(name).open("rb"), start, end))  # noqa: SIM115 (Source closes it)
    return Source(name=name, form=form, head=_read_head(stream, name), stream=stream, size=end - start,
                  first_line=first_line)


class _Slice(io.RawIOBase):
    """A window of an open file, read like a stream."""

    def __init__(self, f: IO[bytes], start: int, end: int) -> None:
        super().__init__()
        self._f = f
        self._left = end - start
        f.seek(start)

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        n = self._left if size < 0 else min(size, self._left)
        data = self._f.read(n)
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._f.close()
        super().close()


def open_source(name: str, form: InputForm = InputForm.auto) -> Source:
    """Open `name` ("-" is stdin) and sniff its form unless `form` is given."""
    if name == "-":
        if sys.stdin is None or sys.stdin.closed:
            raise InputError("standard input is closed: pipe a log into triage, or name a file", name)
        stream: IO[bytes] = sys.stdin.buffer
    else:
        path = Path(name)
        if path.is_dir():
            raise InputError("is a directory (use --journal-dir for a journal folder)", name)
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise InputError(f"cannot open: {_reason(exc)}", name) from exc
        source = _from_stream(name, stream, form)
        if source.stream is stream and path.is_file():  # not decompressed, not a pipe
            source.size = path.stat().st_size
        return source
    return _from_stream(name, stream, form)


def _from_stream(name: str, stream: IO[bytes], form: InputForm) -> Source:
    magic = _peek(stream, name)
    if magic.startswith(GZIP_MAGIC):
        stream = gzip.GzipFile(fileobj=stream)  # type: ignore[assignment]
        return _from_stream(name, stream, form)
    if magic.startswith(ZSTD_MAGIC):
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)
        return _from_stream(name, stream, form)
    if magic.startswith(JOURNAL_MAGIC):
        stream.close()
        return open_journal(["--file", name], name)
    head = _read_head(stream, name)
    if not head:
        raise InputError("empty input: no log lines to analyse", name)
    if looks_binary(head):
        raise InputError("binary data, not a log (NUL bytes in the first block)", name)
    chosen = detect(head) if form is InputForm.auto else form
    return Source(name=name, form=chosen, head=head, stream=stream)


def _peek(stream: IO[bytes], name: str) -> bytes:
    peek = getattr(stream, "peek", None)
    try:
        if peek is not None:
            return bytes(peek(8)[:8])
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {_reason(exc)}", name) from exc
    return b""


def _read_head(stream: IO[bytes], name: str) -> bytes:
    try:
        return stream.read(HEAD)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"corrupt or truncated compressed data ({_reason(exc)})", name) from exc
    except OSError as exc:
        raise InputError(f"cannot read: {_reason(exc)}", name) from exc
    except Exception as exc:  # zstandard raises its own ZstdError
        if type(exc).__name__ == "ZstdError":
            raise InputError(f"corrupt zstd data: {exc}", name) from exc
        raise


def journalctl(name: str) -> str:
    """The journalctl executable, or the error that says how to get it."""
    exe = shutil.which("journalctl")
    if exe is None:
        raise InputError("reading a binary journal needs journalctl, which is not installed "
                         "(apt-get install systemd), or export it elsewhere with `journalctl -o json`", name)
    return exe


def journalctl_failed(err: bytes, name: str) -> InputError:
    """journalctl's own last word on stderr, as the error of the input it was reading."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return InputError(f"journalctl failed: {lines[-1] if lines else 'no output'}", name)


def open_journal(selector: list[str], name: str) -> Source:
    """Read a binary journal file (`--file F`) or folder (`--directory D`) via journalctl."""
    proc = subprocess.Popen([journalctl(name), *selector, "-o", "json", "--no-pager"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    head = proc.stdout.read(HEAD)
    source = Source(name=name, form=InputForm.journal_json, head=head, stream=proc.stdout, process=proc)
    if not head:
        source.close()
        raise InputError("the journal holds no entries", name)
    return source


def open_bytes(name: str, data: bytes, form: InputForm = InputForm.auto) -> Source:
    """An in-memory input (fixtures, tests), read through the same path as a file."""
    import io

    return _from_stream(name, io.BufferedReader(io.BytesIO(data)), form)
