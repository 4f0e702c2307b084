"""Secrets are removed from realistic log lines, and the evidence around them survives."""

from __future__ import annotations

import pytest

from analyzer.redact import REDACTED, redact

SECRET_LINES = [
    ("huggingface_hub token hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 set from HF_TOKEN", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345"),
    ("OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z python serve.py", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE before pulling weights", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("git clone https://ghp_16C7e42F292c6912E7710c838347Ae178B4a@github.com/org/repo", "ghp_16C7e42F292c6912E7710c838347Ae178B4a"),
    ("token github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH1234 used", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH1234"),
    ('curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc" http://127.0.0.1:30000/v1/models', "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA== rejected", "dXNlcjpwYXNzd29yZA=="),
    ("mirror https://builder:Sup3rS3cret@pypi.internal.example.com/simple unreachable", "Sup3rS3cret"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7"),
]


@pytest.mark.parametrize(("line", "secret"), SECRET_LINES)
def test_every_secret_is_removed(line: str, secret: str) -> None:
    out = redact(line)
    assert secret not in out and REDACTED in out


def test_evidence_around_secrets_survives() -> None:
    out = redact("RuntimeError: SM 12.x requires CUDA >= 12.9 (token hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345)")
    assert out == f"RuntimeError: SM 12.x requires CUDA >= 12.9 (token {REDACTED})"
    plain = "Out of memory: Killed process 48213 (python3) total-vm:412331204kB at 0x7f3a2b"
    assert redact(plain) == plain


def test_hosts_only_on_request() -> None:
    line = "NCCL WARN Net : Connect to 10.1.2.200<43215> failed on gpu-7.cluster.internal"
    assert redact(line) == line
    assert "10.1.2.200" not in redact(line, hosts=True) and "cluster.internal" not in redact(line, hosts=True)


def test_report_redaction_keeps_the_diagnosis(library) -> None:  # type: ignore[no-untyped-def]
    from analyzer.redact import redact_report
    from tests.conftest import analyze_bytes

    log = (b"2026-05-03T10:00:00+0000 gpu-7.cluster.internal python3[9]: HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345 "
           b"Access to model meta-llama/Llama-3.1-8B is restricted. You must be authenticated to access it.\n")
    report = analyze_bytes(log, library)
    clean = redact_report(report, hosts=True)
    text = clean.model_dump_json()
    assert "hf_aBcDeF" not in text and "cluster.internal" not in text
    assert clean.findings[0].id == report.findings[0].id == "hf-gated-repo-needs-token"
    assert "is restricted" in clean.findings[0].evidence[0].text


def test_report_redaction_covers_unknown_errors_and_chain_candidates(library) -> None:  # type: ignore[no-untyped-def]
    """An error no pattern knows is titled with its log line; a chain's candidate is supported
    by log lines: both are log text and are redacted like the evidence."""
    from analyzer.models import Evidence, Hypothesis
    from analyzer.redact import redact_report
    from tests.conftest import analyze_bytes

    log = (b"2026-05-03T10:00:01+0000 node-1 python3[9]: ValueError: bad connection to "
           b"https://user:s3cretpassw0rd@db.example.com/x token=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345\n")
    report = analyze_bytes(log, library)
    unknown = [f for f in report.findings if f.kind == "unrecognised"]
    assert unknown and "hf_aBcDeF" in unknown[0].title
    supported = Hypothesis(claim="The unit was edited.", supported=True,
                           evidence=[Evidence(path="x.log", line=3, text="Environment=HF_TOKEN=hf_" + "Q" * 34)])
    report = report.model_copy(update={"findings": [report.findings[0].model_copy(update={"hypotheses": [supported]}),
                                                    *report.findings[1:]]})
    text = redact_report(report).model_dump_json()
    assert "hf_aBcDeF" not in text and "s3cretpassw0rd" not in text and "QQQQQQ" not in text
    assert "Not recognised: ValueError: bad connection" in text and "The unit was edited." in text
