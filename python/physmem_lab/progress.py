"""A plain-text progress line per point on stderr, with an ETA; no TTY needed.

Contract: the ETA is the remaining estimate scaled by how far off the estimates have
been so far (observed / estimated time of the points done), so it self-corrects.
"""
import sys
import time

from .units import format_duration


class Progress:
    def __init__(self, total: int, est_total_s: float, stream=None):
        self.total, self.est_total = total, est_total_s
        self.stream = stream or sys.stderr
        self.done, self.est_done, self.spent = 0, 0.0, 0.0
        self.t0 = time.monotonic()

    def eta_s(self) -> float:
        scale = self.spent / self.est_done if self.est_done > 0 else 1.0
        return max(0.0, (self.est_total - self.est_done) * scale)

    def step(self, label: str, est_s: float, wall_s: float, status: str) -> None:
        """Reports one finished point."""
        self.done += 1
        self.est_done += est_s
        self.spent += wall_s
        width = 20
        filled = int(width * self.done / max(1, self.total))
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.monotonic() - self.t0
        print(f"[{bar}] {self.done:>4}/{self.total} {label:<48} {status:<10} "
              f"{wall_s:6.1f}s  elapsed {format_duration(elapsed)}  ETA {format_duration(self.eta_s())}",
              file=self.stream, flush=True)
