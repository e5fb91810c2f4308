# s3cond: built with go build steps only (no CGO), run as a static binary.
# Multi-arch: the build stage runs on the builder's own platform and
# cross-compiles for the target, e.g.
#   docker buildx build --platform linux/amd64,linux/arm64 -t s3cond .
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS=linux
ARG TARGETARCH=amd64
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/s3cond ./cmd/s3cond

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/s3cond /usr/local/bin/s3cond
EXPOSE 9000 9001
ENTRYPOINT ["/usr/local/bin/s3cond"]
CMD ["serve", "--config", "/etc/s3cond/config.yaml"]
