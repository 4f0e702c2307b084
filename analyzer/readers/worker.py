"""Per-worker prefixes that serving processes put in front of every line.

vLLM: `(VllmWorker rank=3 pid=1234) ...`, `(VllmWorkerProcess pid=221) ...`,
`(EngineCore_DP0 pid=77) ...`; Ray, for a task's or actor's output shown by the driver
(ray/_private/worker.py, print_worker_logs): `(pid=45601) ...`, `(MyActor pid=4) ...`, its
node's address after the pid when the worker runs on another node (`(RayWorkerWrapper pid=243,
ip=10.99.48.141) ...`), actor names with colons (`(ServeReplica:default:LLMServer pid=9) ...`)
and the raylet's and autoscaler's own `(raylet) ...`, `(raylet, ip=10.0.0.2) ...`,
`(autoscaler +15m30s) ...`; torchrun/vLLM: `[rank0]: ...`; SGLang:
`[2026-05-03 10:00:00 TP3] ...` or `[2026-05-03 10:00:00 DP1 TP3 EP3] ...`. Container logs:
Docker Compose's service column (`vllm-1  | ...`, `api_1  | ...` before Compose v2) and
`kubectl logs --prefix` (`[pod/vllm-0/vllm] ...`); their worker names start with CONTAINER.
The prefix becomes the record's worker identity and is removed from the message, so a
traceback printed by worker 3 is rebuilt apart from worker 5's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from analyzer.models import CONTAINER

_PAREN = re.compile(r"\((?P<w>(?:[A-Za-z_][\w.:-]*(?: [\w.]+=[\w.:-]+)* )?pid=\d+(?:, ip=[\w.:-]+)?"
                    r"|raylet(?:, ip=[\w.:-]+)?|autoscaler \+(?:\d+[hms])+)\) ")
_RANK = re.compile(r"\[(?P<w>rank\d+)\]: ?")
# Compose pads the service name (with its replica number) to one more than the longest, then " | ":
# two spaces at least before the bar (a one-space "GPU-0 | 45C" is a table row, not a prefix)
_COMPOSE = re.compile(r"(?P<w>[A-Za-z0-9][\w.-]{0,80}?[-_]\d{1,3}) {2,}\| ")
_KUBECTL = re.compile(r"\[(?P<w>pod/[a-z0-9][a-z0-9.-]{0,252}/[a-z0-9][a-z0-9-]{0,62})\] ")
_SGLANG = re.compile(
    r"\[(?P<t>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)(?P<w>(?: (?:TP|DP|PP|EP|CP|ATTN_DP)\d+)+)\] "
)


def split_worker(message: str) -> tuple[str | None, str | None, str]:
    """Return (worker, time, rest) for a message that may carry a worker prefix, or two: a
    container's around a process's (`vllm-1  | (VllmWorker rank=1 pid=7) ...`); the container's
    name comes first in the worker."""
    outer, time, rest = _split_one(message)
    if outer is None:
        return None, None, message
    inner, inner_time, rest = _split_one(rest)
    if inner is None:
        return outer, time, rest
    return joined_workers(outer, inner), time or inner_time, rest


def joined_workers(*workers: str | None) -> str:
    """Nested workers as one, a container's name first (`container:vllm-1 VllmWorker rank=1`)."""
    return " ".join(sorted((w for w in workers if w), key=lambda w: not w.startswith(CONTAINER)))


def worker_prefixes(line: str) -> Iterator[tuple[int, str]]:
    """Where a parenthesised worker prefix may stand in `line` (after others: a quote, a
    container's column), and the prefix as written, with its space."""
    return ((m.start(), m.group(0)) for m in _PAREN.finditer(line))


def _split_one(message: str) -> tuple[str | None, str | None, str]:
    if not message:
        return None, None, message
    if message[0] not in "([":
        if "| " in message and (m := _COMPOSE.match(message)):
            return CONTAINER + m["w"], None, message[m.end():]
        return None, None, message
    if m := _PAREN.match(message):
        return m["w"], None, message[m.end():]
    if m := _RANK.match(message):
        return m["w"], None, message[m.end():]
    if m := _KUBECTL.match(message):
        return CONTAINER + m["w"], None, message[m.end():]
    if m := _SGLANG.match(message):
        return m["w"].strip(), m["t"], message[m.end():]
    return None, None, message
