"""A quiet run, or none: the benchmark waits, bounded, for a 1-minute load of 0.5 or less, records
what it found, and a busier start does not replace the committed results unless forced.

The load, the clock and the sleep are faked: nothing here waits or times anything.
"""

import pytest

from pp_demo.errors import BadInput
from pp_demo.instruments.bench.quiet_start import QUIET_LOAD, check_quiet_start, wait_for_quiet


class FakeMachine:
    """A machine whose 1-minute load reads ``loads`` one after the other (the last one stays),
    and whose clock moves only when the benchmark sleeps."""

    def __init__(self, *loads: float) -> None:
        self.loads, self.now, self.slept = list(loads), 0.0, []

    def read(self) -> list[float]:
        load = self.loads.pop(0) if len(self.loads) > 1 else self.loads[0]
        return [load, 1.0, 1.0]

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def _wait(machine: FakeMachine, wait_s: float, said: list[str]) -> dict:
    return wait_for_quiet(wait_s, said.append, machine.read, machine.sleep, machine.clock)


def test_the_threshold_is_a_1_minute_load_of_one_half():
    assert QUIET_LOAD == 0.5


def test_a_quiet_machine_starts_at_once_and_says_nothing():
    machine, said = FakeMachine(0.5), []
    start = _wait(machine, 600, said)
    assert (start["quiet"], start["waited_s"], start["load"][0], said, machine.slept) == (True, 0, 0.5, [], [])


def test_a_busy_machine_is_waited_for_until_it_is_quiet_and_the_wait_is_said_and_recorded():
    machine, said = FakeMachine(1.8, 1.2, 0.7, 0.4), []
    start = _wait(machine, 600, said)
    assert start["quiet"] and start["load"][0] == 0.4
    assert len(machine.slept) == 3 and start["waited_s"] == sum(machine.slept)
    assert said[0].startswith("the 1-minute load average is 1.80: waiting up to 600 s for it to fall to 0.5")
    assert "0.40" in said[-1]


def test_the_wait_is_bounded_and_a_machine_that_stays_busy_is_recorded_as_busy():
    machine, said = FakeMachine(0.9), []
    start = _wait(machine, 100, said)
    assert not start["quiet"] and start["load"][0] == 0.9
    assert machine.now == 100 and start["waited_s"] == 100  # no longer than asked
    assert said[-1].endswith("still busy")


def test_no_wait_asked_means_no_wait():
    machine, said = FakeMachine(3.0), []
    start = _wait(machine, 0, said)
    assert (start["quiet"], machine.slept, said) == (False, [], [])


def test_a_busy_start_does_not_replace_the_committed_results():
    busy = _wait(FakeMachine(0.9), 0, [])
    with pytest.raises(BadInput, match=r"load average of 0\.90 \(more than 0\.5\).*--force"):
        check_quiet_start(busy, replaces_committed=True, force=False)


def test_a_busy_start_may_write_elsewhere_and_is_recorded_as_busy():
    busy = _wait(FakeMachine(0.9), 0, [])
    assert check_quiet_start(busy, replaces_committed=False, force=False) == {**busy, "forced": False}


def test_force_replaces_them_and_the_file_says_it_was_forced():
    busy = _wait(FakeMachine(0.9), 0, [])
    start = check_quiet_start(busy, replaces_committed=True, force=True)
    assert start["forced"] and not start["quiet"]
    # forcing a quiet start forces nothing
    quiet = _wait(FakeMachine(0.2), 0, [])
    assert not check_quiet_start(quiet, replaces_committed=True, force=True)["forced"]


def test_the_committed_file_is_claimed_only_from_a_quiet_start():
    from pp_demo.records.bench import measured_quietly

    old = {"load_average": {"start": [0.6, 0.9, 3.0]}, "versions": {"cpus": "2"}}  # before the guard
    assert measured_quietly(old)  # its rule: less than half the CPUs busy
    forced = {**old, "quiet_start": check_quiet_start(_wait(FakeMachine(0.6), 0, []), True, True)}
    assert not measured_quietly(forced)
    quiet = {**old, "quiet_start": _wait(FakeMachine(0.3), 0, [])}
    assert measured_quietly(quiet)


def test_the_command_refuses_a_busy_start_for_the_committed_file_before_any_work(tmp_path, monkeypatch, capsys):
    import pp_demo.instruments.bench as bench
    from pp_demo import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    committed = tmp_path / "results" / "bench_cpu.json"
    committed.write_text("{}")
    monkeypatch.setattr(bench, "wait_for_quiet", lambda wait_s, say: _wait(FakeMachine(0.9), 0, []))
    monkeypatch.setattr(bench, "one_process_times", lambda *args: pytest.fail("the measuring started"))
    with pytest.raises(SystemExit) as stopped:
        cli.main(["bench", "--out", "results"])
    assert stopped.value.code == 2
    assert "it does not replace the committed results" in capsys.readouterr().err
    assert committed.read_text() == "{}"
