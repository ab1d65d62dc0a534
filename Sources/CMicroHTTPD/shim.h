#ifndef MVVMR_CMICROHTTPD_SHIM_H
#define MVVMR_CMICROHTTPD_SHIM_H

/*
 * libmicrohttpd for Swift. Swift cannot call C-variadic functions, so the few variadic entry
 * points MicroHTTP needs are wrapped here in small non-variadic functions, all prefixed
 * `mvvmr_mhd_`. Nothing above MicroHTTP sees these.
 */

#include <microhttpd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/epoll.h> /* for ConnectionWatcher (Glibc does not export epoll) */
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <sys/prctl.h>

/* accept4 (declared by <sys/socket.h> only under _GNU_SOURCE; glibc has it): a connection's descriptor made
 * non-blocking and close-on-exec atomically, so that a process spawned meanwhile by another thread never inherits
 * it (and keeps the client's socket open after the server closed its own). */
extern int accept4(int sockfd, struct sockaddr *addr, socklen_t *addrlen, int flags);
static inline int mvvmr_accept_connection(int listening, struct sockaddr *address, socklen_t *length) {
    return accept4(listening, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

/* Names the calling thread (as `comm` in /proc shows it); prctl, since pthread_setname_np needs _GNU_SOURCE. */
static inline void mvvmr_name_current_thread(const char *name) {
    (void)prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/*
 * Leaves the request target exactly as received. MicroHTTP decodes percent escapes itself,
 * segment by segment, so that an encoded `/` (`%2F`) or `..` (`%2e%2e`) can never turn into a
 * path separator or a parent reference after routing decisions were made.
 */
static inline size_t mvvmr_mhd_keep_escaped(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    return strlen(text);
}

/*
 * Installed as MHD_OPTION_URI_LOG_CALLBACK, which libmicrohttpd calls once per request as soon as the
 * request line is parsed, before any header field: adds a `Cookie` field of MicroHTTP's own, which the
 * library therefore lists first. The library parses only the first `Cookie` field it finds, so it parses
 * this short one instead of the client's. libmicrohttpd 0.9.75 copies the field into the connection's
 * pool to split it into cookies, and when the pool runs out there (a large `Cookie`, or thousands of tiny
 * cookies) it sends its 431 with the status line and header fields twice. MicroHTTP parses the client's
 * `Cookie` field itself; `mvvmr_mhd_pack_value` leaves the decoy out. Returns NULL: the request's
 * context is still set by the access handler's first call.
 */
#define MVVMR_MHD_DECOY_COOKIE_NAME "Cookie"
#define MVVMR_MHD_DECOY_COOKIE_VALUE "mvvmr-decoy"
static inline void *mvvmr_mhd_add_decoy_cookie(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls;
    (void)uri;
    (void)MHD_set_connection_value_n(connection, MHD_HEADER_KIND, MVVMR_MHD_DECOY_COOKIE_NAME,
                                     sizeof(MVVMR_MHD_DECOY_COOKIE_NAME) - 1, MVVMR_MHD_DECOY_COOKIE_VALUE,
                                     sizeof(MVVMR_MHD_DECOY_COOKIE_VALUE) - 1);
    return NULL;
}

/* The options MicroHTTP sets when it starts a daemon. */
struct mvvmr_mhd_settings {
    unsigned int flags;
    uint16_t port;
    const struct sockaddr *bind_address; /* NULL: every interface */
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    unsigned int per_ip_connection_limit; /* 0: unlimited */
    unsigned int connection_timeout_seconds;
    size_t connection_memory_limit;
    unsigned int listen_backlog;
    /* Told when each connection starts and closes (NULL: not told); see HTTPServer's deadlines. */
    MHD_NotifyConnectionCallback notify_connection;
    void *notify_connection_context;
};

/* MHD_start_daemon without varargs. */
static inline struct MHD_Daemon *mvvmr_mhd_start_daemon(
    const struct mvvmr_mhd_settings *settings,
    MHD_AccessHandlerCallback access_handler,
    void *access_handler_context,
    MHD_RequestCompletedCallback completed_callback,
    void *completed_context) {
    if (settings->bind_address != NULL) {
        return MHD_start_daemon(settings->flags, settings->port, NULL, NULL,
                                access_handler, access_handler_context,
                                MHD_OPTION_SOCK_ADDR, settings->bind_address,
                                MHD_OPTION_UNESCAPE_CALLBACK, mvvmr_mhd_keep_escaped, (void *)NULL,
                                MHD_OPTION_URI_LOG_CALLBACK, mvvmr_mhd_add_decoy_cookie, (void *)NULL,
                                MHD_OPTION_NOTIFY_COMPLETED, completed_callback, completed_context,
                                MHD_OPTION_THREAD_POOL_SIZE, settings->thread_pool_size,
                                MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit,
                                MHD_OPTION_PER_IP_CONNECTION_LIMIT, settings->per_ip_connection_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, settings->connection_timeout_seconds,
                                MHD_OPTION_CONNECTION_MEMORY_LIMIT, settings->connection_memory_limit,
                                MHD_OPTION_LISTEN_BACKLOG_SIZE, settings->listen_backlog,
                                MHD_OPTION_NOTIFY_CONNECTION, settings->notify_connection,
                                settings->notify_connection_context,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(settings->flags, settings->port, NULL, NULL,
                            access_handler, access_handler_context,
                            MHD_OPTION_UNESCAPE_CALLBACK, mvvmr_mhd_keep_escaped, (void *)NULL,
                            MHD_OPTION_URI_LOG_CALLBACK, mvvmr_mhd_add_decoy_cookie, (void *)NULL,
                            MHD_OPTION_NOTIFY_COMPLETED, completed_callback, completed_context,
                            MHD_OPTION_THREAD_POOL_SIZE, settings->thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, settings->per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, settings->connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, settings->connection_memory_limit,
                            MHD_OPTION_LISTEN_BACKLOG_SIZE, settings->listen_backlog,
                            MHD_OPTION_NOTIFY_CONNECTION, settings->notify_connection,
                            settings->notify_connection_context,
                            MHD_OPTION_END);
}

/* The port the daemon listens on (useful after binding port 0), or 0 when unknown. */
static inline uint16_t mvvmr_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/*
 * Stops a running daemon from accepting connections, for a graceful stop, without
 * MHD_quiesce_daemon: with a thread pool, libmicrohttpd 0.9.75's quiesce races its own worker
 * threads (both remove the listening socket from a worker's epoll set, and the one that finds it
 * already gone aborts the process). Instead the listening socket's descriptor number is pointed,
 * atomically (dup2), at an eventfd that never becomes readable. The listening socket is closed by
 * that: new connections are refused, and the kernel drops it from every epoll set. The library goes
 * on holding a valid descriptor that never wakes a worker, and closes it itself when stopped.
 * Returns 0 on success; -1 when nothing could be done (the daemon then accepts until it stops).
 */
static inline int mvvmr_mhd_stop_listening(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    if (info == NULL || info->listen_fd < 0) return -1;
    int quiet = eventfd(0, EFD_CLOEXEC);
    if (quiet < 0) return -1;
    int result = dup2(quiet, info->listen_fd) < 0 ? -1 : 0;
    if (result == 0) (void)fcntl(info->listen_fd, F_SETFD, FD_CLOEXEC);
    close(quiet);
    return result;
}

/*
 * A connection's values of some kinds (`kinds` is a bitmask of MHD_ValueKind), packed by C into one
 * byte buffer so that Swift reads a request's headers and query parameters with one call and no
 * allocation per value. The decoy `Cookie` field (see `mvvmr_mhd_add_decoy_cookie`) is left out. Each value is written as
 *   kind (1 byte) | key length (4 bytes, host order) | value length (4 bytes; 0xFFFFFFFF: no value)
 *   | key bytes | value bytes
 * in the order the library keeps them. Nothing is written past `capacity`; the return value is the
 * length the whole packing needs, so a caller whose buffer was too small calls again with that size.
 */
struct mvvmr_mhd_value_pack {
    uint8_t *bytes;
    size_t capacity;
    size_t length;
    int header_seen; /* a header field was visited (the decoy cookie can only be the first) */
};

/* Whether a header field is the decoy `mvvmr_mhd_add_decoy_cookie` adds before the client's fields. */
static inline int mvvmr_mhd_is_decoy_cookie(const char *key, size_t key_size, const char *value, size_t value_size) {
    return key_size == sizeof(MVVMR_MHD_DECOY_COOKIE_NAME) - 1 && value != NULL
           && value_size == sizeof(MVVMR_MHD_DECOY_COOKIE_VALUE) - 1
           && memcmp(value, MVVMR_MHD_DECOY_COOKIE_VALUE, value_size) == 0
           && memcmp(key, MVVMR_MHD_DECOY_COOKIE_NAME, key_size) == 0;
}

static inline enum MHD_Result mvvmr_mhd_pack_value(void *context, enum MHD_ValueKind kind, const char *key,
                                                   size_t key_size, const char *value, size_t value_size) {
    struct mvvmr_mhd_value_pack *pack = (struct mvvmr_mhd_value_pack *)context;
    if (key == NULL || key_size > UINT32_MAX - 1 || value_size > UINT32_MAX - 1) return MHD_YES;
    if (kind == MHD_HEADER_KIND && !pack->header_seen) {
        pack->header_seen = 1;
        if (mvvmr_mhd_is_decoy_cookie(key, key_size, value, value_size)) return MHD_YES;
    }
    size_t value_length = value == NULL ? 0 : value_size;
    size_t needed = 9 + key_size + value_length;
    if (pack->length + needed <= pack->capacity) {
        uint8_t *out = pack->bytes + pack->length;
        uint32_t key_field = (uint32_t)key_size;
        uint32_t value_field = value == NULL ? UINT32_MAX : (uint32_t)value_size;
        out[0] = (uint8_t)kind;
        memcpy(out + 1, &key_field, 4);
        memcpy(out + 5, &value_field, 4);
        memcpy(out + 9, key, key_size);
        if (value_length > 0) memcpy(out + 9 + key_size, value, value_length);
    }
    pack->length += needed;
    return MHD_YES;
}

static inline size_t mvvmr_mhd_pack_values(struct MHD_Connection *connection, unsigned int kinds,
                                           uint8_t *bytes, size_t capacity) {
    struct mvvmr_mhd_value_pack pack = {bytes, capacity, 0, 0};
    (void)MHD_get_connection_values_n(connection, (enum MHD_ValueKind)kinds, mvvmr_mhd_pack_value, &pack);
    return pack.length;
}

/*
 * Copies the peer's raw IP address into `bytes` (4 bytes for IPv4, 16 for IPv6).
 * Returns 4 or 16, or 0 when the address is unknown or of another family.
 */
static inline int mvvmr_mhd_client_address_bytes(struct MHD_Connection *connection, uint8_t bytes[16]) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return 0;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        memcpy(bytes, &((const struct sockaddr_in *)address)->sin_addr, 4);
        return 4;
    }
    if (address->sa_family == AF_INET6) {
        memcpy(bytes, &((const struct sockaddr_in6 *)address)->sin6_addr, 16);
        return 16;
    }
    return 0;
}

/*
 * The size of the request's header section, request line and final blank line included, as
 * libmicrohttpd received it; 0 before the header section is complete.
 */
static inline size_t mvvmr_mhd_request_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

/*
 * The socket descriptor of a connection, or -1 when unknown. The descriptor stays the library's: MicroHTTP
 * only ever shuts it down or watches it, and only while the library has not reported the connection closed.
 */
static inline int mvvmr_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/*
 * The pointer MicroHTTP stored in a connection's socket context when the library reported it started
 * (MHD_OPTION_NOTIFY_CONNECTION), or NULL. One switch in the library: cheap enough for every request.
 */
static inline void *mvvmr_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/*
 * Writes an IP address (4 or 16 raw bytes) as text into `buffer`. Returns 1 on success.
 */
static inline int mvvmr_format_ip_address(const uint8_t *bytes, int count, char *buffer, size_t size) {
    if (count == 4) return inet_ntop(AF_INET, bytes, buffer, (socklen_t)size) != NULL;
    if (count == 16) return inet_ntop(AF_INET6, bytes, buffer, (socklen_t)size) != NULL;
    return 0;
}

/*
 * Event streams MicroHTTP serves itself (see EventStream): a duplicate of a connection's socket, so that the
 * library can close its own descriptor and free the connection (its pool above all) while the stream goes on
 * through this one. Close-on-exec, like every descriptor the library opens. Returns -1 on failure.
 */
static inline int mvvmr_duplicate_socket(int descriptor) {
    return fcntl(descriptor, F_DUPFD_CLOEXEC, 0);
}

/*
 * Sends bytes on a stream's socket without blocking and without SIGPIPE (a client that left). Returns the
 * count sent, or -errno (-EAGAIN: the kernel's send buffer is full, wait for EPOLLOUT).
 */
static inline long mvvmr_stream_send(int descriptor, const void *bytes, size_t count) {
    for (;;) {
        ssize_t sent = send(descriptor, bytes, count, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent >= 0) return (long)sent;
        if (errno != EINTR) return -(long)errno;
    }
}

/*
 * Reads and drops what a stream's client sent after its request (nothing, normally), before the stream's socket is
 * closed: closing a socket with unread bytes makes the kernel answer with a reset instead of a FIN, and a client
 * may then lose the stream's last bytes. Bounded (64 KiB), never blocks.
 */
static inline void mvvmr_discard_input(int descriptor) {
    char bytes[4096];
    for (int round = 0; round < 16; round++) {
        ssize_t count = recv(descriptor, bytes, sizeof bytes, MSG_DONTWAIT);
        if (count <= 0 && !(count < 0 && errno == EINTR)) return;
    }
}

/*
 * The current time as an HTTP date (`Tue, 01 Dec 2026 10:00:00 GMT`, RFC 9110), for the `Date` field of a
 * stream's head. Returns its length, 0 on failure.
 */
static inline size_t mvvmr_http_date(char *buffer, size_t size) {
    static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t now = time(NULL);
    struct tm parts;
    if (gmtime_r(&now, &parts) == NULL || parts.tm_wday < 0 || parts.tm_wday > 6 || parts.tm_mon < 0
        || parts.tm_mon > 11) return 0;
    int length = snprintf(buffer, size, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[parts.tm_wday], parts.tm_mday,
                          months[parts.tm_mon], parts.tm_year + 1900, parts.tm_hour, parts.tm_min, parts.tm_sec);
    return length > 0 && (size_t)length < size ? (size_t)length : 0;
}

#endif
