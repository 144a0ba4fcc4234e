# logdrain: one image for the API (`serve`), the workers (`worker`) and the all-in-one `start`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update -qq && apt-get install -y -qq python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
# The commit `logdrain --version` and logdrain_build_info report (docker build --build-arg LOGDRAIN_COMMIT=$(git rev-parse --short=12 HEAD)).
ARG LOGDRAIN_COMMIT=unknown
RUN LOGDRAIN_COMMIT=$LOGDRAIN_COMMIT npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# The openssl CLI makes `logdrain receiver`'s self-signed certificate (the compose demo receiver);
# the slim image does not carry it.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends openssl && rm -rf /var/lib/apt/lists/*
# glibc's allocator: at most two arenas, and buffers of 128 KB or more (Kafka fetches, batch bodies)
# mapped and unmapped on their own, not kept in arenas after they are freed. Measured with
# `npm run bench:e2e`: 20 to 30 MB less peak RSS for a worker at full speed, no CPU cost.
ENV MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
# V8's young generation: semi-spaces of at most 4 MB instead of 16. A worker's garbage is mostly
# short-lived (decoded messages, encoded bodies): a smaller nursery collects it sooner, measured with
# `npm run bench:e2e` as 30 to 40 MB less peak RSS at full speed, records per CPU-second unchanged.
ENV NODE_OPTIONS=--max-semi-space-size=4
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY schemas ./schemas
# The drain health page's files, served at /ui/ (src/api/health-page.ts).
COPY ui ./ui
# The embedded store of `start` (the default command) lives in a volume its non-root user owns;
# serve and worker use Postgres and never write here.
ENV DATA_DIR=/app/data
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080 9464
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["start"]
