"""The result of a run, read from ``skill-sandbox run --result-json``."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List


@dataclass(frozen=True)
class RunResult:
    """The outcome of one script run in the sandbox.

    Every field comes from the run's audit record (``record``, schema v4,
    docs/audit.md) or its captured output; nothing is parsed from text
    meant for people.

    Attributes:
        exit_code: the script's exit status; -1 when it was killed by a
            signal (a time limit included) or never started.
        status: skill-sandbox's own exit status (124 timed out, 128+N
            killed by signal N, 1 refused; else ``exit_code``).
        duration_ms: wall time of the run in milliseconds.
        stdout, stderr: what the script wrote, decoded as UTF-8 (bytes
            that are not UTF-8 replaced); the first ``output_cap`` bytes.
        stdout_bytes, stderr_bytes: the same, undecoded.
        stdout_truncated, stderr_truncated: the script wrote more.
        timed_out: the run was killed by its time limit.
        outcome: ``exited``, ``timed_out``, ``killed``, ``canceled``,
            ``refused``, ... (the record's ``outcome``).
        request_id: the run's id, also in the script's
            ``$SKILL_SANDBOX_REQUEST_ID``.
        network_allowed: the run had the host's whole network.
        memory_limit_mb: the memory limit the run was given.
        artifacts: files the script created, changed or deleted in the
            write grants (the record's ``artifacts.files``).
        network: the record's ``network`` (mode, hosts, connections).
        warnings: validation warnings and isolation layers missing, as text.
        error: why the run was refused or failed, else ``""``.
        error_kind: the record's ``error_kind`` (``invalid_skill``, ...).
        record: the whole audit record as a dict.
    """

    exit_code: int
    status: int
    duration_ms: float
    stdout: str
    stderr: str
    stdout_bytes: bytes
    stderr_bytes: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    outcome: str
    request_id: str
    network_allowed: bool
    memory_limit_mb: int
    artifacts: List[Dict[str, Any]]
    network: Dict[str, Any]
    warnings: List[str]
    error: str
    error_kind: str
    record: Dict[str, Any]
    _line: str = field(repr=False, default="")

    @property
    def ok(self) -> bool:
        """True when the script ran and exited with status 0."""
        return self.outcome == "exited" and self.exit_code == 0

    def to_jsonl(self) -> str:
        """Return the audit record as one JSON line, without the newline.

        It is the line ``skill-sandbox audit`` writes for the run, byte for
        byte: append it to a JSONL audit log.
        """
        return self._line


def _stream(obj: Dict[str, Any]) -> bytes:
    text = obj.get("text", "")
    if obj.get("encoding") == "base64":
        return base64.b64decode(text)
    return text.encode("utf-8")


def _warnings(rec: Dict[str, Any]) -> List[str]:
    out = []
    for w in (rec.get("validation") or {}).get("warnings") or []:
        # Strings in the record ("file:line:col: field: message",
        # docs/audit.md); validate --json's shape taken as well.
        if isinstance(w, str):
            out.append(w)
            continue
        f = w.get("file", "")
        out.append(f"{f}: {w.get('message', '')}" if f else w.get("message", ""))
    for m in (rec.get("layers") or {}).get("missing") or []:
        out.append(f"isolation layer {m.get('layer', '?')} missing: {m.get('reason', '')}")
    return out


def parse_result(text: str, status: int) -> RunResult:
    """Build a :class:`RunResult` from a ``--result-json`` file's text."""
    obj = json.loads(text)
    if obj.get("result_version") != 1:
        raise ValueError(f"unknown result_version {obj.get('result_version')!r}")
    # The record is the file's last member, written as the audit line: the
    # raw text is kept for to_jsonl (a quote inside a JSON string is
    # escaped, so the first ',"record":' is the member's).
    start = text.index(',"record":') + len(',"record":')
    line = text[start:text.rstrip().rindex("}")]
    rec = obj["record"]
    out, err = _stream(obj["stdout"]), _stream(obj["stderr"])
    return RunResult(
        exit_code=int(rec.get("exit_code", -1)),
        status=status,
        duration_ms=float(rec.get("duration_ms", 0)),
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        stdout_bytes=out,
        stderr_bytes=err,
        stdout_truncated=bool(obj["stdout"].get("truncated")),
        stderr_truncated=bool(obj["stderr"].get("truncated")),
        timed_out=bool(rec.get("timed_out")),
        outcome=str(rec.get("outcome", "")),
        request_id=str(rec.get("request_id", "")),
        network_allowed=bool(rec.get("network_allowed")),
        memory_limit_mb=int(rec.get("memory_limit_mb", 0)),
        artifacts=list((rec.get("artifacts") or {}).get("files") or []),
        network=dict(rec.get("network") or {}),
        warnings=_warnings(rec),
        error=str(rec.get("error", "")),
        error_kind=str(rec.get("error_kind", "")),
        record=rec,
        _line=line,
    )
