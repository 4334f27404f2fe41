# syntax=docker/dockerfile:1
# One image per service: `docker build --target <service> .` with <service>
# one of accounts, contacts, meetings, availability, invites, webhooks,
# ai-ranking, dashboard, gateway. Each image holds its own workspace, the
# workspaces it depends on and their production dependencies, nothing of
# another service (deploy/productionFolder.ts picks them).
# Each CMD preloads the OpenTelemetry SDK (configured by the OTEL_* variables)
# there rather than in NODE_OPTIONS, which the health check's node would inherit.

# The current Node.js LTS (26, LTS since 2026-10-28). Every dependency's
# declared engines must accept it: deploy/test checks the lock file against it.
ARG NODE_IMAGE=node:26-slim

# The package manifests alone, at their paths, so the dependency layers below
# are rebuilt only when a manifest or the lock file changes.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && find . -maxdepth 3 -name package.json -exec cp --parents {} /manifests/ \; \
 && cp package-lock.json /manifests/

# Compile every workspace (tsc -b follows the project references) and gather
# the dist folders at their paths.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx tsc -b \
 && mkdir /out \
 && cp -r --parents proto/dist libs/*/dist services/*/dist /out/

# Every workspace's production dependencies and compiled JavaScript, then one
# folder per service cut from them: its workspace, the workspaces it depends
# on, and only the packages their production code can reach.
FROM ${NODE_IMAGE} AS production
WORKDIR /app
COPY --from=manifests /manifests/ ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /out/ ./
COPY --from=build /app/deploy/productionFolder.ts /tools/
RUN for service in accounts contacts meetings availability dashboard invites webhooks ai-ranking gateway; do \
      node /tools/productionFolder.ts "$service" /app "/services/$service" || exit 1; \
    done

# What every service's image shares: no TypeScript, no dev tools, files owned
# by root so the service cannot change its own code.
FROM ${NODE_IMAGE} AS service
ENV NODE_ENV=production
WORKDIR /app
# The node user of the official image, by number so Kubernetes can check
# runAsNonRoot. Nothing is written outside /tmp (a tmpfs when read-only).
USER 1000:1000
# Health and metrics: /livez, /readyz, /metrics.
EXPOSE 9464

FROM service AS accounts
COPY --from=production /services/accounts/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/accounts/dist/main.js"]

FROM service AS contacts
COPY --from=production /services/contacts/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/contacts/dist/main.js"]

FROM service AS meetings
COPY --from=production /services/meetings/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/meetings/dist/main.js"]

FROM service AS availability
COPY --from=production /services/availability/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/availability/dist/main.js"]

FROM service AS dashboard
COPY --from=production /services/dashboard/ ./
# Its pages, besides the health port.
EXPOSE 8081
CMD ["node", "--import", "@sched/telemetry/register", "services/dashboard/dist/main.js"]

FROM service AS invites
COPY --from=production /services/invites/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/invites/dist/main.js"]

FROM service AS webhooks
COPY --from=production /services/webhooks/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/webhooks/dist/main.js"]

FROM service AS ai-ranking
COPY --from=production /services/ai-ranking/ ./
CMD ["node", "--import", "@sched/telemetry/register", "services/ai-ranking/dist/main.js"]

# The gateway comes last, so a plain `docker build .` produces it.
FROM service AS gateway
COPY --from=production /services/gateway/ ./
EXPOSE 8080
# Its collections on its main thread, no GC helper threads (GATEWAY_NODE_OPTIONS of @sched/gateway says why; deploy/test keeps both equal).
CMD ["node", "--single-threaded-gc", "--import", "@sched/telemetry/register", "services/gateway/dist/main.js"]
