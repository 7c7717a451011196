# One image for the worker, the API and the sandbox (the command picks the process).
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=dev && npm cache clean --force
COPY . .
USER node
