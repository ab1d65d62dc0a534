"""A real three-server NATS cluster with JetStream, run from the project's own deploy/nats/nats-server.conf (the
file docker-compose.yml uses) with loopback ports filled in through the environment, as the compose file fills in
container names. Used by Tests/system/test_deploy_files.py and scripts/check-cluster.sh."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

from conftest import ROOT, free_port

NATS_CONFIG = os.path.join(ROOT, "deploy", "nats", "nats-server.conf")


class NatsCluster:
    """Three nats-servers on 127.0.0.1, each with its client, cluster and monitoring port and its own store
    directory; `url` is what `SESSION_STORE` takes."""

    def __init__(self, size=3):
        if not shutil.which("nats-server"):
            raise RuntimeError("nats-server is not installed: scripts/install-deps.sh test installs it")
        self.scratch = tempfile.mkdtemp(prefix="mvvmr-nats-")
        self.names = [f"nats{index + 1}" for index in range(size)]
        self.client_ports = [free_port() for _ in range(size)]
        self.cluster_ports = [free_port() for _ in range(size)]
        self.monitor_ports = [free_port() for _ in range(size)]
        self.processes = [None] * size
        for index in range(size):
            self.start(index)

    @property
    def url(self):
        return "nats://" + ",".join(f"127.0.0.1:{port}" for port in self.client_ports)

    def environment(self, index):
        environment = dict(os.environ, NATS_SERVER_NAME=self.names[index], NATS_HOST="127.0.0.1",
                           NATS_CLIENT_PORT=str(self.client_ports[index]),
                           NATS_CLUSTER_PORT=str(self.cluster_ports[index]),
                           NATS_STORE_DIR=os.path.join(self.scratch, self.names[index]))
        for route, port in enumerate(self.cluster_ports, start=1):
            environment[f"NATS_ROUTE_{route}"] = f"nats-route://127.0.0.1:{port}"
        return environment

    def start(self, index):
        """Starts (or starts again, on its store directory) server `index`."""
        self.processes[index] = subprocess.Popen(
            ["nats-server", "-c", NATS_CONFIG, "-m", str(self.monitor_ports[index])], env=self.environment(index),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kill(self, index, sig=signal.SIGKILL):
        process = self.processes[index]
        if process and process.poll() is None:
            process.send_signal(sig)
            process.wait(timeout=10)

    def view(self, index):
        """(server name, its view of the JetStream meta cluster), or None while it does not answer."""
        port = self.monitor_ports[index]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/varz", timeout=1) as answer:
                name = json.load(answer)["server_name"]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/jsz", timeout=1) as answer:
                return name, json.load(answer).get("meta_cluster", {})
        except OSError:
            return None

    def stream_leader(self, stream):
        """The index of the server that leads `stream` now (as the first answering server sees it), or None."""
        for index in range(len(self.names)):
            if self.processes[index].poll() is not None:
                continue
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor_ports[index]}/jsz?streams=true",
                                            timeout=1) as answer:
                    status = json.load(answer)
            except OSError:
                continue
            for account in status.get("account_details", []):
                for detail in account.get("stream_detail", []):
                    if detail.get("name") == stream:
                        leader = detail.get("cluster", {}).get("leader")
                        return self.names.index(leader) if leader in self.names else None
        return None

    def meta_leader(self):
        """The index of the server that leads the JetStream meta cluster now, or None."""
        for view in self.views():
            if view and view[1].get("leader") in self.names:
                return self.names.index(view[1]["leader"])
        return None

    def views(self):
        return [self.view(index) for index in range(len(self.names)) if self.processes[index].poll() is None]

    @staticmethod
    def formed(views, size):
        """Whether `views` agree on one leader that sees at least `size - 1` up-to-date peers (a server that was
        killed stays listed, not current), and on the cluster's size. A server can follow the leader while it still
        counts one peer fewer (seen once in CI: nats1 at cluster_size 2 beside two servers at 3), so the size is
        agreed too."""
        if len(views) < size or None in views:
            return False
        leaders = {cluster.get("leader") for _, cluster in views}
        if len(leaders) != 1 or None in leaders:
            return False
        sizes = {cluster.get("cluster_size") for _, cluster in views}
        if len(sizes) != 1 or not isinstance(next(iter(sizes)), int) or next(iter(sizes)) < size:
            return False
        leader = next((cluster for name, cluster in views if name == cluster.get("leader")), None)
        return bool(leader) and sum(1 for peer in leader.get("replicas", []) if peer.get("current")) >= size - 1

    def wait_formed(self, timeout=30):
        """Waits until every running server agrees on the cluster; returns the views."""
        running = sum(1 for process in self.processes if process.poll() is None)
        deadline = time.time() + timeout
        views = []
        while time.time() < deadline:
            views = self.views()
            if self.formed(views, running):
                return views
            time.sleep(0.2)
        raise AssertionError(f"the NATS cluster did not form: {views}")

    def stop(self):
        for index in range(len(self.processes)):
            process = self.processes[index]
            if process and process.poll() is None:
                process.terminate()
        for process in self.processes:
            if process:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        shutil.rmtree(self.scratch, ignore_errors=True)
