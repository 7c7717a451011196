# One image for the worker, the API and the sandbox (the command picks the process): the compiled JavaScript of
# `npm run build` with its prebuilt workflow bundle, on production dependencies only (no tsx, no test packages).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=dev && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY data ./data
USER node
CMD ["node", "--enable-source-maps", "dist/workers/main.js"]
