"""A real nginx (Debian's package) in front of MVVMR nodes, run from the project's own configuration
(deploy/nginx/templates/mvvmr.conf.template, the file docker-compose.yml uses) with loopback addresses filled in.
It listens on a free loopback port, keeps everything it writes in a temporary directory, and is stopped at the
end."""
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from conftest import ROOT, free_port

TEMPLATE = os.path.join(ROOT, "deploy", "nginx", "templates", "mvvmr.conf.template")

MAIN_CONFIG = """daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    include {dir}/mvvmr.conf;
}}
"""


def fill_template(text, values):
    """Replaces every ${NAME} of `text` with values[NAME], as the nginx image's envsubst does; a name without a
    value is an error (a half-filled file would start an nginx that routes nowhere)."""
    missing = sorted(set(re.findall(r"\$\{([A-Z0-9_]+)\}", text)) - set(values))
    if missing:
        raise KeyError(f"no value for {missing}")
    return re.sub(r"\$\{([A-Z0-9_]+)\}", lambda match: str(values[match.group(1)]), text)


class Nginx:
    """nginx proxying to `nodes` (ports on 127.0.0.1, exactly as many as the template names)."""

    def __init__(self, node_ports):
        if not shutil.which("nginx"):
            raise RuntimeError("nginx is not installed: scripts/install-deps.sh test installs it")
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="mvvmr-nginx-")
        values = {f"MVVMR_NODE_{index + 1}": f"127.0.0.1:{port}" for index, port in enumerate(node_ports)}
        values["MVVMR_PROXY_LISTEN"] = f"127.0.0.1:{self.port}"
        with open(TEMPLATE) as template, open(os.path.join(self.dir, "mvvmr.conf"), "w") as filled:
            filled.write(fill_template(template.read(), values))
        with open(os.path.join(self.dir, "nginx.conf"), "w") as main:
            main.write(MAIN_CONFIG.format(dir=self.dir))
        command = ["nginx", "-p", self.dir, "-c", os.path.join(self.dir, "nginx.conf"), "-e", os.path.join(self.dir, "error.log")]
        checked = subprocess.run(command + ["-t"], capture_output=True, text=True)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx -t refused the configuration:\n{checked.stderr}")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"nginx did not start: {self.error_log()}")

    def error_log(self):
        try:
            with open(os.path.join(self.dir, "error.log")) as log:
                return log.read()
        except OSError:
            return ""

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # fast shutdown: open event streams are cut
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
