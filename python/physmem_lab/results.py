"""Result files: building, writing atomically, loading with validation.

Contract: :func:`write_atomic` never leaves a half-written file (temp file + rename in the
same directory). :func:`load_results` validates against results.schema.json and refuses
an unknown major version (schema.SchemaError). Records written before the stack
program's kinds were renamed (``array``, ``malloc``, ``pool`` for what are now
``contiguous``, ``split``, ``split-pool``: lab/PROTOCOL.md) are read under the new names.
"""
import gzip
import json
import os
import tempfile
from pathlib import Path

from . import RESULTS_SCHEMA
from .schema import validate_results


def new_results(suite: str, command: str, started: str, machine: dict, options: dict) -> dict:
    return {"schema": RESULTS_SCHEMA, "suite": suite, "command": command,
            "started": started, "finished": None, "complete": False,
            "machine": machine, "options": options, "system_changes": [],
            "records": [], "skipped": [], "errors": [], "warnings": []}


def write_atomic(path, results: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# The stack program's kinds before they were named for what they are.
_OLD_STACK_KINDS = {"array": "contiguous", "malloc": "split", "pool": "split-pool"}


def upgrade_record(r: dict) -> dict:
    """``r`` under today's names (in place; see the module's contract)."""
    if r.get("experiment") != "stack" or "-" not in str(r.get("variant", "")):
        return r
    kind, backing = r["variant"].rsplit("-", 1)
    new = _OLD_STACK_KINDS.get(kind)
    if new:
        r["variant"] = f"{new}-{backing}"
        if "kind" in r:
            r["kind"] = new
    return r


def load_results(path) -> dict:
    """A result file, plain or gzip-compressed (``.gz``: the committed numbers in docs/)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        results = json.load(f)
    validate_results(results)
    for key in ("records", "round_runs", "skipped", "errors"):
        for r in results.get(key) or []:
            if isinstance(r, dict):
                upgrade_record(r)
    return results
