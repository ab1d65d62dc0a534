"""What an event stream holds on the server, and that it lets go of it at once (issue 11).

All on the defaults, so the heartbeat is 15 s: a stream released within a second was not released by a
heartbeat's failed write (the only way the server noticed a departed client before).
"""
import os
import re
import socket
import struct
import time

import pytest

from conftest import EventReader, rss_bytes

IP_BIND_ADDRESS_NO_PORT = 24  # linux/in.h: pick the source port at connect time, not at bind


def gauge(server, name):
    text = server.request("GET", "/metrics").body.decode()
    match = re.search(rf"^{name} (\S+)$", text, re.M)
    assert match, f"{name} not in /metrics"
    return float(match.group(1))


def descriptor_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))




def wait_until(condition, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.mark.parametrize("how", ["fin", "rst"])
def test_a_client_leaving_an_idle_stream_is_released_within_a_second(start_server, how):
    server = start_server()
    pid = server.process.pid
    session = server.new_session()["session"]
    assert gauge(server, "mvvmr_sse_clients") == 0
    time.sleep(0.2)  # the connections of those requests are closed by now
    descriptors_before = descriptor_count(pid)
    reader = EventReader(server.port, session)
    assert reader.status == 200
    assert wait_until(lambda: gauge(server, "mvvmr_sse_clients") == 1, 2)
    # (the /metrics requests' own connections close a moment after they are answered)
    assert wait_until(lambda: descriptor_count(pid) == descriptors_before + 1, 2)
    time.sleep(0.3)  # the stream has sent its first bytes and is idle: its connection is suspended
    if how == "rst":
        reader.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    left_at = time.monotonic()
    reader.close()
    assert wait_until(lambda: gauge(server, "mvvmr_sse_clients") == 0, 1.0), "the stream is still counted"
    assert wait_until(lambda: descriptor_count(pid) == descriptors_before, 1.0), "its descriptor is still open"
    assert time.monotonic() - left_at < 1.0 + 0.1
    assert server.request("GET", "/healthz").status == 200


STREAMS = 1_500
STREAMS_PER_ADDRESS = 50  # under MAX_CONNECTIONS_PER_IP (128) and MAX_STREAMS_PER_IP (64)
STREAMS_PER_SESSION = 4  # under MAX_STREAMS_PER_SESSION (8)
LIMIT_PER_STREAM = 8 * 1024


def open_streams(server, sessions, count, first_address):
    streams = []
    for index in range(count):
        sock = socket.socket()
        sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        sock.bind((f"127.0.{first_address + index // (STREAMS_PER_ADDRESS * 250)}."
                   f"{1 + (index // STREAMS_PER_ADDRESS) % 250}", 0))
        sock.connect(("127.0.0.1", server.port))
        sock.sendall((f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"X-Session-ID: {sessions[index // STREAMS_PER_SESSION]}\r\n"
                      "Accept: text/event-stream\r\n\r\n").encode())
        streams.append(sock)
    for sock in streams:
        sock.settimeout(10)
        head = sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 200"), head[:200]
    return streams


def test_an_idle_stream_costs_at_most_8_kib_of_resident_memory(start_server):
    server = start_server()
    pid = server.process.pid
    sessions = [server.new_session()["session"] for _ in range(STREAMS // STREAMS_PER_SESSION + 1)]
    # Warm up (allocator arenas, the first connections' pages), and let those streams go again.
    for sock in open_streams(server, sessions, 100, first_address=200):
        sock.close()
    assert wait_until(lambda: gauge(server, "mvvmr_sse_clients") == 0, 5)
    time.sleep(0.5)
    before = rss_bytes(pid)
    streams = open_streams(server, sessions, STREAMS, first_address=1)
    try:
        assert wait_until(lambda: gauge(server, "mvvmr_sse_clients") == STREAMS, 10)
        time.sleep(1.0)  # every stream has sent its first bytes and is idle
        after = rss_bytes(pid)
    finally:
        for sock in streams:
            sock.close()
    per_stream = (after - before) / STREAMS
    print(f"{STREAMS} idle streams: RSS {before / 1024:.0f} KiB -> {after / 1024:.0f} KiB, {per_stream:.0f} B each")
    assert per_stream <= LIMIT_PER_STREAM, f"{per_stream:.0f} bytes per idle stream"


def test_a_20_kib_cookie_is_a_clean_431_and_the_server_carries_on(start_server):
    server = start_server()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: big=" + b"c" * 20 * 1024 + b"\r\n\r\n")
        answer = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            answer += chunk
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
    assert b"connection: close" in answer.lower()
    assert server.request("GET", "/healthz").status == 200


def test_a_stream_the_server_ends_closes_with_a_fin_even_after_stray_client_bytes(start_server):
    """Bytes a client sends after its stream request are never read; closing a socket that holds unread bytes makes
    the kernel send a reset, which may cost the client the stream's last events. The server drops them first."""
    server = start_server()
    session = server.new_session()["session"]
    reader = EventReader(server.port, session)
    assert reader.status == 200
    time.sleep(0.2)  # the stream is MicroHTTP's by now
    reader.socket.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
    time.sleep(0.2)
    assert server.request("DELETE", "/api/session", session=session).status == 204
    received = reader.buffer
    reader.socket.settimeout(5)
    try:
        while True:
            chunk = reader.socket.recv(65536)
            if not chunk:
                ending = "fin"
                break
            received += chunk
    except ConnectionResetError:
        ending = "reset"
    finally:
        reader.socket.close()
    assert ending == "fin"
    assert b"event: expired" in received
