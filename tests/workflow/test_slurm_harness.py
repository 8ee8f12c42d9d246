"""tools/slurm_cluster.py without a cluster: how it decides that MariaDB is ready, what it says
when it is not, and that a failed start leaves no daemon and no temporary folder behind.

The first cluster start of a loaded machine (load 7-13) timed out after 180 s "waiting for
MariaDB" although MariaDB's log said "ready for connections" within a second, and its
temporary folder (configuration, logs, database) stayed in /tmp.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def harness(monkeypatch):
    spec = importlib.util.spec_from_file_location("slurm_cluster_under_test",
                                                  REPO / "tools" / "slurm_cluster.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fake_admin(tmp_path: Path, rc: int, says: str) -> str:
    exe = tmp_path / "mariadb-admin"
    exe.write_text(f"#!/bin/sh\necho '{says}' >&2\nexit {rc}\n")
    exe.chmod(0o755)
    return str(exe)


LOG_READY = ("2025-10-17  1:02:03 0 [Note] Starting MariaDB 10.11.14 as process 4242\n"
             "2025-10-17  1:02:04 0 [Note] /usr/sbin/mariadbd: ready for connections.\n"
             "Version: '10.11.14-MariaDB-0+deb12u2'  socket: '/tmp/fl-slurm-x/run/mysql.sock'  "
             "port: 41234  Debian 12\n")
LOG_STARTING = "2025-10-17  1:02:03 0 [Note] InnoDB: Initializing buffer pool\n"


def test_the_log_line_of_a_ready_server_is_recognised(harness):
    assert harness.mariadb_log_says_ready(LOG_READY)
    assert not harness.mariadb_log_says_ready(LOG_STARTING)
    assert not harness.mariadb_log_says_ready("")


def test_ready_means_the_admin_client_pings_the_socket(harness, tmp_path, monkeypatch):
    c = harness.Cluster(tmp_path / "c")
    monkeypatch.setattr(harness, "mariadb_admin", lambda: _fake_admin(tmp_path, 0, "alive"))
    assert c._mariadb_ready()
    monkeypatch.setattr(harness, "mariadb_admin", lambda: _fake_admin(
        tmp_path, 1, "error: 'Can't connect to local server through socket'"))
    assert not c._mariadb_ready()
    # without the admin client, the log line decides
    monkeypatch.setattr(harness, "mariadb_admin", lambda: None)
    (c.base / "log").mkdir(parents=True)
    assert not c._mariadb_ready()
    (c.base / "log" / "mariadb.log").write_text(LOG_READY)
    assert c._mariadb_ready()


def test_a_timeout_says_what_it_waited_for_and_what_it_saw(harness, tmp_path, monkeypatch):
    c = harness.Cluster(tmp_path / "c")
    (c.base / "log").mkdir(parents=True)
    (c.base / "log" / "mariadb.log").write_text(LOG_READY)
    monkeypatch.setattr(harness, "mariadb_admin", lambda: _fake_admin(
        tmp_path, 1, "error: Access denied for user root"))
    with pytest.raises(RuntimeError) as err:
        c._wait("MariaDB to answer on its socket", c._mariadb_ready, timeout=0.3,
                why=c._mariadb_state)
    first = str(err.value).splitlines()[0]
    assert first.startswith("timed out after 0 s waiting for MariaDB to answer on its socket "
                            "(its log says ready for connections; mariadb-admin ping on "
                            f"{c.base / 'run' / 'mysql.sock'} exited 1: error: Access "
                            "denied for user root); load average"), first
    assert f"Daemon logs in {c.base / 'log'}" in first


def test_a_failed_start_stops_its_daemons_and_removes_its_temporary_folder(harness,
                                                                           monkeypatch):
    monkeypatch.setattr(harness, "missing", lambda: None)
    monkeypatch.setattr(harness.Cluster, "_isolate", lambda self: None)
    started = []

    def munge_then_fail(self):
        self._spawn("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"])
        started.append(self.procs[-1][1])
        raise RuntimeError("timed out waiting for the MUNGE socket")

    monkeypatch.setattr(harness.Cluster, "_start_munge", munge_then_fail)
    c = harness.Cluster()
    assert c.base.is_dir() and c.owns_base
    with pytest.raises(RuntimeError, match="MUNGE"):
        c.start()
    assert not c.base.exists()
    assert c.procs == [] and started[0].poll() is not None  # stopped by its process id


def test_a_cluster_that_cannot_start_here_leaves_no_folder(harness, monkeypatch):
    monkeypatch.setattr(harness, "missing", lambda: "needs root")
    c = harness.Cluster()
    with pytest.raises(RuntimeError, match="needs root"):
        c.start()
    assert not c.base.exists()


def test_a_folder_given_by_the_caller_is_kept(harness, tmp_path, monkeypatch):
    monkeypatch.setattr(harness, "missing", lambda: "needs root")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("kept")
    c = harness.Cluster(mine)
    with pytest.raises(RuntimeError):
        c.start()
    assert not c.owns_base and (mine / "notes.txt").read_text() == "kept"


def test_the_ping_is_on_the_socket_as_root_without_option_files(harness, tmp_path,
                                                                monkeypatch):
    record = tmp_path / "argv"
    exe = tmp_path / "mariadb-admin"
    exe.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    exe.chmod(0o755)
    monkeypatch.setattr(harness, "mariadb_admin", lambda: str(exe))
    c = harness.Cluster(tmp_path / "c")
    assert c._mariadb_ping().returncode == 0
    argv = record.read_text().splitlines()
    assert argv[0] == "--no-defaults" and argv[-1] == "ping"
    assert f"--socket={c.base / 'run' / 'mysql.sock'}" in argv and "--protocol=socket" in argv


def test_mariadb_log_line_of_its_tcp_socket_is_read_for_that_port_only(harness):
    log = ("2026-11-28  3:29:59 0 [Note] Server socket created on IP: '127.0.0.1', "
           "port: '49139'.\n2026-11-28  3:29:59 0 [Note] mariadbd: ready for connections.\n")
    assert harness.mariadb_log_says_listening(log, 49139)
    assert not harness.mariadb_log_says_listening(log, 49140)
    assert not harness.mariadb_log_says_listening("ready for connections", 49139)
