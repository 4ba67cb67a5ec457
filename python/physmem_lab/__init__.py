"""physmem's lab harness: runs the experiment programs of lab/PROTOCOL.md.

Public API (everything else lives in private-by-convention modules):

- :func:`physmem_lab.results.load_results` — read and validate a result file.
- :func:`physmem_lab.schema.validate_record` — check one program record.
- :func:`physmem_lab.cli.main` — the ``physmem`` command.
"""

__version__ = "0.1.0"

RECORD_SCHEMA = "physmem.lab.record/1"
RESULTS_SCHEMA = "physmem.lab.results/1"
