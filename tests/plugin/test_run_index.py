"""The run index: relisting rate-limited and never under the lock requests need, incremental on local logdirs."""

import threading
import time

import pytest

from tb_gpu_advisor.plugin import run_index
from tb_gpu_advisor.plugin.params import RequestError
from tb_gpu_advisor.plugin.run_index import RunIndex
from tb_gpu_advisor.files.runs import HostFile, ProfileRun
from tb_gpu_advisor.testing.quickstart import write_quickstart

HANG_S = 30


def _run(name):
    return ProfileRun(run=name, path=f"/logs/{name}", hosts=(HostFile("localhost", f"/logs/{name}/h.xplane.pb"),))


@pytest.fixture
def listings(monkeypatch):
    """A fake discovery: `listings.runs` is what it returns; `listings.gate` (set) lets a listing finish."""

    class Listings:
        runs = (_run("a"),)
        calls = 0
        gate = threading.Event()

    Listings.gate.set()

    def discover(logdir, **_):
        Listings.calls += 1
        assert Listings.gate.wait(HANG_S)
        return Listings.runs

    monkeypatch.setattr(run_index, "discover_runs", discover)
    return Listings


def test_unknown_ids_relist_at_most_once_per_interval(listings):
    now = [100.0]
    index = RunIndex("/logs", clock=lambda: now[0])
    assert [r.run for r in index.runs()] == ["a"] and listings.calls == 1
    for _ in range(50):
        with pytest.raises(RequestError) as raised:
            index.lookup("nope", "localhost")
        assert raised.value.http_code == 404
    assert listings.calls == 1  # within MIN_RELIST_S of the first listing: a 404 from the listing at hand
    now[0] += run_index.MIN_RELIST_S + 1
    listings.runs = (_run("a"), _run("nope"))
    assert index.lookup("nope", "localhost")[0].run == "nope"
    assert listings.calls == 2
    for _ in range(50):
        with pytest.raises(RequestError):
            index.lookup("other", "localhost")
    assert listings.calls == 2


def test_a_slow_relisting_blocks_no_request(listings):
    now = [100.0]
    index = RunIndex("/logs", clock=lambda: now[0])
    index.runs()
    listings.gate.clear()  # the next listing hangs until the gate opens
    now[0] += run_index.MIN_RELIST_S + 1
    opener = threading.Timer(1.0, listings.gate.set)
    try:
        started = time.monotonic()
        assert [r.run for r in index.runs()] == ["a"]  # stale: answered at once, relisted in the background
        assert index.lookup("a", "localhost")[0].run == "a"
        assert time.monotonic() - started < 0.9
        opener.start()
        with pytest.raises(RequestError):
            index.lookup_run("nope")  # joins the relisting that runs (no second one), then 404
    finally:
        listings.gate.set()
        opener.cancel()
    assert time.monotonic() - started < HANG_S
    assert listings.calls == 2


def test_a_known_id_answers_while_a_relisting_is_running(listings):
    now = [100.0]
    index = RunIndex("/logs", clock=lambda: now[0])
    index.runs()
    listings.gate.clear()
    now[0] += run_index.MIN_RELIST_S + 1
    try:
        index.runs()  # starts the background relisting, which now hangs
        deadline = time.monotonic() + HANG_S
        while listings.calls < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        for _ in range(100):
            assert index.lookup("a", "localhost")[0].run == "a"
        assert time.monotonic() - started < 1.0
    finally:
        listings.gate.set()


def test_a_local_relisting_rereads_only_changed_run_directories(tmp_path, monkeypatch):
    from tb_gpu_advisor.files import local_listing

    write_quickstart(str(tmp_path / "one"))
    write_quickstart(str(tmp_path / "two"))
    reads = []
    real = local_listing._hosts_in
    monkeypatch.setattr(local_listing, "_hosts_in", lambda d, *a: reads.append(d) or real(d, *a))
    now = [100.0]
    index = RunIndex(str(tmp_path), clock=lambda: now[0])
    assert len(index.runs()) == 2 and len(reads) == 2
    now[0] += run_index.MIN_RELIST_S + 1
    with pytest.raises(RequestError):
        index.lookup_run("unknown")  # relists: nothing changed, nothing re-read
    assert len(reads) == 2 and index.listings == 2
    changed = tmp_path / "two" / "quickstart_input_bound" / "plugins" / "profile" / "2026_01_01_00_00_00"
    (changed / "worker1.xplane.pb").write_bytes((changed / "localhost.xplane.pb").read_bytes())
    now[0] += run_index.MIN_RELIST_S + 1
    with pytest.raises(RequestError):
        index.lookup_run("unknown")
    assert reads[2:] == [str(changed)]
    assert {h.host for r in index.runs() for h in r.hosts} == {"localhost", "worker1"}
