"""The deployment files under deploy/ are consistent and run: docker-compose.yml gives every variable the nginx
template and the NATS configuration read, and the NATS configuration, run as three real nats-servers on loopback
ports exactly as the compose file runs it, forms one JetStream cluster. (No container engine here: the compose
file itself is checked by reading it; the nginx template runs in test_load_balancer.py.)"""
import os
import re

import yaml

from clustering import NatsCluster
from conftest import ROOT

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
    cluster = NatsCluster()
    try:
        views = cluster.wait_formed(timeout=20)
        assert {name for name, _ in views} == {"nats1", "nats2", "nats3"}
        assert all(meta.get("name") == "mvvmr" and meta.get("cluster_size") == 3 for _, meta in views), views
        # One server down: the other two still agree on a leader (JetStream keeps a quorum of two).
        cluster.kill(0)
        survivors = cluster.wait_formed(timeout=20)
        assert {name for name, _ in survivors} == {"nats2", "nats3"}
    finally:
        cluster.stop()
