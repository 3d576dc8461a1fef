# pin-auth image (Node 24 LTS): one image for both roles (the command picks web or worker, as the Procfile does).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# the client package is an npm workspace (packages/client): npm ci links it
COPY packages/client/package.json ./packages/client/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY packages ./packages
COPY src ./src
COPY scripts ./scripts
# test/ is compiled with the rest (the benchmark imports its helpers) and then left out of the image
COPY test ./test
RUN npm run build && rm -rf dist/test && npm prune --omit=dev

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# the web role's check; a worker container overrides it (docker-compose.yml: check.js worker)
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s CMD ["node", "dist/src/bin/check.js", "web"]
# node is PID 1 and handles SIGTERM itself (graceful shutdown), so no shell wrapper
CMD ["node", "--max-semi-space-size=8", "dist/src/bin/web.js"]
