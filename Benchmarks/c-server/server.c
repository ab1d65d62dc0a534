/*
 * The reference for MicroHTTP's benchmark: a plain libmicrohttpd server in C that answers every
 * request with the same small JSON body, configured like MicroHTTP (thread pool of one thread per
 * core, epoll, turbo, suspend/resume allowed). Usage: c-server PORT
 */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char BODY[] = "{\"unit\":\"greeting\",\"rev\":0,\"view\":{\"greeting\":\"Say hello to who?\"}}";

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
        MHD_create_response_from_buffer(sizeof(BODY) - 1, (void *)BODY, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, "Content-Type", "application/json");
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, response);
    MHD_destroy_response(response);
    return result;
}

int main(int argc, char **argv) {
    unsigned int port = argc > 1 ? (unsigned int)atoi(argv[1]) : 8081;
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
