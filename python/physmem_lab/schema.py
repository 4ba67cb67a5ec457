"""Validation of records and result files against lab/schema (JSON Schema 2020-12).

Contract: :func:`validate_record` and :func:`validate_results` return None on success and
raise :class:`SchemaError` with a one-line, human-readable message otherwise. A document
whose ``schema`` field names a different major version than this harness knows is
refused before any field is checked, with a message saying which version it has.
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


@functools.lru_cache(maxsize=None)
def _validator(name: str):
    registry = Registry()
    for other in ("record.schema.json", "results.schema.json"):
        doc = _load(other)
        registry = registry.with_resource(doc["$id"], Resource.from_contents(doc))
    cls = jsonschema.Draft202012Validator
    return cls(_load(name), registry=registry, format_checker=cls.FORMAT_CHECKER)


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
    errors = sorted(_validator(schema_file).iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise SchemaError(f"{expected} invalid at {where}: {e.message}{more}")


def validate_record(record) -> None:
    """Checks one program record (physmem.lab.record/1)."""
    _validate(record, RECORD_SCHEMA, "record.schema.json")


def validate_results(results) -> None:
    """Checks a whole result file (physmem.lab.results/1), records included."""
    _validate(results, RESULTS_SCHEMA, "results.schema.json")
