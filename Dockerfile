# Multi-stage build of gpudash and gpudash-agent for linux/amd64 and linux/arm64 (Jetson):
#   docker buildx build --platform linux/amd64,linux/arm64 -t ghcr.io/gpudash/gpudash:0.1.0 .
#   docker buildx build --platform linux/amd64,linux/arm64 --target agent -t ghcr.io/gpudash/gpudash-agent:0.1.0 .
# Both architectures are compiled on the build machine's own platform (arm64 with Debian's cross
# gcc, as test.sh does), so no stage runs under emulation. Runtime images are distroless.
FROM --platform=$BUILDPLATFORM rust:1.95-bookworm AS build
ARG TARGETARCH
WORKDIR /src
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
 && rustup target add wasm32-unknown-unknown aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu
COPY . .
RUN case "$TARGETARCH" in arm64) T=aarch64-unknown-linux-gnu ;; *) T=x86_64-unknown-linux-gnu ;; esac \
 && cargo xtask site \
 && cargo build --release --locked --target "$T" -p gpudash -p gpudash-agent \
 && mkdir -p /out \
 && cp "target/$T/release/gpudash" "target/$T/release/gpudash-agent" /out/ \
 && cp -r target/site /out/site

# The node agent: root only to connect to the kubelet's root-owned pod-resources socket (the
# DaemonSet drops every capability and mounts the root filesystem read-only).
FROM gcr.io/distroless/cc-debian12 AS agent
COPY --from=build /out/gpudash-agent /gpudash-agent
EXPOSE 9401
ENTRYPOINT ["/gpudash-agent"]

# gpudash (the default target); the agent rides along for demo mode.
FROM gcr.io/distroless/cc-debian12:nonroot AS gpudash
COPY --from=build /out/gpudash /app/gpudash
COPY --from=build /out/gpudash-agent /app/gpudash-agent
COPY --from=build /out/site /app/site
ENV GPUDASH_SITE_ROOT=/app/site \
    GPUDASH_LISTEN=0.0.0.0:8080 \
    GPUDASH_DB=/data/history.db
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/app/gpudash"]
CMD ["serve"]
