# The service's image: `podman build -t petstore .` (or docker build); docs/deployment.md#the-container-image.
# The base is any Debian trixie (or later) image; its nodejs is 20.19.
ARG BASE_IMAGE=debian:trixie-slim

FROM ${BASE_IMAGE} AS build
# A CA bundle for npm behind a TLS-intercepting proxy, mounted into the build (this stage only).
ARG NODE_EXTRA_CA_CERTS
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm libnode-dev python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# better-sqlite3 is compiled against Debian's Node headers: neither a prebuilt binary nor headers are downloaded.
ENV npm_config_nodedir=/usr npm_config_build_from_source=true npm_config_update_notifier=false \
    npm_config_fund=false npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
# The client workspace whole: npm 9 runs a workspace's `prepare` even with --ignore-scripts.
COPY packages/client packages/client
# No scripts: the root's `prepare` compiles sources not copied yet; better-sqlite3 alone needs its build.
RUN npm ci --ignore-scripts && cd node_modules/better-sqlite3 && npm run install
COPY tsconfig.json tsconfig.build.json ./
COPY src src
# Then the production dependencies alone (npm keeps the client workspace's link: a dev dependency),
# and of better-sqlite3 its compiled module alone (not its sources, objects or bundled SQLite: 26 MB).
RUN npm run build && chmod +x dist/cli/main.js \
 && npm prune --omit=dev --ignore-scripts \
 && rm -r node_modules/@petstore && find node_modules -mindepth 1 -maxdepth 1 -type d -empty -delete \
 && cd node_modules/better-sqlite3 && mv build/Release/better_sqlite3.node . && rm -rf build deps src \
 && mkdir -p build/Release && mv better_sqlite3.node build/Release/

FROM ${BASE_IMAGE}
ARG VERSION=1.0.0
ARG SOURCE=
LABEL org.opencontainers.image.title=petstore \
      org.opencontainers.image.source=${SOURCE} \
      org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.licenses=MIT
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs tini \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log \
 && useradd --system --uid 10001 --user-group --home-dir /nonexistent --shell /usr/sbin/nologin petstore \
 && mkdir /data && chown petstore:petstore /data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
RUN ln -s /app/dist/cli/main.js /usr/local/bin/petstore
# Every interface inside the container; the SQLite file on the volume.
ENV NODE_ENV=production HOST=0.0.0.0 METRICS_HOST=0.0.0.0 DATABASE_URL=sqlite:/data/petstore.db
VOLUME /data
EXPOSE 8080 9464
USER petstore
# tini as PID 1: SIGTERM reaches the service (its process group, -g) and exited children are reaped.
ENTRYPOINT ["/usr/bin/tini", "-g", "--"]
CMD ["petstore", "serve"]
