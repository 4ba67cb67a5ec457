"""The README's claims that code can check (issue 28: docs a newcomer can trust).

- every option of the two option tables (include/physmem/options.hpp, the pool's;
  src/malloc/options.hpp, the malloc's) is in the README, and every PHYSMEM_* name the
  README gives exists in the code;
- every `physmem` subcommand and --flag the README's shell lines use is one the CLI has;
- the result file the README cites for its numbers is in the repository, and its report
  regenerates from it;
- the README stays short enough to read (issue 28: at most half of its 676 lines).
"""
import re
from pathlib import Path

import pytest

from physmem_lab.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODE_DIRS = ["src", "include", "lab", "tools", "python/physmem_lab", "scripts", "tests", "cmake"]


def _code_text():
    parts = [(ROOT / "CMakeLists.txt").read_text(encoding="utf-8")]
    for d in CODE_DIRS:
        for p in (ROOT / d).rglob("*"):
            if p.is_file() and p.suffix in {".cpp", ".hpp", ".h", ".c", ".py", ".sh", ".txt", ".in"}:
                parts.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def _table_vars(path):
    return set(re.findall(r'X\(\w+,\s*"(PHYSMEM_[A-Z0-9_]+)"', (ROOT / path).read_text(encoding="utf-8")))


def test_every_declared_option_is_documented():
    declared = _table_vars("include/physmem/options.hpp") | _table_vars("src/malloc/options.hpp")
    assert len(declared) >= 20
    missing = sorted(v for v in declared if v not in README)
    assert not missing, f"options the README does not list: {missing}"


def test_every_documented_variable_exists():
    code = _code_text()
    named = set(re.findall(r"PHYSMEM_[A-Z0-9_]*[A-Z0-9]", README))
    unknown = sorted(v for v in named if v not in code)
    assert not unknown, f"the README names variables the code does not know: {unknown}"


def _cli_lines():
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            line = line.split("#", 1)[0]
            m = re.search(r"(?:\.venv/bin/)?physmem (\w+)(.*)", line)
            if m and "physmem-" not in line.split("physmem ")[0][-1:]:
                yield m.group(1), m.group(2)


def test_every_documented_cli_flag_exists():
    parser = build_parser()
    subs = parser._subparsers._group_actions[0].choices
    lines = list(_cli_lines())
    assert lines, "the README shows no physmem command"
    for sub, rest in lines:
        assert sub in subs, f"physmem {sub}: no such subcommand"
        known = {o for a in subs[sub]._actions for o in a.option_strings}
        for flag in re.findall(r"(?<!\S)(--?[a-z][\w-]*)", rest):
            assert flag in known, f"physmem {sub} {flag}: no such option"


def test_readme_is_short_and_names_no_past_machine():
    assert len(README.splitlines()) <= 353
    for phrase in ("This VM", "this VM", "This machine", "zen5`, this machine"):
        assert phrase not in README


def test_the_cited_numbers_are_committed():
    cited = re.findall(r"docs/numbers/[\w.-]+", README)
    assert "docs/numbers/lab.json.gz" in cited and "docs/numbers/report.md" in cited
    for path in set(cited):
        assert (ROOT / path).exists(), f"the README cites {path}, which is not in the repository"


def test_the_numbers_document_is_the_report_of_the_committed_file(tmp_path):
    """docs/numbers/report.md is exactly what `physmem report` makes of the committed result
    file, so its text and tables cannot drift from the data (regenerate with the command in
    the README after a new main job)."""
    from physmem_lab.report import write_report
    from physmem_lab.results import load_results

    src = "docs/numbers/lab.json.gz"
    results = load_results(ROOT / src)
    assert results.get("machine", {}).get("git_commit"), "the result file names no commit"
    assert results.get("command"), "the result file names no command"
    paths = write_report(results, tmp_path, source=src)
    made = paths["md"].read_text(encoding="utf-8")
    committed = (ROOT / "docs/numbers/report.md").read_text(encoding="utf-8")
    assert made == committed, "docs/numbers/report.md differs from its result file's report"
