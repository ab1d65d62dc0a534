# syntax=docker/dockerfile:1
# MVVMR demo server image. Build: docker build -t mvvmr .   Run: docker run --rm -p 8080:8080 mvvmr
# The final stage is checked without a Docker engine by scripts/check-runtime-image.sh (run by the tests),
# which reads this file: keep its package list, COPY lines, user, ENV and ENTRYPOINT in this form.

# --- Build: the official Swift 6 image (bookworm), the headers of libmicrohttpd, SQLite, nats.c and jemalloc, the project's release build.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev libnats-dev libjemalloc-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Benchmarks/Sources ./Benchmarks/Sources
COPY Tests ./Tests
COPY scripts ./scripts
RUN scripts/build-release.sh

# --- Run: only the runtime libraries the binary needs, a non-root user.
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 libnats3.4 libjemalloc2 libstdc++6 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home mvvmr \
    && mkdir -p /srv/mvvmr/data && chown 10001:10001 /srv/mvvmr/data
COPY --from=build /src/.build/image/mvvmr-demo /usr/local/bin/mvvmr-demo
COPY Public /srv/mvvmr/Public
COPY Data /srv/mvvmr/Data
WORKDIR /srv/mvvmr
USER mvvmr
ENV HOST=0.0.0.0 PORT=8080 PUBLIC_DIR=/srv/mvvmr/Public DATA_DIR=/srv/mvvmr/Data LOG_LEVEL=info SESSION_STORE=sqlite:/srv/mvvmr/data/sessions.sqlite
# The sessions' store (one SQLite file and its WAL): mount a volume here so that sessions outlive the container.
VOLUME /srv/mvvmr/data
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/usr/local/bin/mvvmr-demo", "--healthcheck"]
ENTRYPOINT ["/usr/local/bin/mvvmr-demo"]
