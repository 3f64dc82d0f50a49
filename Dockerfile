# The catalog service image: one image, run as `catalog api`, `catalog projector` or `catalog serve`.
# It runs the compiled JavaScript (dist/): no TypeScript and no transpiler at run time.

# Node.js 26, the Active LTS line (24 is in maintenance): the longest-supported runtime the whole
# test suite passes on.

# Build: the whole toolchain, compile src/ and projector/ to dist/.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
# No sources yet: the install's own build step says so and skips; the build runs below.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY projector ./projector
RUN npm run build

# Run: production dependencies, the compiled code, and the files it reads at run time.
FROM node:26-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# glibc's allocator: two arenas and a fixed trim threshold, so memory freed after a burst (an
# export's chunks and compressor state, a snapshot's read) goes back to the system instead of
# staying resident (README: "Memory after exports"). `npm start` sets the same.
ENV MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072
COPY package.json package-lock.json ./
COPY bin ./bin
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY migrations ./migrations
COPY search-config ./search-config
# Read at run time (the site's stylesheet); the TypeScript sources stay out of the image.
COPY src/web/assets ./src/web/assets
# The embedded PostgreSQL's data and the snapshot's local copy (DATA_DIR), kept in a volume
# (docs/deploying.md); owned by the user the service runs as.
RUN mkdir -p /app/.data && chown node:node /app/.data
VOLUME /app/.data
USER node
EXPOSE 3000
ENTRYPOINT ["node", "bin/catalog.js"]
CMD ["serve"]
