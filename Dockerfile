# Bosun API and worker image. The same image runs either role: `npm run api` or `npm run worker`.
FROM node:20-bookworm-slim

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    BOSUN_HOME=/var/lib/bosun

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities

RUN mkdir -p /var/lib/bosun && chown node:node /var/lib/bosun
USER node

EXPOSE 3000
CMD ["npm", "run", "api"]
