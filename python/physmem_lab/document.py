"""A tiny document model rendered to Markdown, self-contained HTML and plain text.

Contract: a Doc is a list of blocks — heading, paragraph, bullet list, table, preformatted
text, image — built once and rendered identically to each format. HTML embeds images as
base64 PNG data URIs, so report.html needs no other file.
"""
import base64
import html
from pathlib import Path


class Doc:
    def __init__(self):
        self.blocks = []

    def h(self, level: int, text: str):
        self.blocks.append(("h", level, text))

    def p(self, text: str):
        self.blocks.append(("p", text))

    def ul(self, items):
        items = list(items)
        if items:
            self.blocks.append(("ul", items))

    def table(self, headers, rows):
        if rows:
            self.blocks.append(("table", list(headers), [list(map(str, r)) for r in rows]))

    def pre(self, text: str):
        self.blocks.append(("pre", text))

    def img(self, title: str, path: Path):
        self.blocks.append(("img", title, Path(path)))

    # ---------------------------------------------------------------- renderers
    def markdown(self) -> str:
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "ul":
                out.append("\n".join(f"- {i}" for i in b[1]))
            elif b[0] == "table":
                esc = lambda s: s.replace("|", "\\|")
                lines = ["| " + " | ".join(map(esc, b[1])) + " |",
                         "|" + "---|" * len(b[1])]
                lines += ["| " + " | ".join(map(esc, r)) + " |" for r in b[2]]
                out.append("\n".join(lines))
            elif b[0] == "pre":
                out.append("```\n" + b[1] + "\n```")
            elif b[0] == "img":
                out.append(f"![{b[1]}]({b[2].name})")
        return "\n\n".join(out) + "\n"

    def html(self, title: str) -> str:
        e = html.escape
        out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(title)}</title>",
               "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
               "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #bbb;"
               "padding:2px 6px;text-align:right}td:first-child,th:first-child{text-align:left}"
               "pre{background:#f4f4f4;padding:.5em;overflow-x:auto}img{max-width:100%}"
               ".MET{color:#070;font-weight:bold}.MISSED{color:#b00;font-weight:bold}</style>",
               "</head><body>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append(f"<h{b[1]}>{e(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                out.append(f"<p>{e(b[1])}</p>")
            elif b[0] == "ul":
                out.append("<ul>" + "".join(f"<li>{e(i)}</li>" for i in b[1]) + "</ul>")
            elif b[0] == "table":
                cells = lambda r, t: "".join(
                    f"<{t} class='{e(c.split()[0]) if c in ('MET', 'MISSED') else ''}'>{e(c)}</{t}>"
                    for c in r)
                out.append("<table><tr>" + cells(b[1], "th") + "</tr>" +
                           "".join("<tr>" + cells(r, "td") + "</tr>" for r in b[2]) + "</table>")
            elif b[0] == "pre":
                out.append(f"<pre>{e(b[1])}</pre>")
            elif b[0] == "img":
                data = base64.b64encode(b[2].read_bytes()).decode()
                out.append(f"<figure><img alt='{e(b[1])}' src='data:image/png;base64,{data}'>"
                           f"<figcaption>{e(b[1])}</figcaption></figure>")
        out.append("</body></html>")
        return "\n".join(out) + "\n"

    def text(self) -> str:
        """Plain text for the terminal: tables aligned in columns."""
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append(("=" if b[1] <= 2 else "-") * 3 + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "ul":
                out.append("\n".join(f"  - {i}" for i in b[1]))
            elif b[0] == "table":
                rows = [b[1]] + b[2]
                w = [max(len(r[i]) for r in rows) for i in range(len(b[1]))]
                out.append("\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip()
                                     for r in rows))
            elif b[0] == "pre":
                out.append(b[1])
        return "\n\n".join(out) + "\n"
