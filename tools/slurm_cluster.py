"""A one-node Slurm cluster on this machine, for the workflow's Slurm test.

    python tools/slurm_cluster.py check            # can one start here? (prints why not)
    python tools/slurm_cluster.py up DIR           # start it, print the environment, wait
    (Ctrl-C stops every daemon it started, by process id)

Debian's packages (``slurmctld``, ``slurmd``, ``slurmdbd``, ``munge``, ``mariadb-server``,
``slurm-client``) provide the programs; everything else lives in one folder: configuration,
state, logs, the MUNGE key and socket, the MariaDB data. Every daemon listens on 127.0.0.1 only,
on ports picked free at start (MariaDB ``--bind-address``, Slurm
``CommunicationParameters=NoCtldInAddrAny,NoInAddrAny`` with every host named ``localhost``).
Where the kernel allows it (root, ``unshare``), the whole cluster lives in a network namespace
of its own that has nothing but a loopback interface (:attr:`Cluster.prefix` runs a command
in it): nothing outside can reach it, and it reaches nothing. Without one, every daemon still
listens on 127.0.0.1 except ``slurmdbd``, which Slurm 22.05 cannot bind to one address (it is
then on every interface, behind MUNGE with a key made for this cluster).
``slurmdbd`` with its MariaDB is there because the Snakemake executor plugin polls ``sacct``.
The daemons run in the foreground as children of this process and are stopped by their process
ids (SIGTERM, then SIGKILL after a grace period); nothing system-wide is started or changed.
MariaDB is ready when ``mariadb-admin ping`` answers on its Unix socket (without the client:
when its log says "ready for connections"), then it must listen on its TCP port, which
``slurmdbd`` uses; a wait that times out says what it waited for and what it last saw. A start
that fails stops what it started and removes the temporary folder it made.

Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAMS = ("munged", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd",
            "sbatch", "sacct", "sacctmgr", "squeue", "scancel", "sinfo", "srun")
PACKAGES = "slurm-wlm slurmctld slurmd slurmdbd slurm-client munge mariadb-server"
CLUSTER = "fusionlib"
NODE = "localhost"


def missing() -> str | None:
    """Why a cluster cannot start here, or None."""
    if sys.platform != "linux":
        return "needs Linux"
    if os.geteuid() != 0:
        return "needs root (slurmd starts jobs, munged and slurmdbd run as the Slurm user)"
    absent = [p for p in PROGRAMS if shutil.which(p, path=_path()) is None]
    if absent:
        return (f"programs not installed: {', '.join(absent)} (Debian: apt-get install "
                f"{PACKAGES})")
    return None


def _path() -> str:
    return os.environ.get("PATH", "") + ":/usr/sbin:/sbin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


#: the line MariaDB logs once it accepts connections ("... mariadbd: ready for connections.")
MARIADB_READY = "ready for connections"


def mariadb_log_says_ready(log: str) -> bool:
    """Whether a MariaDB error log (``--log-error``) says the server accepts connections."""
    return MARIADB_READY in log


def mariadb_log_says_listening(log: str, port: int) -> bool:
    """Whether a MariaDB error log says it created its TCP socket on 127.0.0.1:``port``
    ("Server socket created on IP: '127.0.0.1', port: '<port>'.")."""
    return f"IP: '127.0.0.1', port: '{port}'" in log


def mariadb_admin() -> str | None:
    """MariaDB's admin client (``mariadb-admin``, formerly ``mysqladmin``), or None."""
    for name in ("mariadb-admin", "mysqladmin"):
        found = shutil.which(name, path=_path())
        if found:
            return found
    return None


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 4096


class Cluster:
    """A one-node cluster in ``base`` (a short path: sockets live there); use as a context
    manager, or call :meth:`start` and :meth:`stop`."""

    def __init__(self, base: str | os.PathLike[str] | None = None, cpus: int | None = None):
        #: a temporary folder made here is removed when :meth:`start` fails (a given one stays)
        self.owns_base = base is None
        self.base = Path(base or tempfile.mkdtemp(prefix="fl-slurm-", dir="/tmp"))
        self.cpus = cpus or os.cpu_count() or 1
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.ports = {k: _free_port() for k in ("db", "dbd", "ctld", "d")}
        self.conf = self.base / "etc" / "slurm.conf"
        #: what to put before a command to run it inside the cluster's network namespace
        self.prefix: list[str] = []

    # ------------------------------------------------------------------ environment
    @property
    def env(self) -> dict[str, str]:
        """The environment for Slurm's client commands (sbatch, sacct, ...): ``SLURM_CONF``
        names this cluster's configuration, and ``PATH`` starts with the cluster's ``bin``
        (see :meth:`_write_srun_wrapper`)."""
        return {**os.environ, "SLURM_CONF": str(self.conf),
                "PATH": f"{self.base / 'bin'}:{_path()}"}

    def _write_srun_wrapper(self) -> None:
        """``<base>/bin/srun``: srun with this cluster's ``SLURM_CONF``. A real cluster keeps
        slurm.conf in /etc/slurm; this one keeps it in its folder, and the job side of the
        Snakemake plugin starts ``srun`` with every ``SLURM_*`` variable removed."""
        wrapper = self.base / "bin" / "srun"
        real = shutil.which("srun", path=_path())
        wrapper.write_text(f'#!/bin/sh\nSLURM_CONF="{self.conf}" exec "{real}" "$@"\n')
        wrapper.chmod(0o755)

    def run(self, *cmd: str, check: bool = True) -> str:
        done = subprocess.run([*self.prefix, *cmd], env=self.env, capture_output=True,
                              text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr}")
        return done.stdout

    # ------------------------------------------------------------------ lifecycle
    def _spawn(self, name: str, cmd: list[str]) -> None:
        log = open(self.base / "log" / f"{name}.out", "ab")  # noqa: SIM115 - kept by the child
        proc = subprocess.Popen([*self.prefix, *cmd], env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        self.procs.append((name, proc))

    def _wait(self, what: str, ready, timeout: float = 180.0, why=None) -> None:
        """Poll ``ready()`` until it is true; a daemon that exits, or ``timeout`` seconds
        passing, raises with the daemons' log tails (``why()``: what the last poll saw)."""
        start = time.monotonic()
        while not ready():
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}) while waiting for "
                                       f"{what}:\n{self._tail(name)}")
            if time.monotonic() - start > timeout:
                seen = f" ({why()})" if why is not None else ""
                raise RuntimeError(
                    f"timed out after {timeout:.0f} s waiting for {what}{seen}; load average "
                    f"{os.getloadavg()[0]:.1f}. Daemon logs in {self.base / 'log'}:\n"
                    + "\n".join(self._tail(n) for n, _ in self.procs))
            time.sleep(0.2)

    def _tail(self, name: str) -> str:
        text = ""
        for f in sorted((self.base / "log").glob(f"{name}*")):
            text += f"--- {f.name}\n" + f.read_text(errors="replace")[-2000:]
        return text

    def start(self) -> Cluster:
        """Start every daemon and wait for the node. On any failure (a daemon that exits, a
        timeout, Ctrl-C) every daemon started so far is stopped and a temporary folder made by
        this object is removed before the error propagates."""
        try:
            why = missing()
            if why:
                raise RuntimeError(why)
            for sub in ("etc", "log", "munge", "db", "state", "spool", "run", "bin"):
                (self.base / sub).mkdir(parents=True, exist_ok=True)
            self._write_srun_wrapper()
            self._isolate()
            self._start_munge()
            self._start_mariadb()
            self._write_slurm_conf()
            self._start_slurmdbd()
            self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
            self._spawn("slurmd", ["slurmd", "-D", "-N", NODE, "-f", str(self.conf)])
            self._wait("the node to be idle", lambda: "idle" in self.run(
                "sinfo", "-h", "-o", "%T", check=False))
        except BaseException:
            try:
                self.stop()
            finally:
                if self.owns_base:
                    shutil.rmtree(self.base, ignore_errors=True)
            raise
        return self

    def _isolate(self) -> None:
        """Make a network namespace with only loopback, held by a sleeping process, if the
        kernel lets us; the daemons and clients then run in it (``nsenter``)."""
        if not (shutil.which("unshare") and shutil.which("nsenter")
                and shutil.which("ip", path=_path())):
            return
        self._spawn("netns", ["unshare", "--net", "--", "sleep", "infinity"])
        holder = self.procs[-1][1]
        prefix = ["nsenter", f"--net=/proc/{holder.pid}/ns/net", "--"]
        deadline = time.monotonic() + 10
        while holder.poll() is None and time.monotonic() < deadline:
            # loopback up, and one more address on it: getaddrinfo(AI_ADDRCONFIG), which the
            # daemons use to listen, finds no IPv4 when loopback's 127.0.0.1 is all there is
            up = subprocess.run([*prefix, "sh", "-c", "ip link set lo up && ip addr add "
                                 "169.254.254.1/32 dev lo"], env=self.env, capture_output=True)
            if up.returncode == 0:
                self.prefix = prefix
                return
            time.sleep(0.1)
        self.stop()  # not allowed here: the host network, on 127.0.0.1

    @property
    def isolated(self) -> bool:
        """Whether the cluster has a network namespace of its own."""
        return bool(self.prefix)

    def _listening(self, port: int) -> bool:
        if not self.prefix:
            return _listening(port)
        probe = ("import socket,sys; s=socket.socket(); s.settimeout(0.5); "
                 f"sys.exit(s.connect_ex(('127.0.0.1', {port})))")
        return subprocess.run([*self.prefix, sys.executable, "-c", probe],
                              capture_output=True).returncode == 0

    def _start_munge(self) -> None:
        key = self.base / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        self.munge_socket = self.base / "munge" / "munge.socket"
        self._spawn("munged", [
            "munged", "--foreground", "--force", f"--key-file={key}",
            f"--socket={self.munge_socket}", f"--pid-file={self.base / 'run' / 'munged.pid'}",
            f"--log-file={self.base / 'log' / 'munged.log'}",
            f"--seed-file={self.base / 'munge' / 'munged.seed'}"])
        self._wait("the MUNGE socket", self.munge_socket.exists)

    def _start_mariadb(self) -> None:
        data = self.base / "db"
        subprocess.run([*self.prefix, "mariadb-install-db", "--no-defaults",
                        f"--datadir={data}", "--user=root", "--skip-test-db",
                        "--auth-root-authentication-method=normal"],
                       env=self.env, check=True, capture_output=True, timeout=120)
        self._spawn("mariadb", [
            "mariadbd", "--no-defaults", f"--datadir={data}", "--user=root",
            "--bind-address=127.0.0.1", f"--port={self.ports['db']}", "--skip-grant-tables",
            f"--socket={self.mariadb_socket}",
            f"--pid-file={self.base / 'run' / 'mariadb.pid'}",
            f"--log-error={self.base / 'log' / 'mariadb.log'}"])
        self._wait("MariaDB to answer on its socket", self._mariadb_ready,
                   why=self._mariadb_state)
        # slurmdbd connects over TCP: the server that answers on its socket must listen there too.
        # A probe of the port, or MariaDB's own log line saying it created that TCP socket (a
        # probe has been seen to miss a port the server had bound, under load)
        port = self.ports["db"]

        def tcp_ready() -> bool:
            log = self.base / "log" / "mariadb.log"
            said = log.is_file() and mariadb_log_says_listening(
                log.read_text(errors="replace"), port)
            return said or self._listening(port)

        self._wait(f"MariaDB to listen on 127.0.0.1:{port} (it answers on its socket)",
                   tcp_ready, timeout=30.0)

    @property
    def mariadb_socket(self) -> Path:
        return self.base / "run" / "mysql.sock"

    def _mariadb_ping(self) -> subprocess.CompletedProcess | None:
        """``mariadb-admin ping`` on the server's Unix socket (None without the client):
        exit status 0 once the server accepts connections, the real readiness."""
        admin = mariadb_admin()
        if admin is None:
            return None
        try:
            return subprocess.run([admin, "--no-defaults", "--protocol=socket",
                                   f"--socket={self.mariadb_socket}", "--user=root",
                                   "--connect-timeout=5", "ping"], env=self.env,
                                  capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as exc:  # a loaded machine: poll again
            return subprocess.CompletedProcess(exc.cmd, 124, "", "ping timed out after 30 s")

    def _mariadb_log(self) -> str:
        log = self.base / "log" / "mariadb.log"
        return log.read_text(errors="replace") if log.is_file() else ""

    def _mariadb_ready(self) -> bool:
        """MariaDB accepts connections: ``mariadb-admin ping`` on its socket succeeds (or,
        without the admin client, its log says "ready for connections")."""
        ping = self._mariadb_ping()
        if ping is None:
            return mariadb_log_says_ready(self._mariadb_log())
        return ping.returncode == 0

    def _mariadb_state(self) -> str:
        """What the last readiness poll saw, for the timeout message."""
        said = ("its log says ready for connections" if mariadb_log_says_ready(
            self._mariadb_log()) else "its log does not say ready for connections")
        ping = self._mariadb_ping()
        if ping is None:
            return f"{said}; no mariadb-admin to ping it"
        out = (ping.stdout + ping.stderr).strip().splitlines()
        return (f"{said}; mariadb-admin ping on {self.mariadb_socket} exited "
                f"{ping.returncode}: {out[-1] if out else 'no output'}")

    def _write_slurm_conf(self) -> None:
        auth = f"AuthType=auth/munge\nAuthInfo=socket={self.munge_socket}\n"
        b, p = self.base, self.ports
        self.conf.write_text(
            f"ClusterName={CLUSTER}\nSlurmctldHost={NODE}\n{auth}"
            "CommunicationParameters=NoCtldInAddrAny,NoInAddrAny\n"
            f"SlurmctldPort={p['ctld']}\nSlurmdPort={p['d']}\n"
            "SlurmUser=root\nSlurmdUser=root\n"
            f"StateSaveLocation={b / 'state'}\nSlurmdSpoolDir={b / 'spool'}\n"
            f"SlurmctldPidFile={b / 'run' / 'slurmctld.pid'}\n"
            f"SlurmdPidFile={b / 'run' / 'slurmd.pid'}\n"
            f"SlurmctldLogFile={b / 'log' / 'slurmctld.log'}\n"
            f"SlurmdLogFile={b / 'log' / 'slurmd.log'}\n"
            "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
            "JobAcctGatherType=jobacct_gather/none\nMpiDefault=none\nSwitchType=switch/none\n"
            "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\nReturnToService=2\n"
            "SchedulerType=sched/backfill\nMinJobAge=300\nKillWait=5\n"
            f"AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost={NODE}\n"
            f"AccountingStoragePort={p['dbd']}\nJobCompType=jobcomp/none\n"
            # the MUNGE socket of connections to slurmdbd (sacct, sacctmgr, slurmctld)
            f"AccountingStoragePass={self.munge_socket}\n"
            f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={self.cpus} "
            f"RealMemory={_memory_mb()} State=UNKNOWN\n"
            f"PartitionName=main Nodes={NODE} Default=YES MaxTime=INFINITE State=UP\n")
        dbd = self.conf.with_name("slurmdbd.conf")
        dbd.write_text(
            f"{auth}DbdHost={NODE}\nDbdPort={p['dbd']}\nSlurmUser=root\n"
            f"PidFile={b / 'run' / 'slurmdbd.pid'}\nLogFile={b / 'log' / 'slurmdbd.log'}\n"
            "StorageType=accounting_storage/mysql\nStorageHost=127.0.0.1\n"
            f"StoragePort={p['db']}\nStorageUser=root\nStorageLoc=slurm_acct_db\n")
        dbd.chmod(0o600)

    def _start_slurmdbd(self) -> None:
        self._spawn("slurmdbd", ["slurmdbd", "-D"])
        self._wait("slurmdbd", lambda: self._listening(self.ports["dbd"]))
        self._wait("the cluster in the accounting database", lambda: subprocess.run(
            [*self.prefix, "sacctmgr", "-i", "add", "cluster", CLUSTER], env=self.env,
            capture_output=True, timeout=30).returncode == 0 or CLUSTER in self.run(
            "sacctmgr", "-n", "-P", "list", "cluster", "format=cluster", check=False))

    def stop(self, grace: float = 15.0) -> None:
        """Cancel every job, then stop the daemons this object started (newest first) by their
        process ids."""
        if any(n == "slurmctld" and p.poll() is None for n, p in self.procs):
            with contextlib.suppress(Exception):
                self.run("scancel", "--full", "-u", "root", check=False)
        for _name, proc in reversed(self.procs):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=grace)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        self.procs.clear()
        self.prefix = []

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        why = missing()
        print(why or "ok")
        return 1 if why else 0
    if argv[:1] == ["up"] and len(argv) == 2:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill PID stops it too
        with Cluster(argv[1]) as c:
            where = (f"in the network namespace of process {c.procs[0][1].pid}: prefix "
                     f"commands with {' '.join(c.prefix)}" if c.isolated else "on 127.0.0.1")
            print(f"export SLURM_CONF={c.conf}\ncluster up {where}; Ctrl-C or kill "
                  f"{os.getpid()} stops it", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(3600)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
