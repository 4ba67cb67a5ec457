#!/usr/bin/env python3
"""Extracts every ```cpp block of Markdown files into compilable sources (issue 28: docs
are tested like code).

    snippets.py OUT_DIR FILE.md...

Every ```cpp block must be a whole program (it defines main), so no snippet can rot into a
fragment nobody compiles. A block right after a line ``<!-- run -->`` is also run by the
test command and must exit 0. Writes OUT_DIR/<file>_<n>.cpp and OUT_DIR/snippets.txt (one
line per block: name, run|compile, source file:line). Exit 1 when a block is not a program.
"""
import re
import sys
from pathlib import Path


def blocks(text):
    """(line number, code, run?) for each ```cpp block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```cpp":
            start, run = i + 1, i > 0 and lines[i - 1].strip() == "<!-- run -->"
            j = start
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            yield start, "\n".join(lines[start:j]) + "\n", run
            i = j
        i += 1


def main(argv):
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    listing, bad = [], 0
    for md in map(Path, argv[2:]):
        stem = re.sub(r"\W", "_", md.stem.lower())
        for n, (line, code, run) in enumerate(blocks(md.read_text(encoding="utf-8"))):
            if not re.search(r"\bint\s+main\s*\(", code):
                print(f"{md}:{line}: a ```cpp block that is not a whole program (no main)",
                      file=sys.stderr)
                bad += 1
                continue
            name = f"{stem}_{n}"
            (out / f"{name}.cpp").write_text(code, encoding="utf-8")
            listing.append(f"{name} {'run' if run else 'compile'} {md}:{line}")
    (out / "snippets.txt").write_text("\n".join(listing) + "\n", encoding="utf-8")
    print(f"snippets: {len(listing)} programs from {len(argv) - 2} file(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
