"""End to end against a real S3-compatible server process (moto in server mode) on loopback: the CLI reads
s3:// logdirs, downloads only the chosen host files into its cache, and never writes to the bucket."""

import json
import os
import subprocess
import sys

import pytest

s3fs = pytest.importorskip("s3fs", reason="s3:// logdirs need s3fs (pip install -e '.[remote]')")
pytest.importorskip("moto.server", reason="the S3 test server is moto (pip install -e '.[test]')")

from tb_gpu_advisor.testing.pairs import write_input_pair  # noqa: E402
from tests.remote.s3_server import bucket_client, client_environment, objects, s3_server  # noqa: E402

BUCKET = "profiles"
BOUND, FIXED = "input_bound/2026_01_01_00_00_00", "prefetch/2026_01_01_00_00_00"


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory):
    with s3_server(tmp_path_factory.mktemp("moto") / "server.log") as endpoint:
        yield endpoint


@pytest.fixture(scope="module")
def bucket(s3_endpoint, tmp_path_factory):
    """s3://profiles/logs with runs input_bound/<ts> (hosts localhost, worker1) and prefetch/<ts>."""
    local = tmp_path_factory.mktemp("upload")
    write_input_pair(str(local), fixed=False)
    write_input_pair(str(local), fixed=True, seed=1)
    second = local / "input_bound" / "plugins" / "profile" / "2026_01_01_00_00_00" / "worker1.xplane.pb"
    second.write_bytes((second.parent / "localhost.xplane.pb").read_bytes())
    (local / "input_bound" / "events.out.tfevents.1").write_bytes(b"not a profile")
    fs = bucket_client(s3_endpoint)
    fs.mkdir(BUCKET)
    fs.put(str(local) + "/", f"{BUCKET}/logs", recursive=True)
    return fs


def _objects(fs):
    return objects(fs, BUCKET)


@pytest.fixture
def cli(s3_endpoint, tmp_path):
    """Runs `python -m tb_gpu_advisor ...` in a subprocess pointed at the server, with its own cache."""
    env = dict(client_environment(s3_endpoint, tmp_path / "cache"), PYTHONPATH=os.getcwd())

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "tb_gpu_advisor", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )

    run.cache = tmp_path / "cache"
    return run


def _cached(cache):
    return sorted(str(p.relative_to(cache)).split("/", 1)[1] for p in cache.rglob("*.xplane.pb"))


def test_analyze_a_bucket_logdir_end_to_end(bucket, cli):
    before = _objects(bucket)
    result = cli("analyze", f"s3://{BUCKET}/logs", "--format", "json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["run"] == "prefetch/2026_01_01_00_00_00"
    assert (
        report["hosts"][0]["file"] == f"s3://{BUCKET}/logs/prefetch/plugins/profile/2026_01_01_00_00_00/"
        "localhost.xplane.pb"
    )
    assert report["hosts"][0]["summary"]["step_time_ms"]["count"] == 16
    assert _cached(cli.cache) == ["localhost.xplane.pb"]
    assert _objects(bucket) == before


def test_only_the_chosen_host_is_downloaded_and_reused(bucket, cli):
    args = ("analyze", f"s3://{BUCKET}/logs", "--run", BOUND, "--host", "worker1")
    assert cli(*args).returncode == 0
    assert _cached(cli.cache) == ["worker1.xplane.pb"]
    inode = next(cli.cache.rglob("*.xplane.pb")).stat().st_ino
    assert cli(*args).returncode == 0
    assert next(cli.cache.rglob("*.xplane.pb")).stat().st_ino == inode  # a hit, not a new download


def test_compare_check_and_report_read_the_bucket(bucket, cli, tmp_path):
    before = _objects(bucket)
    logs = f"s3://{BUCKET}/logs"
    compare = cli("compare", logs, logs, "--baseline-run", BOUND, "--candidate-run", FIXED, "--host", "localhost")
    assert compare.returncode == 0, compare.stderr
    assert "5.26× faster" in compare.stdout and "input wait fell from" in compare.stdout
    passed = cli(
        "check",
        "--baseline",
        logs,
        "--candidate",
        logs,
        "--baseline-run",
        BOUND,
        "--candidate-run",
        FIXED,
        "--host",
        "localhost",
    )
    failed = cli(
        "check",
        "--baseline",
        logs,
        "--candidate",
        logs,
        "--baseline-run",
        FIXED,
        "--candidate-run",
        BOUND,
        "--host",
        "localhost",
    )
    assert (passed.returncode, failed.returncode) == (0, 1)
    assert failed.stdout.startswith("regression: mean step time")
    page = tmp_path / "report.html"
    assert cli("report", logs, "-o", page).returncode == 0
    assert "<svg" in page.read_text(encoding="utf-8")
    assert _objects(bucket) == before


def test_missing_paths_are_one_line_errors(bucket, cli):
    result = cli("analyze", f"s3://{BUCKET}/nothing-here")
    assert result.returncode == 2
    assert result.stderr == f"error: s3://{BUCKET}/nothing-here: no such file or directory\n"
    result = cli("analyze", f"s3://{BUCKET}/logs", "--run", "nope")
    assert result.returncode == 2 and result.stderr.startswith(f"error: s3://{BUCKET}/logs: no run 'nope'; runs: ")


def test_an_overflowing_host_in_a_bucket_is_one_line_and_the_other_host_is_reported(bucket, cli, tmp_path):
    from tests.model.test_limits import mutated

    run = f"{BUCKET}/hostile/plugins/profile/2026_01_01_00_00_00"
    bucket.pipe(f"{run}/bad.xplane.pb", mutated("gpu_offset_max"))
    bucket.pipe(
        f"{run}/good.xplane.pb",
        bucket.cat(f"{BUCKET}/logs/{BOUND.replace('/', '/plugins/profile/')}/localhost.xplane.pb"),
    )
    result = cli("analyze", f"s3://{BUCKET}/hostile", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert [host["host"] for host in json.loads(result.stdout)["hosts"]] == ["good"]
    assert result.stderr.splitlines() == [
        f"error: s3://{run}/bad.xplane.pb: an event time does not fit in 64-bit "
        "picoseconds: the file is corrupt or not a profile"
    ]
    alone = cli("analyze", f"s3://{run}/bad.xplane.pb")
    assert alone.returncode == 2 and len(alone.stderr.splitlines()) == 1 and "Traceback" not in alone.stderr


def test_the_static_site_of_a_bucket_logdir(bucket, cli, tmp_path):
    before = _objects(bucket)
    result = cli("report", f"s3://{BUCKET}/logs", "--all", "-o", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert BOUND in index and FIXED in index and "Input-bound" in index
    assert len(list((tmp_path / "site" / "runs").glob("*.html"))) == 2
    assert _objects(bucket) == before
