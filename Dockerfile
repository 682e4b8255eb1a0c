# Multi-stage build of gpudash for linux/amd64 and linux/arm64 (Jetson):
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/gpudash/gpudash:0.1.0 .
# Each platform builds natively (QEMU under buildx); the runtime image is distroless, non-root.
FROM rust:1.95-bookworm AS build
WORKDIR /src
RUN rustup target add wasm32-unknown-unknown
COPY . .
RUN cargo xtask site \
 && cargo build --release --locked -p gpudash \
 && mkdir -p /out \
 && cp target/release/gpudash /out/gpudash \
 && cp -r target/site /out/site

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/gpudash /app/gpudash
COPY --from=build /out/site /app/site
ENV GPUDASH_SITE_ROOT=/app/site \
    GPUDASH_LISTEN=0.0.0.0:8080 \
    GPUDASH_DB=/data/history.db
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/app/gpudash"]
CMD ["serve"]
