# The catalog service image: one image, run as `catalog api`, `catalog projector` or `catalog serve`.
FROM node:20-bookworm-slim
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
