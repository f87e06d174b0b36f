#!/usr/bin/env bash
# Generates the Go SDK of schema.json into $1 (default sdk/go, where it is committed): the module
# github.com/pulumi-liqo/pulumi-liqo/sdk/go (schema.json's language.go.importBasePath without its
# package), its package liqo, go.mod and go.sum. Run it after every change of schema.json;
# test/e2e/go-peering.test.ts fails while the committed SDK differs from what this writes.
#
# The generator is the pulumi CLI's own `pulumi package gen-sdk --language go`, which hands the
# work to the Go language host (toolchain/pulumi-language-go, pkg/v3's codegen/go at
# PULUMI_VERSION). The generated go.mod requires the Go SDK its generator knows of; this pins it
# at PULUMI_VERSION, the CLI's, and tidies go.sum through the Go module proxy.
set -euo pipefail
# shellcheck source=env.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
cd "$REPO_ROOT"
command -v pulumi-language-go >/dev/null || die "sdk-go: pulumi-language-go is not built: run scripts/toolchain.sh"

out="${1:-$REPO_ROOT/sdk/go}"
work="$(mktemp -d "${TMPDIR:-/tmp}/pulumi-liqo-sdk-go.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The engine's warning that the host comes from PATH says nothing new here.
pulumi package gen-sdk schema.json --language go --out "$work" 2>&1 | grep -v 'using pulumi-language-go from \$PATH' >&2 || true
[ -f "$work/go/go.mod" ] || die "sdk-go: pulumi package gen-sdk wrote no $work/go/go.mod"
(cd "$work/go" && go mod edit -require="github.com/pulumi/pulumi/sdk/v3@v$PULUMI_VERSION" &&
  GOWORK=off GOFLAGS=-mod=mod go mod tidy) ||
  die "sdk-go: go mod tidy failed (the Go module proxy must serve github.com/pulumi/pulumi/sdk/v3 v$PULUMI_VERSION)"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv -T "$work/go" "$out"
step "sdk-go: $out"
