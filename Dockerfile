# Bosun API and worker image. The same image runs either role (`--role api` or `--role worker`).
#
# It runs node directly on the compiled JavaScript, with tini as PID 1: `docker stop` (SIGTERM) reaches
# Bosun itself, which drains (a worker hands its running steps back) and exits; tini reaps any child.
# No npm and no shell in between, which would swallow the signal (they do not forward it reliably).
FROM node:20-bookworm-slim

RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    BOSUN_HOME=/var/lib/bosun

WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
# `npm ci` compiles to dist/ (the `prepare` script, with esbuild); the development tools (the tests',
# TypeScript's type checker) are then dropped.
RUN npm ci --include=dev --no-audit --no-fund \
    && npm prune --omit=dev --no-audit --no-fund \
    && npm cache clean --force

RUN mkdir -p /var/lib/bosun && chown node:node /var/lib/bosun
USER node

EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js", "--role", "api"]
