"""The deployment files under deploy/ are consistent and run: docker-compose.yml gives every variable the nginx
template and the NATS configuration read, and the NATS configuration, run as three real nats-servers on loopback
ports exactly as the compose file runs it, forms one JetStream cluster. (No container engine here: the compose
file itself is checked by reading it; the nginx template runs in test_load_balancer.py.)"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

import pytest
import yaml

from conftest import ROOT, free_port

DEPLOY = os.path.join(ROOT, "deploy")
NATS_CONFIG = os.path.join(DEPLOY, "nats", "nats-server.conf")
NGINX_TEMPLATE = os.path.join(DEPLOY, "nginx", "templates", "mvvmr.conf.template")


def compose():
    with open(os.path.join(DEPLOY, "docker-compose.yml")) as file:
        return yaml.safe_load(file)


def nats_variables():
    with open(NATS_CONFIG) as file:
        text = "\n".join(line.split("#", 1)[0] for line in file)
    return set(re.findall(r"\$([A-Z][A-Z0-9_]*)", text))


def test_compose_gives_every_variable_the_configurations_read():
    services = compose()["services"]
    with open(NGINX_TEMPLATE) as file:
        wanted = set(re.findall(r"\$\{([A-Z0-9_]+)\}", file.read()))
    assert wanted and wanted <= set(services["nginx"]["environment"]), wanted
    assert "./nginx/templates:/etc/nginx/templates:ro" in services["nginx"]["volumes"]
    names = [name for name in services if name.startswith("nats")]
    assert len(names) == 3
    for name in names:
        environment = services[name]["environment"]
        assert nats_variables() <= set(environment), (name, nats_variables() - set(environment))
        assert environment["NATS_SERVER_NAME"] == name
        assert any(volume.startswith("./nats/nats-server.conf:") for volume in services[name]["volumes"])
    routes = {services[name]["environment"][f"NATS_ROUTE_{i}"] for name in names for i in (1, 2, 3)}
    assert routes == {f"nats-route://{name}:6222" for name in names}
    for node in ("node1", "node2", "node3"):
        store = services[node]["environment"]["SESSION_STORE"]
        assert store == "nats://" + ",".join(f"{name}:4222" for name in names)
        assert services[node]["environment"]["NATS_REPLICAS"] == "3"
    upstreams = {services["nginx"]["environment"][f"MVVMR_NODE_{i}"] for i in (1, 2, 3)}
    assert upstreams == {f"node{i}:8080" for i in (1, 2, 3)}


def test_the_nats_configuration_forms_a_three_server_jetstream_cluster():
    if not shutil.which("nats-server"):
        pytest.fail("nats-server is not installed: scripts/install-deps.sh test installs it")
    scratch = tempfile.mkdtemp(prefix="mvvmr-nats-")
    cluster_ports = [free_port() for _ in range(3)]
    monitor_ports = [free_port() for _ in range(3)]
    servers = []
    try:
        for index in range(3):
            environment = dict(os.environ, NATS_SERVER_NAME=f"nats{index + 1}", NATS_HOST="127.0.0.1",
                               NATS_CLIENT_PORT=str(free_port()), NATS_CLUSTER_PORT=str(cluster_ports[index]),
                               NATS_STORE_DIR=os.path.join(scratch, f"nats{index + 1}"))
            for route, port in enumerate(cluster_ports, start=1):
                environment[f"NATS_ROUTE_{route}"] = f"nats-route://127.0.0.1:{port}"
            servers.append(subprocess.Popen(
                ["nats-server", "-c", NATS_CONFIG, "-m", str(monitor_ports[index])], env=environment,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        def view(port):
            """(server name, its view of the JetStream meta cluster), or None while it is not up."""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/varz", timeout=1) as answer:
                    name = json.load(answer)["server_name"]
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/jsz", timeout=1) as answer:
                    return name, json.load(answer).get("meta_cluster", {})
            except OSError:
                return None

        def formed(views):
            if None in views:
                return False
            leaders = {cluster.get("leader") for _, cluster in views}
            if len(leaders) != 1 or None in leaders:
                return False
            leader = next(cluster for name, cluster in views if name == cluster.get("leader"))
            return len(leader.get("replicas", [])) == 2 and all(peer.get("current") for peer in leader["replicas"])

        deadline = time.time() + 20
        views = []
        while time.time() < deadline:
            views = [view(port) for port in monitor_ports]
            if formed(views):
                break
            time.sleep(0.2)
        assert formed(views), views
        assert {name for name, _ in views} == {"nats1", "nats2", "nats3"}
        assert all(cluster.get("name") == "mvvmr" and cluster.get("cluster_size") == 3 for _, cluster in views), views
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(scratch, ignore_errors=True)
