"""What gets indexed: postmortems and patterns as documents cut into passages (chunks).
A chunk's identity is the hash of its text, so a re-index embeds only what changed."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from analyzer.data import data_files

if TYPE_CHECKING:  # the models are heavy imports; searching needs only `Document` and stamps
    from analyzer.kb.postmortems import Postmortem
    from analyzer.library.load import PatternFile

MAX_WORDS = 90


@dataclass(frozen=True)
class Document:
    id: str
    kind: str  # "postmortem" | "pattern"
    title: str
    path: str
    fix: list[str]
    chunks: list[str]
    links: list[str] = field(default_factory=list)  # pattern ids a postmortem names
    regexes: list[str] = field(default_factory=list)  # a pattern's match expressions
    severity: str = ""
    cause: str = ""  # a postmortem's root cause, a pattern's description

    @property
    def hash(self) -> str:
        return digest("\n\x00".join([self.id, self.title, self.cause, *self.fix, *self.chunks, *self.links,
                                     *self.regexes]))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _paragraphs(text: str) -> Iterable[str]:
    """Split on blank lines, then cap each piece at MAX_WORDS words."""
    for para in re.split(r"\n\s*\n", text):
        words = para.split()
        for i in range(0, len(words), MAX_WORDS):
            piece = " ".join(words[i:i + MAX_WORDS])
            if len(piece) > 20:
                yield piece


def postmortem_document(pm: Postmortem) -> Document:
    f = pm.front
    head = f"{f.title}. Symptoms: {'; '.join(f.symptoms)}. Root cause: {f.root_cause}"
    chunks = [" ".join(head.split())]
    for name, body in pm.sections().items():
        text = re.sub(r"```log[^\n]*\n.*?```", " ", body, flags=re.S)
        chunks += [f"{name}: {p}" for p in _paragraphs(text)]
    chunks += [" ".join(excerpt.split())[:600] for _line, excerpt in pm.logs]
    chunks.append("Fix: " + " ".join(f.fix))
    return Document(id=pm.id, kind="postmortem", title=f.title, path=str(pm.path), fix=list(f.fix),
                    chunks=chunks, links=list(f.patterns), severity=f.severity.value,
                    cause=" ".join(f.root_cause.split()))


def pattern_document(pf: PatternFile) -> Document:
    from analyzer.findings import fill

    p = pf.pattern
    cause = " ".join(fill(p.description, {}, drop=True).split())
    fix = [fill(s, {}, drop=True) for s in p.fix_texts]  # shown in search results and suggestions
    title = fill(p.title, {}, drop=True)
    chunks = [f"{title}. {cause}", " ".join(f"Why it matters: {p.why}".split()), "Fix: " + " ".join(fix)]
    if pf.fixture.exists():
        from analyzer.library.fixture_file import Expect, fixture_of

        lines = [a.text.strip() for a in fixture_of(pf).annotations if a.expect is Expect.match]
        chunks += [line[:400] for line in dict.fromkeys(lines)][:6]
    return Document(id=p.id, kind="pattern", title=title, path=str(pf.path), fix=fix, chunks=chunks,
                    regexes=[e.regex for e in p.match.expressions], severity=p.severity.value, cause=cause)


def source_stamp(roots: Iterable[Path]) -> str:
    """Cheap change detection for the data folders: names, sizes and mtimes, no parsing."""
    parts = [f"{path}:{st.st_size}:{st.st_mtime_ns}" for root in roots
             for path, st in data_files(root, frozenset({".md", ".yaml", ".log"}))]
    return digest("\n".join(parts))
