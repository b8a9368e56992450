"""The benchmark's malloc setting: freed activations are reused, not faulted in again.

Counted, not timed: minor page faults are what the kernel did, whatever else the machine runs.
Each case runs in a fresh process, so this test process keeps glibc's defaults.
"""

import subprocess
import sys

import pytest

# A 16 MiB tensor allocated, filled and freed again and again, after three warm-ups (the heap grows
# in the first): its minor page
# faults per allocation. 16 MiB is 4096 pages of 4 KiB: a fresh mapping faults every one of them.
PROGRAM = """
import ctypes, resource, sys, torch
from pp_demo.instruments.bench.allocator import fix_malloc_thresholds
if sys.argv[1] == "fixed":
    assert fix_malloc_thresholds()
else:  # every block of 128 KiB or more from its own mapping, as glibc starts
    assert ctypes.CDLL(None).mallopt(-3, 128 * 1024)
faults = []
for k in range(23):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    torch.empty(4 * 2**20).fill_(1.0)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
print(sum(n < 64 for n in faults[3:]))
"""

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")


def _reused(setting: str) -> int:
    done = subprocess.run([sys.executable, "-c", PROGRAM, setting], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout)


@linux_only
def test_with_the_fixed_thresholds_a_freed_activation_is_reused_without_faults():
    assert _reused("fixed") >= 10


@linux_only
def test_the_count_sees_a_fresh_mapping_fault_every_page():
    # the control: the same loop with every large block mapped afresh faults its pages in every time
    assert _reused("mapped") == 0


def test_fixing_the_thresholds_is_a_no_op_where_there_are_none(monkeypatch):
    from pp_demo.instruments.bench import allocator

    monkeypatch.setattr(allocator.sys, "platform", "darwin")
    assert allocator.fix_malloc_thresholds() is False
    assert allocator.malloc_thresholds_settable() is False
