"""Result files: building, writing atomically, loading with validation.

Contract: :func:`write_atomic` never leaves a half-written file (temp file + rename in the
same directory). :func:`load_results` validates against results.schema.json and refuses
an unknown major version (schema.SchemaError).
"""
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


def load_results(path) -> dict:
    with open(path, encoding="utf-8") as f:
        results = json.load(f)
    validate_results(results)
    return results
