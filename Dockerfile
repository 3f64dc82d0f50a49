# The catalog service image: one image, run as `catalog api`, `catalog projector` or `catalog serve`.
# Node.js 26, the Active LTS line (24 is in maintenance): the longest-supported runtime the whole
# test suite passes on.
FROM node:26-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY src ./src
COPY projector ./projector
COPY migrations ./migrations
COPY search-config ./search-config
USER node
EXPOSE 3000
ENTRYPOINT ["node", "bin/catalog.js"]
CMD ["serve"]
