"""Validation of records and result files against lab/schema (JSON Schema 2020-12).

Contract: :func:`validate_record` and :func:`validate_results` return None on success and
raise :class:`SchemaError` with a one-line, human-readable message otherwise. A document
whose ``schema`` field names a different major version than this harness knows is
refused before any field is checked, with a message saying which version it has.

A record is checked twice: its envelope (record.schema.json, what every program prints)
and its experiment's payload (``payloads/<experiment>.schema.json``, the fields only that
program prints, e.g. ``stack`` or ``alloc``); an experiment without a fragment has no
payload. A result file's records, round runs and layout runs are each checked so.
"""
import functools
import json
import re

import jsonschema
from referencing import Registry, Resource

from . import RECORD_SCHEMA, RESULTS_SCHEMA
from .paths import schema_dir


class SchemaError(ValueError):
    """A record or result file that does not follow lab/PROTOCOL.md."""


_VERSION = re.compile(r"^(?P<name>[a-z.]+)/(?P<major>[0-9]+)(\.[0-9]+)?$")


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict:
    with open(schema_dir() / name, encoding="utf-8") as f:
        return json.load(f)


PAYLOADS = "payloads"


@functools.lru_cache(maxsize=None)
def _validator(name: str):
    registry = Registry()
    # the envelopes, and every payload fragment (one may refer to another by its $id)
    for other in ("record.schema.json", "results.schema.json", *payload_schemas().values()):
        doc = _load(other)
        registry = registry.with_resource(doc["$id"], Resource.from_contents(doc))
    cls = jsonschema.Draft202012Validator
    return cls(_load(name), registry=registry, format_checker=cls.FORMAT_CHECKER)


def payload_schemas() -> dict:
    """experiment -> the file name of its payload fragment (under the schema directory)."""
    d = schema_dir() / PAYLOADS
    return {p.name[:-len(".schema.json")]: f"{PAYLOADS}/{p.name}"
            for p in sorted(d.glob("*.schema.json"))} if d.is_dir() else {}


def _check(doc, schema_file: str, label: str, prefix: str = "") -> None:
    errors = sorted(_validator(schema_file).iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/".join([prefix] * bool(prefix) + [str(p) for p in e.absolute_path]) or "(top)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SchemaError(f"{label} invalid at {where}: {e.message}{more}")


def _check_payload(record, prefix: str = "") -> None:
    if not isinstance(record, dict):
        return
    frag = payload_schemas().get(str(record.get("experiment")))
    if frag:
        _check(record, frag, f"{record['experiment']} payload ({frag})", prefix)


def check_version(doc, expected: str) -> None:
    """Refuses ``doc`` unless its ``schema`` is ``expected`` (same name, same major)."""
    if not isinstance(doc, dict):
        raise SchemaError(f"expected a JSON object, got {type(doc).__name__}")
    got = doc.get("schema")
    m, want = _VERSION.match(str(got or "")), _VERSION.match(expected)
    if not m or m["name"] != want["name"]:
        raise SchemaError(f"not a {want['name']} document (schema field: {got!r})")
    if m["major"] != want["major"]:
        raise SchemaError(
            f"{got} is major version {m['major']}; this harness understands only "
            f"{expected} (update the harness or the program so they agree)")


def _validate(doc, expected: str, schema_file: str) -> None:
    check_version(doc, expected)
    _check(doc, schema_file, expected)


def validate_record(record) -> None:
    """Checks one program record (physmem.lab.record/1): envelope, then payload."""
    _validate(record, RECORD_SCHEMA, "record.schema.json")
    _check_payload(record)


def validate_results(results) -> None:
    """Checks a whole result file (physmem.lab.results/1), records included (envelope
    and payload of each record, round run and layout run)."""
    _validate(results, RESULTS_SCHEMA, "results.schema.json")
    for key in ("records", "round_runs", "layout_runs"):
        for i, r in enumerate(results.get(key) or []):
            _check_payload(r, f"{key}/{i}")
