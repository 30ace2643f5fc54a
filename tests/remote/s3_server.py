"""A real S3-compatible server process (moto in server mode) on a free loopback port, for end-to-end tests."""

import contextlib
import os
import socket
import subprocess
import sys
import time

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
START_TIMEOUT_S = 60
# Variables that would point a client at a real account instead of the test server.
FOREIGN_AWS_VARIABLES = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(port, process):
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


@contextlib.contextmanager
def s3_server(log_path):
    """Yields the endpoint URL (http://127.0.0.1:<port>) of a moto server process, stopped on exit; RuntimeError
    with the end of its log when it does not start."""
    port = free_port()
    with open(log_path, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **CREDENTIALS),
        )
    try:
        if not _wait_for(port, process):
            with open(log_path, "rb") as log:
                raise RuntimeError(
                    f"moto server did not start on port {port}: {log.read().decode(errors='replace')[-2000:]}"
                )
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def client_environment(endpoint, cache_dir, base=None):
    """os.environ (or `base`) pointed at the test server, with its own tb-gpu-advisor cache."""
    env = dict(
        os.environ if base is None else base,
        **CREDENTIALS,
        AWS_ENDPOINT_URL=endpoint,
        TB_GPU_ADVISOR_CACHE=str(cache_dir),
    )
    for name in FOREIGN_AWS_VARIABLES:
        env.pop(name, None)
    return env


def bucket_client(endpoint):
    """An s3fs filesystem on the test server (the tests' own hand on the bucket: upload, change, delete)."""
    import s3fs

    return s3fs.S3FileSystem(key="testing", secret="testing", endpoint_url=endpoint, skip_instance_cache=True)


def objects(fs, bucket):
    """{path: ETag} of every object in `bucket`: to prove nothing was written to it."""
    fs.invalidate_cache()
    return {path: info["ETag"] for path, info in fs.find(bucket, detail=True).items()}
