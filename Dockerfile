# prefix-proxy as a container: `docker compose up` (docker-compose.yml) runs it with Prometheus
# and Grafana; docs/observability.md says more.
#
# Build stage: every dependency, then tsc. `npm ci` runs `prepare` (tsc) unless told not to, and
# the sources are not copied yet at that point, so scripts are skipped and the build runs after.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Runtime stage: production dependencies only (again without `prepare`, which needs tsc) and the
# compiled dist/ from the build stage.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PROXY_DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY config.example.toml ./
# Session logs live on the volume; the unprivileged `node` user of the base image owns it.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8787
# The slim image has no curl: node's own fetch asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# A config.toml mounted at /app/config.toml is read; without one, providers come from the
# environment's keys and the built-in simulator serves `sim/...`. Inside the container the proxy
# must listen on 0.0.0.0 to be reached at all, so `--open` says so; who reaches it is the port
# mapping's choice (docker-compose.yml publishes it on 127.0.0.1 only). Add [auth] keys to a
# config before publishing it further.
CMD ["node", "dist/cli/main.js", "serve", "--host", "0.0.0.0", "--data-dir", "/data", "--open"]
