"""Durable sessions (SESSION_STORE, SESSION_DURABILITY): a crash loses no acknowledged input and retries apply
once, a store that cannot write refuses inputs (503 store_unavailable) and recovers by itself, a restore repeats
no async work, and passivated sessions come back as they were.

Every server here runs on a store file the test names, so that a second server can be started on it."""
import collections
import concurrent.futures
import contextlib
import errno
import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import jsonpatch
import pytest

from conftest import EventReader, ROOT, poll


def counter(metrics, name):
    """The value of an unlabelled counter in a /metrics text (0 while it has no sample line)."""
    for line in metrics.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0


def metric(server, name):
    return counter(server.request("GET", "/metrics").body.decode(), name)


def counts(view):
    """The counters page's counts by row id."""
    return {row["id"]: row["count"] for row in view["rows"]}


def expected_counts(rows):
    """The counts after one increment per entry of `rows` (every row of the first page listed, 0 when never)."""
    tally = collections.Counter(rows)
    return {row: tally.get(row, 0) for row in range(1, 11)}


@pytest.fixture
def store_directory():
    """A directory for a store file that outlives the servers started on it; files made immutable are freed."""
    directory = tempfile.mkdtemp(prefix="mvvmr-durable-")
    yield directory
    for name in os.listdir(directory):
        subprocess.run(["chattr", "-i", os.path.join(directory, name)], capture_output=True)
    shutil.rmtree(directory, ignore_errors=True)


def store_settings(directory, durability="process", **more):
    settings = {"SESSION_STORE": "sqlite:" + os.path.join(directory, "sessions.sqlite"), "SESSION_DURABILITY": durability}
    settings.update(more)
    return settings


class KeepAliveClient:
    """One keep-alive connection; a request that fails on it (the server died) drops it, the next one reconnects."""

    def __init__(self, port):
        self.port = port
        self.connection = None

    def post(self, path, body, session, key=None):
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"X-Session-ID": session, "Content-Type": "application/json"}
        if key:
            headers["Idempotency-Key"] = key
        try:
            self.connection.request("POST", path, body=json.dumps(body), headers=headers)
            response = self.connection.getresponse()
            return response.status, dict((name.lower(), value) for name, value in response.getheaders()), json.loads(response.read())
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = None
            raise


class StreamWatcher:
    """Collects a session's SSE events on a thread until the stream ends (or `close()`)."""

    def __init__(self, port, session, last_event_id=None):
        self.reader = EventReader(port, session, last_event_id=last_event_id)
        assert self.reader.status == 200
        self.events = []
        self.closing = False
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.closing:
                try:
                    self.events.append(self.reader.next_event(timeout=30))
                except TimeoutError:
                    continue
        except (EOFError, OSError, ValueError):
            pass
        finally:
            self.ended.set()

    def last_rev(self):
        revs = [event["data"]["rev"] for event in list(self.events) if event["event"] in ("patch", "snapshot")]
        return max(revs, default=-1)

    def close(self):
        self.closing = True
        # A shutdown wakes the thread's recv; a close alone would leave it waiting out its timeout.
        with contextlib.suppress(OSError):
            self.reader.socket.shutdown(socket.SHUT_RDWR)
        self.reader.close()
        self.ended.wait(5)


def replay_events(view, rev, events):
    """A client's copy of the counters page after `events`, from `view` at `rev`: a patch applies only when it is
    newer than the copy (and must then be the next rev), a snapshot replaces the copy."""
    for event in events:
        data = event["data"]
        if event["event"] == "snapshot" and data["unit"] == "counters":
            view, rev = data["view"], data["rev"]
        elif event["event"] == "patch" and data["unit"] == "counters":
            if data["rev"] <= rev:
                continue
            assert data["rev"] == rev + 1, f"a gap in the stream: rev {rev} then a patch to {data['rev']}"
            view, rev = jsonpatch.apply_patch(view, data["patch"]), data["rev"]
        else:
            raise AssertionError(f"unexpected event {event}")
    return view, rev


# MARK: - 1. A crash in the middle of concurrent actions

SESSIONS = 100
ACTIONS = 100
WATCHED = 5
KILL_AFTER_FRACTION = 0.4


class Job:
    """One action: its session, the row it increments, its Idempotency-Key, and every answer it got."""

    def __init__(self, index, session, action):
        self.index = index
        self.session = session
        self.row = 1 + (index + action) % 10
        self.key = uuid.uuid4().hex
        self.answers = []  # (phase, status, headers, body)
        self.failures = 0  # requests that got no answer (the connection broke)

    def ok(self):
        return next((answer for answer in self.answers if answer[1] == 200), None)


@pytest.mark.parametrize("durability", ["process", "machine"])
def test_a_crash_loses_no_acknowledged_action_and_retries_with_their_keys_apply_once(start_server, store_directory,
                                                                                     durability):
    started = time.time()
    settings = store_settings(store_directory, durability)
    server = start_server(settings)
    port = server.port
    sessions = [server.new_session({"unit": "counters"})["session"] for _ in range(SESSIONS)]
    # A few clients watch their session's stream, from the page as it was before any action.
    initial = {}
    watchers = {}
    for session in sessions[:WATCHED]:
        page = server.request("GET", "/api/pages/counters", session=session).json()
        initial[session] = (page["view"], page["rev"], page["seq"])
        watchers[session] = StreamWatcher(port, session)
    # Round robin over the sessions, so that every session is in the middle of its actions at the kill.
    jobs = [Job(index, session, action) for action in range(ACTIONS) for index, session in enumerate(sessions)]
    kill_after = int(len(jobs) * KILL_AFTER_FRACTION)
    killed = threading.Event()
    answered = [0]
    lock = threading.Lock()
    local = threading.local()

    def send(job, phase):
        if not hasattr(local, "client") or local.client.port != port:
            local.client = KeepAliveClient(port)
        try:
            status, headers, body = local.client.post(
                "/api/pages/counters/actions", {"action": "increment", "value": job.row}, job.session, key=job.key)
        except (OSError, http.client.HTTPException):
            job.failures += 1
            return None
        job.answers.append((phase, status, headers, body))
        return status

    def first_attempt(job):
        if killed.is_set():
            return
        if send(job, "before") == 200:
            with lock:
                answered[0] += 1
                if answered[0] == kill_after:
                    server.process.kill()
                    killed.set()

    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(first_attempt, jobs))
    assert killed.is_set()
    server.process.wait(timeout=10)
    killed_at = time.time()
    for watcher in watchers.values():
        assert watcher.ended.wait(5), "a stream did not end with its server"
    acknowledged = [job for job in jobs if job.ok()]
    refused = [answer for job in jobs for answer in job.answers if answer[1] != 200]
    assert not refused, f"answers other than 200 before the kill: {refused[:3]}"
    unanswered = [job for job in jobs if not job.ok()]
    cut_off = sum(1 for job in unanswered if job.failures)  # sent, but the answer never came

    # The same store file, the same port: the clients come back to the sessions they had.
    server = start_server(settings, port=port)
    restarted_at = time.time()
    resumed = {}
    for session, watcher in watchers.items():
        ids = [event["id"] for event in watcher.events]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        last_event_id = ids[-1] if ids else initial[session][2]
        resumed[session] = (last_event_id, StreamWatcher(port, session, last_event_id=last_event_id))

    def retry(job):
        for _ in range(50):
            status = send(job, "after")
            if status == 200:
                return
            time.sleep(0.1)

    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        list(pool.map(retry, unanswered))
    assert all(job.ok() for job in unanswered), "a retried action never got a 200"
    retried_answers = [job.ok() for job in unanswered]
    replayed = sum(1 for answer in retried_answers if answer[2].get("idempotent-replayed") == "true")
    not_ok_after = [answer for job in unanswered for answer in job.answers if answer[0] == "after" and answer[1] != 200]
    assert not not_ok_after, f"retries refused after the restart: {not_ok_after[:3]}"

    # An action acknowledged before the kill, sent again with its key, is answered as it was, not applied again.
    for job in acknowledged[:SESSIONS]:
        status, headers, body = KeepAliveClient(port).post(
            "/api/pages/counters/actions", {"action": "increment", "value": job.row}, job.session, key=job.key)
        assert (status, headers.get("idempotent-replayed")) == (200, "true")
        assert body == job.ok()[3]

    jobs_of = collections.defaultdict(list)
    for job in jobs:
        jobs_of[job.session].append(job)
    for session in sessions:
        page = server.request("GET", "/api/pages/counters", session=session).json()
        # Each action is there exactly once: those acknowledged before the kill and the retried ones alike.
        assert counts(page["view"]) == expected_counts(job.row for job in jobs_of[session])
        assert page["rev"] == ACTIONS
        # Every action has a rev of its own (one change each), and seqs grow with the revs across the restart.
        answers = sorted((job.ok()[3] for job in jobs_of[session]), key=lambda body: body["rev"])
        assert [body["rev"] for body in answers] == list(range(1, ACTIONS + 1))
        seqs = [body["seq"] for body in answers]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        assert page["seq"] >= seqs[-1]
        before = [job.ok()[3]["seq"] for job in jobs_of[session] if job.ok()[0] == "before"]
        fresh = [job.ok()[3]["seq"] for job in jobs_of[session]
                 if job.ok()[0] == "after" and job.ok()[2].get("idempotent-replayed") != "true"]
        if before and fresh:
            assert min(fresh) > max(before), "a seq after the restart went back"

        if session in watchers:
            last_event_id, watcher = resumed[session]
            assert poll(lambda: watcher.last_rev() >= ACTIONS, timeout=10), "the resumed stream stopped short"
            watcher.close()
            ids = [event["id"] for event in watcher.events]
            assert ids and ids[0] > last_event_id and ids == sorted(ids) and len(set(ids)) == len(ids)
            assert not [event for event in watcher.events if event["event"] == "snapshot"], \
                "the restored event log did not reach back to the Last-Event-ID"
            view, rev, _ = initial[session]
            view, rev = replay_events(view, rev, watchers[session].events + watcher.events)
            assert (view, rev) == (page["view"], page["rev"])

    print(f"\n{durability}: {len(acknowledged)} of {len(jobs)} actions acknowledged before the kill "
          f"({killed_at - started:.1f} s), {len(unanswered)} retried ({cut_off} cut off in flight, "
          f"{replayed} of them answered from the restored log), restart {restarted_at - killed_at:.1f} s, "
          f"total {time.time() - started:.1f} s")
    assert time.time() - started < 60


# MARK: - 2. A store that cannot write


@contextlib.contextmanager
def tmpfs(size):
    """A tmpfs of `size` mounted on a fresh directory (we are root), unmounted afterwards."""
    directory = tempfile.mkdtemp(prefix="mvvmr-tmpfs-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", directory], capture_output=True,
                             text=True)
    if mounted.returncode != 0:
        os.rmdir(directory)
        pytest.fail(f"cannot mount a tmpfs to fill ({mounted.stderr.strip()}): the full-store case did not run, "
                    "only the immutable-file one (test_an_immutable_store_file_…) tests a store that cannot write")
    try:
        yield directory
    finally:
        if subprocess.run(["umount", directory], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", directory], capture_output=True)
        os.rmdir(directory)


def fill(directory):
    """Writes a file in `directory` until its file system is full; returns its path."""
    path = os.path.join(directory, "filler")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        for chunk in (b"\0" * (1 << 20), b"\0" * 4096, b"\0"):
            while True:
                try:
                    os.write(descriptor, chunk)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, error
                    break
    finally:
        os.close(descriptor)
    return path


class CountersSession:
    """A counters session whose acknowledged increments are tallied; every action carries its own key."""

    def __init__(self, server):
        self.server = server
        self.session = server.new_session({"unit": "counters"})["session"]
        self.acknowledged = []
        self.refused = []  # (row, key)
        self.sent = 0

    def increment(self, key=None, row=None):
        row = row if row is not None else 1 + self.sent % 10
        self.sent += 1
        key = key or uuid.uuid4().hex
        response = self.server.act(self.session, "counters", "increment", row, headers={"Idempotency-Key": key})
        if response.status == 200:
            self.acknowledged.append(row)
        else:
            self.refused.append((row, key))
        return response

    def page(self):
        response = self.server.request("GET", "/api/pages/counters", session=self.session)
        assert response.status == 200, response
        return response.json()

    def assert_only_acknowledged(self):
        page = self.page()
        assert counts(page["view"]) == expected_counts(self.acknowledged)
        assert page["rev"] == len(self.acknowledged)


def assert_store_unavailable(response):
    assert response.status == 503, response
    assert response.json()["error"]["code"] == "store_unavailable"
    assert response.header("Retry-After")


def assert_refuses_and_recovers(server, sessions, break_store, mend_store):
    """Acknowledged actions, then the store breaks: actions are refused, reads and health go on, nothing refused is
    applied; the store mended, actions go on without a restart, and retried keys apply once."""
    for session in sessions:
        for _ in range(10):
            assert session.increment().status == 200
    break_store()
    first = sessions[0]
    # SQLite may still have room in pages it holds; the store fails once it needs more.
    for _ in range(3000):
        if first.increment().status != 200:
            break
    assert first.refused, f"no action was refused after {first.sent} with the store broken"
    print(f"\nthe first refusal came at action {first.sent - 10} after the store broke")
    assert_store_unavailable(server.act(first.session, "counters", "increment", 1))
    for session in sessions:
        for _ in range(3):
            response = session.increment()
            assert_store_unavailable(response)
    failures = metric(server, "mvvmr_store_failures_total")
    assert failures >= 1 + 1 + 3 * len(sessions)
    assert server.request("GET", "/healthz").status == 200
    for session in sessions:
        session.assert_only_acknowledged()  # reads work, showing exactly what was acknowledged
    assert server.process.poll() is None

    mend_store()
    for session in sessions:
        assert session.increment().status == 200  # no restart needed
        # A refused action may be sent again with its key: it was not kept, so it applies now, once.
        row, key = session.refused[-1]
        again = session.increment(key=key, row=row)
        assert again.status == 200 and again.header("Idempotent-Replayed") is None
        replayed = session.increment(key=key, row=row)
        assert replayed.status == 200 and replayed.header("Idempotent-Replayed") == "true"
        session.acknowledged.pop()  # the replay applied nothing
        session.assert_only_acknowledged()
    return failures


def test_a_full_store_refuses_actions_keeps_reads_and_recovers_when_space_returns(start_server):
    with tmpfs("8m") as directory:
        server = start_server(store_settings(directory))
        try:
            sessions = [CountersSession(server) for _ in range(3)]
            filler = []
            failures = assert_refuses_and_recovers(
                server, sessions, break_store=lambda: filler.append(fill(directory)),
                mend_store=lambda: os.remove(filler[0]))
            assert failures > 0
        finally:
            server.stop()


def test_an_immutable_store_file_refuses_actions_keeps_reads_and_recovers(start_server, store_directory):
    server = start_server(store_settings(store_directory))
    database = os.path.join(store_directory, "sessions.sqlite")
    # As root, chmod stops no write; an immutable file stops every write(2) on descriptors already open, which
    # SQLite reports as an I/O error. The -shm stays writable: SQLite writes it through a shared mapping, and a
    # write fault on an immutable file's page is a SIGBUS, which kills any process using SQLite on it.
    files = [database, database + "-wal"]
    sessions = [CountersSession(server) for _ in range(3)]
    assert all(os.path.exists(path) for path in files + [database + "-shm"]), os.listdir(store_directory)

    def chattr(flag):
        for path in files:
            done = subprocess.run(["chattr", flag, path], capture_output=True, text=True)
            assert done.returncode == 0, f"chattr {flag} {path}: {done.stderr}"

    try:
        assert_refuses_and_recovers(server, sessions, break_store=lambda: chattr("+i"), mend_store=lambda: chattr("-i"))
    finally:
        chattr("-i")


def test_a_store_failing_again_and_again_under_concurrent_actions_keeps_exactly_what_it_acknowledged(
        start_server, store_directory):
    settings = store_settings(store_directory)
    server = start_server(settings)
    database = os.path.join(store_directory, "sessions.sqlite")
    files = [database, database + "-wal"]  # not the -shm: see the test above
    sessions = [server.new_session({"unit": "counters"})["session"] for _ in range(4)]
    answers = []  # (session, row, key, status, code)
    lock = threading.Lock()
    stop = threading.Event()

    def client(number):
        connection = KeepAliveClient(server.port)
        sent = 0
        while not stop.is_set():
            session = sessions[(number + sent) % len(sessions)]
            row = 1 + (number * 3 + sent) % 10
            key = uuid.uuid4().hex
            sent += 1
            status, _, body = connection.post(
                "/api/pages/counters/actions", {"action": "increment", "value": row}, session, key=key)
            with lock:
                answers.append((session, row, key, status, body.get("error", {}).get("code")))

    def chattr(flag):
        for path in files:
            subprocess.run(["chattr", flag, path], check=True, capture_output=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        clients = [pool.submit(client, number) for number in range(8)]
        try:
            for _ in range(10):
                time.sleep(0.1)
                chattr("+i")
                time.sleep(0.1)
                chattr("-i")
        finally:
            chattr("-i")
            stop.set()
        for done in clients:
            done.result()
    outcomes = collections.Counter((status, code) for _, _, _, status, code in answers)
    # Requests that raced a failure get the refusal too, not what the dropped session's released pages say.
    assert set(outcomes) == {(200, None), (503, "store_unavailable")}, outcomes
    acknowledged = collections.defaultdict(list)
    for session, row, _, status, _ in answers:
        if status == 200:
            acknowledged[session].append(row)
    # Nothing refused was kept: sent again with its key, each applies now, for the first time.
    for session, row, key, status, _ in answers:
        if status != 200:
            again = server.act(session, "counters", "increment", row, headers={"Idempotency-Key": key})
            assert again.status == 200 and again.header("Idempotent-Replayed") is None, again
            acknowledged[session].append(row)

    def assert_acknowledged(server):
        for session in sessions:
            page = server.request("GET", "/api/pages/counters", session=session).json()
            assert counts(page["view"]) == expected_counts(acknowledged[session])
            assert page["rev"] == len(acknowledged[session])

    assert_acknowledged(server)
    server.process.kill()
    server.process.wait(timeout=10)
    assert_acknowledged(start_server(settings, port=server.port))


# MARK: - 3. A restore repeats no async work


def test_a_restored_page_shows_its_async_result_without_calling_the_service_again(start_server, store_directory):
    data = os.path.join(store_directory, "data")
    os.mkdir(data)
    shutil.copy(os.path.join(ROOT, "Data", "employees.json"), data)
    settings = store_settings(store_directory, DATA_DIR=data, EMPLOYEE_LATENCY_MS=100)
    server = start_server(settings)
    session = server.new_session({"unit": "employees"})["session"]
    read = lambda: server.request("GET", "/api/pages/employees", session=session).json()
    loaded = poll(lambda: (lambda page: page if page["view"]["status"] == "loaded" else None)(read()))
    assert loaded and loaded["view"]["count"] > 0
    server.process.kill()
    server.process.wait(timeout=10)

    # Without its data file the service can only fail: a restore that called it again would show that.
    os.rename(os.path.join(data, "employees.json"), os.path.join(data, "moved.json"))
    server = start_server(settings, port=server.port)
    restored = read()
    assert (restored["view"], restored["rev"], restored["seq"]) == (loaded["view"], loaded["rev"], loaded["seq"])
    time.sleep(0.5)  # several times the service's latency
    later = read()
    assert (later["view"], later["rev"]) == (loaded["view"], loaded["rev"])

    # A new call does reach the service, and fails.
    reload = server.act(session, "employees", "reload")
    assert reload.status == 200 and reload.json()["rev"] == loaded["rev"] + 1
    failed = poll(lambda: (lambda page: page if page["view"]["status"] == "failed" else None)(read()))
    assert failed, "the reload did not fail without the data file"
    assert "cannot read" in failed["view"]["message"]
    assert failed["view"]["employees"] == loaded["view"]["employees"]  # the list loaded before stays


def test_an_async_call_cut_off_by_a_crash_runs_again_after_the_restart(start_server, store_directory):
    settings = store_settings(store_directory, EMPLOYEE_LATENCY_MS=1000)
    server = start_server(settings)
    session = server.new_session({"unit": "employees"})["session"]
    read = lambda: server.request("GET", "/api/pages/employees", session=session).json()
    assert read()["view"]["status"] == "loading"
    server.process.kill()  # before the service answers: no result in the log
    server.process.wait(timeout=10)
    server = start_server(settings, port=server.port)
    restored = read()
    assert (restored["view"]["status"], restored["rev"]) == ("loading", 0)
    loaded = poll(lambda: (lambda page: page if page["view"]["status"] == "loaded" else None)(read()))
    assert loaded and loaded["view"]["count"] > 0 and loaded["rev"] == 1


# MARK: - 4. Passivation


def test_idle_sessions_leave_memory_and_come_back_as_they_were(start_server, store_directory):
    server = start_server(store_settings(store_directory, PASSIVATE_AFTER_SECONDS=1))
    sessions = [CountersSession(server) for _ in range(5)]
    before = {}
    for index, session in enumerate(sessions):
        for _ in range(index + 2):
            assert session.increment().status == 200
        before[session.session] = session.page()
    assert poll(lambda: metric(server, "mvvmr_session_passivations_total") >= len(sessions), timeout=6), \
        "idle sessions were not passivated"
    assert metric(server, "mvvmr_session_passivations_total") == len(sessions)
    assert metric(server, "mvvmr_sessions_live") == 0
    assert metric(server, "mvvmr_session_restores_total") == 0
    for count, session in enumerate(sessions, start=1):
        page = session.page()
        was = before[session.session]
        assert (page["view"], page["rev"], page["seq"]) == (was["view"], was["rev"], was["seq"])
        assert metric(server, "mvvmr_session_restores_total") == count
        done = session.increment(row=3)
        assert done.status == 200
        assert (done.json()["rev"], done.json()["seq"]) == (was["rev"] + 1, was["seq"] + 1)
        session.assert_only_acknowledged()
