"""Where the repository, its schemas and the experiment programs are.

Contract: the package lives in ``<repo>/python/physmem_lab`` (an editable install), so
the repository root is two levels up. ``PHYSMEM_LAB_BIN`` overrides the program
directory, ``PHYSMEM_LAB_SCHEMA_DIR`` the schema directory.
"""
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def schema_dir() -> Path:
    """Directory holding record.schema.json and results.schema.json."""
    return Path(os.environ.get("PHYSMEM_LAB_SCHEMA_DIR") or REPO_ROOT / "lab" / "schema")


def default_bin_dir() -> Path:
    """``$PHYSMEM_LAB_BIN`` or ``<repo>/build/lab``."""
    return Path(os.environ.get("PHYSMEM_LAB_BIN") or REPO_ROOT / "build" / "lab")


def program_path(bin_dir: Path, experiment: str) -> Path:
    """The program of one experiment: ``<bin_dir>/physmem_lab_<experiment>``."""
    return Path(bin_dir) / f"physmem_lab_{experiment}"


def hugepages_program() -> Path:
    """``$PHYSMEM_HUGEPAGES_PROGRAM`` or ``<repo>/build/tools/physmem-hugepages``: the one
    writer of nr_hugepages (see :mod:`physmem_lab.hugepages`)."""
    return Path(os.environ.get("PHYSMEM_HUGEPAGES_PROGRAM")
                or REPO_ROOT / "build" / "tools" / "physmem-hugepages")


def tlbsim_program() -> Path:
    """``$PHYSMEM_TLBSIM_PROGRAM`` or ``<repo>/build/tools/physmem-tlbsim``: the translation
    simulator's own program (validate, bench, detect, presets; see
    :mod:`physmem_lab.tlbsim`)."""
    return Path(os.environ.get("PHYSMEM_TLBSIM_PROGRAM")
                or REPO_ROOT / "build" / "tools" / "physmem-tlbsim")
