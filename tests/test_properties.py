"""Property tests: no reader, no detector, no stage raises on arbitrary bytes."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.choices import InputForm
from analyzer.errors import InputError
from analyzer.events import build_events
from analyzer.library.compile import CompiledLibrary
from analyzer.readers import PARSERS, parse_lines
from analyzer.readers.detect import detect
from analyzer.readers.source import open_bytes
from analyzer.triage import Run
from tests.conftest import analyze_bytes

FORMS = list(PARSERS)

# Realistic fragments mixed with noise find more parser corners than uniform bytes.
FRAGMENTS = [b"May 03 10:00:00 host app[12]: ", b"2026-05-03T10:00:00+0000 h k: ", b"[ 12.5] ", b"NVRM: ",
             b"Traceback (most recent call last):", b'  File "/a.py", line 1, in f', b"ValueError: x",
             b'{"MESSAGE":[255,0,10],"_PID":"1"}', b'{"log":"a\\n","time":"t"}', b"__CURSOR=s\n", b"MESSAGE\n",
             b"\x08\x00\x00\x00\x00\x00\x00\x00", b"    MESSAGE=", b"Sun 2026-05-03 10:00:00.0 UTC [s=", b"#012",
             b"(VllmWorker rank=1 pid=2) ", b"[rank0]: ", b"terminate called after throwing an instance of 'x'",
             b"NCCL WARN ", b"\n", b"\n\n", b"\xff\xfe", b"SM 12.x requires CUDA >= 12.9"]
chunks = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=40)), max_size=40).map(b"".join)


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=300, deadline=None)
@given(data=chunks)
def test_every_reader_accepts_any_bytes(data: bytes, form: InputForm) -> None:
    """300 generated inputs for each reader."""
    records = parse_lines(data.split(b"\n"), form, 1, "x")
    for r in records:
        assert 1 <= r.line <= r.end_line
    build_events(records)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=2000))
def test_detect_accepts_any_bytes(data: bytes) -> None:
    assert isinstance(detect(data), InputForm)


@pytest.mark.parametrize("form", [InputForm.auto, *FORMS])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=chunks)
def test_the_whole_pipeline_accepts_any_bytes(data: bytes, form: InputForm, library: CompiledLibrary) -> None:
    """Detection (auto) and each reader forced, through regions, events, matching and diagnosis."""
    run = Run(library)
    try:
        run.read(open_bytes("x", data, form))
    except InputError:
        return  # empty or binary input: a clear error, not a crash
    report = run.report()
    assert report.inputs[0].lines >= 1


@settings(max_examples=100, deadline=None)
@given(msg=st.binary(max_size=60))
def test_journal_json_byte_array_messages(msg: bytes) -> None:
    line = json.dumps({"MESSAGE": list(msg), "_PID": "3", "__REALTIME_TIMESTAMP": "1"}).encode()
    (record,) = parse_lines([line], InputForm.journal_json)
    assert record.message == msg.decode("utf-8", "replace")


def test_crlf_truncated_json_and_nul_bytes(library: CompiledLibrary) -> None:
    crlf = b"May 03 10:00:00 h kernel: Out of memory: Killed process 7 (python3) total-vm:1kB\r\n"
    (record,) = parse_lines(crlf.rstrip(b"\n").split(b"\n"), InputForm.journal_short)
    assert record.message.endswith("total-vm:1kB")
    broken_json = [b'{"MESSAGE": "ok", "_PID": "1"}', b'{"MESSAGE": "trunc', b"[1, 2, 3]", b"null", b'"just a string"']
    records = parse_lines(broken_json, InputForm.journal_json)
    assert [(r.message, r.plain) for r in records] == [("ok", False), ('{"MESSAGE": "trunc', True), ("[1, 2, 3]", True),
                                                       ("null", True), ('"just a string"', True)]
    cut = (b'{"MESSAGE": "starting", "_PID": "9", "__REALTIME_TIMESTAMP": "1"}\n' * 50
           + b'{"MESSAGE": "Out of memory: Killed process 7 (python3) total-vm:1kB", "_PI\n')
    report = analyze_bytes(cut, library, "cut.json")  # a journal cut by a full disk mid-entry
    assert report.inputs[0].format == "journal-json" and report.inputs[0].plain == 1
    assert report.findings[0].id == "host-oom-killed-service"
    assert any("1 line(s) near matches are not journal-json entries" in w for w in report.warnings)
    run = Run(library)
    data = b"text line\n" * 1000 + b"a\x00b\nOut of memory: Killed process 7 (x) total-vm:1kB\n"
    run.read(open_bytes("nul.log", data))  # a NUL past the first block is data, not a binary file
    assert run.report().findings[0].id == "host-oom-killed-service"
