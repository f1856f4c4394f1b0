"""A real multi-node Ray cluster on this machine, for the cluster tests: a head (job server,
no CPUs: it only runs drivers) plus worker nodes started with `ray start --address`, each
with its own ports, one CPU, a small object store and custom resources, all on 127.0.0.1.

Every node's daemons keep the process group of the `ray start` that made them, so a node is
removed by killing its raylet (what a lost machine looks like to Ray) and cleaned up by its
group; the whole cluster is told apart from every other Ray here by its RAY_TMPDIR. Nothing
calls `ray stop`, which would end every Ray on the machine.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from ray_procs import kill_all, ray_processes, short_tmpdir, wait_gone

BIN = Path(sys.executable).parent
RAY = BIN / "ray"
OBJECT_STORE_BYTES = 100 * 1024 * 1024
# a killed raylet is declared dead after period x threshold (default 3 s x 5 + slack)
HEAD_SYSTEM_CONFIG = {"health_check_period_ms": 1000, "health_check_failure_threshold": 3}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Node:
    name: str
    pgid: int  # the process group of its `ray start`: its raylet and agents
    resources: dict[str, float]
    num_cpus: float
    seen: list[psutil.Process] = field(default_factory=list)  # workers leave the group

    def processes(self) -> list[psutil.Process]:
        out = []
        for proc in psutil.process_iter(["name"]):
            try:
                if os.getpgid(proc.pid) == self.pgid:
                    out.append(proc)
            except (ProcessLookupError, psutil.Error):
                continue
        return out

    def raylet(self) -> psutil.Process | None:
        return next((p for p in self.processes() if p.info["name"] == "raylet"), None)

    def remember_workers(self) -> None:
        for proc in self.processes():
            try:
                self.seen.extend(proc.children(recursive=True))
            except psutil.Error:
                pass


@dataclass
class LocalCluster:
    env: dict[str, str]
    workers: dict[str, dict] = field(default_factory=dict)  # name -> num_cpus, resources, env
    # (and num_gpus: fake GPUs)
    ray_tmp: str = field(default_factory=short_tmpdir)
    nodes: dict[str, Node] = field(default_factory=dict)
    head_cpus: float = 0  # drivers only by default: every stage must run on a worker
    head_gpus: int = 0  # fake GPUs (`ray start --num-gpus`): Ray only counts them
    port: int = 0
    dashboard_port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}"

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return self.env | (extra or {}) | {"RAY_TMPDIR": self.ray_tmp}

    def _ray_start(
        self, name: str, args: list[str], resources: dict, cpus: float, env: dict | None = None
    ) -> Node:
        return self._started(self._launch(name, args, env), name, resources, cpus)

    def _launch(self, name: str, args: list[str], env: dict | None) -> subprocess.Popen:
        return subprocess.Popen(
            [str(RAY), "start", *args, "--disable-usage-stats"],
            env=self._env(env),  # a node's workers inherit it
            start_new_session=True,  # the node's daemons keep this process group
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def _started(self, proc: subprocess.Popen, name: str, resources: dict, cpus: float) -> Node:
        out, _ = proc.communicate(timeout=180)
        assert proc.returncode == 0, f"ray start ({name}) failed:\n{out[-3000:]}"
        node = Node(name, proc.pid, resources, cpus)
        self.nodes[name] = node
        return node

    def start(self) -> LocalCluster:
        """The head, then every worker; returns once all nodes are registered."""
        self.port, self.dashboard_port = free_port(), free_port()
        self._ray_start(
            "head",
            [
                "--head",
                "--node-ip-address=127.0.0.1",
                f"--port={self.port}",
                "--dashboard-host=127.0.0.1",
                f"--dashboard-port={self.dashboard_port}",
                f"--dashboard-agent-listen-port={free_port()}",
                f"--num-cpus={self.head_cpus:g}",
                f"--num-gpus={self.head_gpus}",
                f"--object-store-memory={OBJECT_STORE_BYTES}",
                f"--system-config={json.dumps(HEAD_SYSTEM_CONFIG)}",
            ],
            {},
            0,
        )
        launched = {name: self._launch_worker(name) for name in self.workers}
        for name, proc in launched.items():  # started side by side, as machines boot
            self._worker_started(name, proc)
        self.wait_for_nodes(len(self.workers) + 1)
        self.wait_for_job_server()
        return self

    def add_worker(self, name: str) -> Node:
        return self._worker_started(name, self._launch_worker(name))

    def _worker_started(self, name: str, proc: subprocess.Popen) -> Node:
        spec = self.workers[name]
        return self._started(proc, name, dict(spec["resources"]), spec["num_cpus"])

    def _launch_worker(self, name: str) -> subprocess.Popen:
        spec = self.workers[name]
        args = [
            f"--address={self.address}",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={spec['num_cpus']}",
            f"--num-gpus={spec.get('num_gpus', 0)}",  # fake GPUs: Ray only counts them
            f"--resources={json.dumps(dict(spec['resources']))}",
            f"--object-store-memory={OBJECT_STORE_BYTES}",
            # every node's agent listens on 52365 by default: one port per node
            f"--dashboard-agent-listen-port={free_port()}",
            f"--metrics-export-port={free_port()}",
            # its own files, as a machine of its own has: nodes sharing one session
            # folder share its runtime_resources, and there an actor restarted on a new
            # node started in a job's working_dir that had been deleted
            f"--temp-dir={tempfile.mkdtemp(prefix=f'{name}-', dir=self.ray_tmp)}",
        ]
        return self._launch(name, args, spec.get("env"))

    def alive_nodes(self) -> list:
        from ray.util.state import list_nodes

        try:
            return list_nodes(address=self.url, filters=[("state", "=", "ALIVE")], timeout=10)
        except Exception:  # the dashboard is not up yet
            return []

    def wait_for_nodes(self, n: int, bound_s: float = 120) -> None:
        deadline = time.monotonic() + bound_s
        while len(self.alive_nodes()) != n:
            assert time.monotonic() < deadline, f"cluster never had {n} live nodes"
            time.sleep(0.5)

    def wait_for_job_server(self, bound_s: float = 120) -> None:
        deadline = time.monotonic() + bound_s
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/api/version", timeout=5) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            assert time.monotonic() < deadline, f"the job server at {self.url} never answered"
            time.sleep(1)

    def kill_raylet(self, name: str) -> None:
        """Remove a worker node the way a lost machine does: SIGKILL its raylet; its
        workers and agents then die (they are ended here too, so nothing lingers)."""
        node = self.nodes.pop(name)
        node.remember_workers()
        raylet = node.raylet()
        assert raylet is not None, f"node {name} has no raylet"
        raylet.kill()
        self._end(node)

    def _end(self, node: Node) -> None:
        try:
            os.killpg(node.pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for proc in node.seen:
            try:
                proc.kill()
            except psutil.Error:
                pass

    def stop(self) -> None:
        """End every process of this cluster (all nodes, their workers, job drivers)."""
        ours = ray_processes(self.ray_tmp)
        for node in list(self.nodes.values()):
            node.remember_workers()
            ours += node.seen
            self._end(node)
        self.nodes.clear()
        kill_all(self.ray_tmp, ours)
        wait_gone(self.ray_tmp, ours, bound_s=20)

    def restart(self) -> None:
        """The whole cluster down (the head's death ends it) and up again, same folder."""
        self.stop()
        self.start()

    def submit(self, working_dir: Path, entrypoint: str, env: dict[str, str] | None = None) -> str:
        """Submit `entrypoint` as a Ray job (the job API `ray job submit` uses) with the job's
        own `env` (its driver's and workers'), retried while the head's job agent is still
        starting; returns the job id."""
        from ray.job_submission import JobSubmissionClient

        client = JobSubmissionClient(self.url)
        runtime_env = {"working_dir": str(working_dir), "env_vars": env or {}}
        deadline = time.monotonic() + 120
        while True:
            try:
                return client.submit_job(entrypoint=entrypoint, runtime_env=runtime_env)
            except RuntimeError as err:
                if "No available agent" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(2)

    def finish(self, job_id: str, bound_s: float = 300) -> tuple[str, str]:
        """Wait for a job to end; its final status and its log."""
        from ray.job_submission import JobSubmissionClient

        client = JobSubmissionClient(self.url)
        deadline = time.monotonic() + bound_s
        while (status := str(client.get_job_status(job_id))) not in (
            "SUCCEEDED",
            "FAILED",
            "STOPPED",
        ):
            assert time.monotonic() < deadline, f"job {job_id} still {status}"
            time.sleep(1)
        return status, client.get_job_logs(job_id)
