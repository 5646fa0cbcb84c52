"""A PostgreSQL cluster of a test's own (``initdb`` in a temporary folder, a free port on
127.0.0.1), which the test may stop and start: the shared server on 5432 is never touched.
"""

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import psycopg2

from .servers import free_port


def postgres_bin():
    """The folder of ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    for name in ("initdb", "pg_ctl"):
        found = shutil.which(name)
        if found:
            return os.path.dirname(found)
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    return folders[0] if folders else None


class PrivateCluster:
    def __init__(self, bindir):
        self.bindir = bindir
        self.port = free_port()
        self.folder = tempfile.mkdtemp(prefix="commerce-pg-")
        self.data = os.path.join(self.folder, "data")
        self.log = os.path.join(self.folder, "server.log")
        # PostgreSQL refuses to run as root: then the cluster belongs to "postgres"
        self.user = "postgres" if os.geteuid() == 0 else None
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)

    def _run(self, *args, timeout=60):
        command = [os.path.join(self.bindir, args[0]), *args[1:]]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        subprocess.run(command, check=True, timeout=timeout, capture_output=True)

    def init(self):
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        return self

    def start(self):
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port}"
            f" -c unix_socket_directories={self.folder} -c fsync=off"
        )
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-o", options, "-w", "start")

    def stop(self):
        self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")

    def url(self, name):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def connect(self, dbname="postgres"):
        return psycopg2.connect(
            dbname=dbname, user="postgres", host="127.0.0.1", port=self.port, connect_timeout=1
        )

    def create_database(self, name):
        conn = self.connect()
        conn.autocommit = True
        try:
            with conn.cursor() as cursor:
                cursor.execute(f'CREATE DATABASE "{name}"')
        finally:
            conn.close()
        return self.url(name)

    def is_ready(self):
        try:
            self.connect().close()
        except psycopg2.OperationalError:
            return False
        return True

    def remove(self):
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def private_cluster():
    """A started cluster of the test's own; removed afterwards, whatever happened."""
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL's initdb is not installed")
    cluster = PrivateCluster(bindir)
    try:
        cluster.init()
        cluster.start()
        deadline = time.monotonic() + 30
        while not cluster.is_ready():
            if time.monotonic() > deadline:
                raise RuntimeError("the private PostgreSQL cluster did not start")
            time.sleep(0.1)
        yield cluster
    finally:
        cluster.remove()
