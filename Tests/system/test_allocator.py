"""The demo server runs on jemalloc, not glibc's malloc (Sources/CJemalloc): the start-up line names it, the process
has it mapped, and jemalloc reads the configuration compiled into the binary (a thread caches at most 32 objects per
small size class), which MALLOC_CONF can still override."""
import time

from test_document_headers import wait_for_line


def test_the_server_names_jemalloc_as_its_allocator_and_has_it_mapped(start_server):
    server = start_server()
    assert wait_for_line(server, "(allocator: jemalloc 5."), server.output
    with open(f"/proc/{server.process.pid}/maps") as maps:
        assert "libjemalloc.so" in maps.read()
    # Allocating work goes on as usual on it.
    session = server.new_session({"unit": "counters"})["session"]
    for _ in range(20):
        assert server.act(session, "counters", "increment", 1).status == 200


def wait_for_exit_statistics(server, seconds=15):
    server.stop()
    deadline = time.time() + seconds
    while time.time() < deadline and not any("End jemalloc statistics" in line for line in server.output):
        time.sleep(0.05)
    return "".join(server.output)


def test_jemalloc_reads_the_compiled_in_configuration(start_server):
    # stats_print makes jemalloc print its options when the process exits.
    output = wait_for_exit_statistics(start_server(env={"MALLOC_CONF": "stats_print:true"}))
    assert "opt.tcache_nslots_small_max: 32" in output, output[-2000:]


def test_malloc_conf_overrides_the_compiled_in_configuration(start_server):
    output = wait_for_exit_statistics(start_server(env={"MALLOC_CONF": "stats_print:true,tcache_nslots_small_max:64"}))
    assert "opt.tcache_nslots_small_max: 64" in output, output[-2000:]
