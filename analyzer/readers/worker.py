"""Per-worker prefixes that serving processes put in front of every line.

vLLM: `(VllmWorker rank=3 pid=1234) ...`, `(VllmWorkerProcess pid=221) ...`,
`(EngineCore_DP0 pid=77) ...`; torchrun/vLLM: `[rank0]: ...`; SGLang:
`[2026-05-03 10:00:00 TP3] ...` or `[2026-05-03 10:00:00 DP1 TP3 EP3] ...`.
The prefix becomes the record's worker identity and is removed from the message, so a
traceback printed by worker 3 is rebuilt apart from worker 5's.
"""

from __future__ import annotations

import re

_PAREN = re.compile(r"\((?P<w>[A-Za-z_][\w.]*(?: [\w.]+=[\w.:-]+)*(?: pid=\d+))\) ")
_RANK = re.compile(r"\[(?P<w>rank\d+)\]: ?")
_SGLANG = re.compile(
    r"\[(?P<t>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<w>(?: (?:TP|DP|PP|EP|CP|ATTN_DP)\d+)+)\] "
)


def split_worker(message: str) -> tuple[str | None, str | None, str]:
    """Return (worker, time, rest) for a message that may carry a worker prefix."""
    if not message or message[0] not in "([":
        return None, None, message
    if m := _PAREN.match(message):
        return m["w"], None, message[m.end():]
    if m := _RANK.match(message):
        return m["w"], None, message[m.end():]
    if m := _SGLANG.match(message):
        return m["w"].strip(), m["t"], message[m.end():]
    return None, None, message
