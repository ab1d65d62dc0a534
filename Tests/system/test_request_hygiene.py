"""Request framing and header limits of the real server (docs/HTTP.md, "Framing" and "The epoll engine"),
sent byte for byte over raw sockets."""
import json
import re
import socket
import time

import pytest

SMUGGLED = b"GET /api/units HTTP/1.1\r\nHost: x\r\n\r\n"


def exchange_until_closed(port, raw, timeout=3.0):
    """Sends `raw` and returns (everything received, whether the server closed within `timeout`)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(raw)
        received = b""
        deadline = time.time() + timeout
        while time.time() < deadline:
            connection.settimeout(max(0.01, deadline - time.time()))
            try:
                chunk = connection.recv(65536)
            except socket.timeout:
                return received, False
            except ConnectionResetError:
                return received, True
            if not chunk:
                return received, True
            received += chunk
        return received, False


def status_lines(received):
    return re.findall(rb"(?:^|\r\n\r\n)(HTTP/1\.\d \d{3})", received)


def split_response(received):
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ")[1]), headers, body


@pytest.mark.parametrize("request_bytes, problem", [
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 36\r\n\r\n", "duplicate_content_length"),
    (b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
     "content_length_with_transfer_encoding"),
    (b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
     "unsupported_transfer_encoding"),
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "duplicate_host"),
    (b"GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n", "whitespace_before_colon"),
    (b"POST /healthz HTTP/1.1\r\n Transfer-Encoding: chunked\r\nHost: x\r\n\r\n0\r\n\r\nGET /api/units HTTP/1.1\r\nHost: x\r\n\r\n",
     "invalid_field_name"),
], ids=["two-content-lengths", "te-and-cl", "gzip-chunked", "two-hosts", "space-before-colon", "leading-space"])
def test_ambiguous_framing_is_refused_once_and_the_smuggled_request_never_answered(shared_server, request_bytes,
                                                                                   problem):
    received, closed = exchange_until_closed(shared_server.port, request_bytes + SMUGGLED)
    assert closed, received[:200]
    assert len(status_lines(received)) == 1, received[:400]
    status, headers, body = split_response(received)
    assert status == 400
    assert headers.get("connection") == "close"
    assert headers.get("content-type", "").startswith("application/json")
    error = json.loads(body)["error"]
    assert error["code"] == "malformed_request"
    assert error["details"]["problem"] == problem
    assert b'"units"' not in received


TWENTY_KIB_COOKIE = b"GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: a=" + b"b" * 20480 + b"\r\nConnection: close\r\n\r\n"


def test_a_twenty_kibibyte_cookie_gets_one_answer(start_server):
    # With room for it (MAX_HEADER_BYTES), the library used to send its 431's head twice; now it is served once.
    roomy = start_server({"MAX_HEADER_BYTES": 32768})
    received, closed = exchange_until_closed(roomy.port, TWENTY_KIB_COOKIE)
    assert closed
    assert len(status_lines(received)) == 1, received[:400]
    assert split_response(received)[0] == 200


def test_a_cookie_just_over_the_default_limit_is_one_json_431(shared_server):
    # The default MAX_HEADER_BYTES is 8 KiB; heads up to 4 KiB over it are measured and answered by MicroHTTP.
    raw = b"GET /healthz HTTP/1.1\r\nHost: x\r\nCookie: a=" + b"b" * 10000 + b"\r\nConnection: close\r\n\r\n"
    received, closed = exchange_until_closed(shared_server.port, raw)
    assert closed
    assert len(status_lines(received)) == 1, received[:400]
    status, headers, body = split_response(received)
    assert status == 431
    assert json.loads(body)["error"]["code"] == "header_fields_too_large"


def test_a_head_over_the_limit_is_a_json_431(shared_server):
    raw = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 10000 + b"\r\n\r\n"
    received, closed = exchange_until_closed(shared_server.port, raw)
    assert closed
    assert len(status_lines(received)) == 1, received[:400]
    status, headers, body = split_response(received)
    assert status == 431
    assert headers.get("connection") == "close"
    assert json.loads(body)["error"]["code"] == "header_fields_too_large"


def test_an_unsupported_http_version_is_refused_with_505(shared_server):
    # The server's HTTP engine (MicroHTTP's own, the default) answers it as JSON, and the connection closes.
    received, closed = exchange_until_closed(shared_server.port, b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n")
    assert closed
    assert len(status_lines(received)) == 1
    status, headers, body = split_response(received)
    assert status == 505
    assert headers.get("connection") == "close"
    assert headers.get("content-type") == "application/json"
    assert json.loads(body)["error"]["code"] == "http_version_not_supported"