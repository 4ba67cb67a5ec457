"""doctor runs on this machine and exits 0, with or without the programs built."""
import subprocess

from conftest import physmem_cmd


def test_doctor_exits_0_and_describes_the_machine(tmp_path):
    for bin_dir in (None, tmp_path):       # the real build dir, then an empty one
        argv = physmem_cmd() + ["doctor"] + (["--bin-dir", str(bin_dir)] if bin_dir else [])
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert "THP:" in p.stdout and "Huge pages" in p.stdout and "ASLR" in p.stdout
    assert "build the experiment programs" in p.stdout
