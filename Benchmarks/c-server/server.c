/*
 * The reference for MicroHTTP's benchmark: a plain libmicrohttpd server in C that answers every
 * request with the same small JSON body, configured like MicroHTTP (thread pool of one thread per
 * core, epoll, turbo, suspend/resume allowed). Usage: c-server PORT [BODY_FILE [HEADER ...]]
 * With BODY_FILE, it answers with that file's bytes instead (the page-read and action benchmarks
 * give it the demo's own response body, so that both servers send the same bytes). Each HEADER,
 * "Name: value", is sent after Content-Type (the demo's Cache-Control and X-Content-Type-Options).
 * A request's body (an action's POST) is read and discarded.
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char DEFAULT_BODY[] = "{\"unit\":\"greeting\",\"rev\":0,\"view\":{\"greeting\":\"Say hello to who?\"}}";
static const char *body = DEFAULT_BODY;
static size_t body_size = sizeof(DEFAULT_BODY) - 1;

/* The extra response headers from the command line, split at their ": ". */
#define MAX_EXTRA_HEADERS 8
static char *header_names[MAX_EXTRA_HEADERS];
static const char *header_values[MAX_EXTRA_HEADERS];
static int header_count = 0;

/* Splits "Name: value" into the next extra header; returns 0 on success. */
static int add_header(const char *line) {
    const char *separator = strstr(line, ": ");
    if (separator == NULL || separator == line || header_count == MAX_EXTRA_HEADERS) {
        return -1;
    }
    size_t name_length = (size_t)(separator - line);
    char *name = malloc(name_length + 1);
    if (name == NULL) {
        return -1;
    }
    memcpy(name, line, name_length);
    name[name_length] = '\0';
    header_names[header_count] = name;
    header_values[header_count] = separator + 2;
    header_count += 1;
    return 0;
}

/* Reads the whole file at `path` into `body`; returns 0 on success. */
static int read_body(const char *path) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        return -1;
    }
    char *buffer = NULL;
    size_t size = 0, capacity = 0, count;
    do {
        if (size == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            char *grown = realloc(buffer, capacity);
            if (grown == NULL) {
                free(buffer);
                fclose(file);
                return -1;
            }
            buffer = grown;
        }
        count = fread(buffer + size, 1, capacity - size, file);
        size += count;
    } while (count > 0);
    int failed = ferror(file);
    fclose(file);
    if (failed) {
        free(buffer);
        return -1;
    }
    body = buffer;
    body_size = size;
    return 0;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **request_state) {
    static int first_call_marker;
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    if (*request_state == NULL) {
        /* Like MicroHTTP, answer on the second call: answering on the first disables keep-alive. */
        *request_state = &first_call_marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    struct MHD_Response *response =
        MHD_create_response_from_buffer(body_size, (void *)body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json");
    for (int index = 0; index < header_count; index++) {
        MHD_add_response_header(response, header_names[index], header_values[index]);
    }
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv) {
    unsigned int port = argc > 1 ? (unsigned int)atoi(argv[1]) : 8081;
    if (argc > 2 && read_body(argv[2]) != 0) {
        perror(argv[2]);
        return 1;
    }
    for (int index = 3; index < argc; index++) {
        if (add_header(argv[index]) != 0) {
            fprintf(stderr, "c-server: not a header (Name: value), or too many: %s\n", argv[index]);
            return 1;
        }
    }
    unsigned int threads = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME,
        (uint16_t)port, NULL, NULL, &answer, NULL,
        MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0,
        MHD_OPTION_CONNECTION_LIMIT, 10000u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "c-server: cannot listen on port %u\n", port);
        return 1;
    }
    printf("c-server listening on %u\n", port);
    fflush(stdout);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);
    int received;
    sigwait(&signals, &received);
    MHD_stop_daemon(daemon);
    return 0;
}
