"""``compressbench worker``: one long-lived process that runs the reader stages of a ``dvc repro``,
so the reader's weights load once per invocation, not once per cell.

With ``reader.worker: true`` in ``params.yaml``, ``compressbench stage answers ...`` (and every
stage declared ``worker=True``) does not run in its own process: it hands its command line, its
folder, its environment and its stdout/stderr (the file descriptors themselves, so progress and
errors reach DVC's terminal as they happen) to the worker and exits with the worker's exit code.
The worker runs the stage exactly as ``compressbench stage`` would (:func:`compressbench.cli.main`,
params.yaml re-read on each call), keeping the readers it built
(:func:`~compressbench.pipeline.reader_factory.build_reader` reuses a reader for the same
settings and weight files). One call runs at a time.

Never stale: a worker serves only the code it started with. Its address is derived from the
sha256 of every source file of this ``compressbench`` package, the Python executable and the
user, so a changed line of code reaches a new worker; the reader it reuses is keyed by the
backend's parameters and the size, time and inode of the model files, so changed weights load
anew. An idle worker exits after ``--idle`` seconds (default :data:`IDLE_SECONDS`);
``compressbench worker stop`` ends it at once. Its socket, key and log live in
``$TMPDIR/compressbench-workers-<uid>/`` (mode 700; a Unix socket's path must stay short).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Client, Connection, Listener
from multiprocessing.reduction import recv_handle, send_handle
from pathlib import Path
from typing import Any

IDLE_SECONDS = 120.0  # an idle worker exits after this long
START_SECONDS = 120.0  # how long a stage waits for a new worker to listen
ENV_IN_WORKER = "COMPRESSBENCH_IN_WORKER"  # set inside the worker: its stages never forward

log = logging.getLogger(__name__)


def code_key() -> str:
    """sha256 of this package's source files, the interpreter and the user (the worker's id)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"{sys.executable}\0{os.getuid()}\0".encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def worker_dir() -> Path:
    folder = Path(tempfile.gettempdir()) / f"compressbench-workers-{os.getuid()}"
    folder.mkdir(exist_ok=True, mode=0o700)
    return folder


def _files(key: str) -> tuple[Path, Path, Path]:
    folder = worker_dir()
    return folder / f"{key}.sock", folder / f"{key}.authkey", folder / f"{key}.log"


def _connect(key: str) -> Connection | None:
    sock, authkey, _ = _files(key)
    if not sock.exists() or not authkey.exists():
        return None
    try:
        return Client(str(sock), family="AF_UNIX", authkey=authkey.read_bytes())
    except (ConnectionError, FileNotFoundError, OSError):
        return None


def _spawn(key: str) -> None:
    _, _, logfile = _files(key)
    with logfile.open("ab") as out:
        subprocess.Popen(
            [sys.executable, "-m", "compressbench.cli", "worker", "serve", "--key", key],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,  # outlives the stage that started it, not DVC's terminal
            env={**os.environ, ENV_IN_WORKER: "1"},
        )


def connect_or_start(key: str) -> Connection:
    """A connection to worker ``key``, started first if none listens (one starter at a time)."""
    conn = _connect(key)
    if conn is not None:
        return conn
    with (worker_dir() / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        conn = _connect(key)
        if conn is None:
            _spawn(key)
            deadline = time.monotonic() + START_SECONDS
            while conn is None and time.monotonic() < deadline:
                time.sleep(0.1)
                conn = _connect(key)
    if conn is None:
        log_path = _files(key)[2]
        raise RuntimeError(f"the reader worker did not start in {START_SECONDS:.0f} s ({log_path})")
    return conn


def forward(argv: list[str]) -> int:
    """Run ``compressbench ARGV`` in the worker; its exit code."""
    conn = connect_or_start(code_key())
    with conn:
        sys.stdout.flush()
        sys.stderr.flush()
        conn.send({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)})
        for fd in (1, 2):
            send_handle(conn, fd, int(conn.recv()))  # the worker's pid, to pass it our fds
        reply: dict[str, Any] = conn.recv()
    return int(reply["rc"])


@contextlib.contextmanager
def _as_caller(request: dict[str, Any], fds: list[int]) -> Iterator[None]:
    """The caller's folder, environment and stdout/stderr for the length of one call."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    saved_fds = [os.dup(1), os.dup(2)]
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({**request["env"], ENV_IN_WORKER: "1"})
    for target, fd in zip((1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for target, fd in zip((1, 2), saved_fds, strict=True):
            os.dup2(fd, target)
            os.close(fd)
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)


def _run_call(conn: Connection) -> None:
    from compressbench.cli import main

    try:
        request: dict[str, Any] = conn.recv()
    except EOFError:  # `compressbench worker status` only connects
        return
    if request.get("stop"):
        conn.send({"rc": 0})
        raise SystemExit(0)
    fds = []
    for _ in (1, 2):
        conn.send(os.getpid())
        fds.append(recv_handle(conn))
    with _as_caller(request, fds):
        log.info("worker %d runs: compressbench %s", os.getpid(), " ".join(request["argv"]))
        try:
            rc = main(list(request["argv"]))
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # the stage's own traceback, on the caller's stderr
            traceback.print_exc()
            rc = 1
    conn.send({"rc": rc})


def serve(key: str, idle: float) -> int:
    """Listen on worker ``key``'s socket and run one call at a time until idle for ``idle`` s."""
    sock, authkey_file, _ = _files(key)
    authkey = secrets.token_bytes(32)
    sock.unlink(missing_ok=True)
    listener = Listener(str(sock), family="AF_UNIX", authkey=authkey)
    authkey_file.write_bytes(authkey)
    authkey_file.chmod(0o600)
    last = [time.monotonic()]
    busy = threading.Lock()

    def watchdog() -> None:
        while True:
            time.sleep(1.0)
            with busy:
                if time.monotonic() - last[0] > idle:
                    log.info("worker %d idle for %.0f s: exiting", os.getpid(), idle)
                    sock.unlink(missing_ok=True)
                    authkey_file.unlink(missing_ok=True)
                    os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    log.info("worker %d listening on %s (code %s)", os.getpid(), sock, key)
    while True:
        try:
            conn = listener.accept()
        except Exception as exc:  # a caller with the wrong key, or one that went away
            log.warning("refused a connection: %s", exc)
            continue
        with busy, conn:
            try:
                _run_call(conn)
            except (EOFError, OSError) as exc:
                log.warning("caller went away: %s", exc)
            except SystemExit:  # `compressbench worker stop`
                log.info("worker %d stopped", os.getpid())
                sock.unlink(missing_ok=True)
                authkey_file.unlink(missing_ok=True)
                return 0
            last[0] = time.monotonic()


def stop(key: str) -> bool:
    """End worker ``key`` (True if one was listening)."""
    conn = _connect(key)
    if conn is None:
        return False
    with conn:
        conn.send({"stop": True})
        with contextlib.suppress(EOFError, ConnectionError):
            conn.recv()
    return True


def run(args: argparse.Namespace) -> int:
    key = args.key or code_key()
    if args.action == "serve":
        return serve(key, args.idle)
    if args.action == "stop":
        print("stopped" if stop(key) else "no worker running for this code")
        return 0
    print(f"{'running' if _connect(key) else 'not running'}: {_files(key)[0]}")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("worker", help="the long-lived reader worker (reader.worker: true)")
    p.add_argument("action", choices=("serve", "stop", "status"))
    p.add_argument("--key", help="the worker's id (default: this code's)")
    p.add_argument("--idle", type=float, default=IDLE_SECONDS, help="seconds idle before exiting")
    p.set_defaults(func=run)
