#!/usr/bin/env bash
# Generates the SDKs of schema.json for the plugin's other languages: `scripts/sdk.sh [--out DIR]
# [LANGUAGE...]` writes each LANGUAGE's SDK (go, python and dotnet unless named) into DIR/<language>
# (default DIR: sdk, where they are committed), replacing what was there. Run it after every change
# of schema.json; test/unit/plugin/sdks.test.ts fails while a committed SDK differs from what this writes.
#
# The generator is the pulumi CLI's own `pulumi package gen-sdk --language <language>`, which hands
# the work to the language's host: here the project's own (toolchain/pulumi-language-go, also run as
# pulumi-language-python and pulumi-language-dotnet), which calls upstream's generators
# (toolchain/pulumi-language-go/generate.go; the .NET one reads the schema's logoUrl, docs/logo.png,
# from the checkout: this runs the CLI from the repository's root). The Go SDK's go.mod requires the Go SDK its generator
# knows of; this pins it at PULUMI_VERSION, the CLI's, and tidies go.sum through the Go module proxy.
set -euo pipefail
# shellcheck source=env.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
cd "$REPO_ROOT"

out="$REPO_ROOT/sdk"
if [ "${1:-}" = --out ]; then
  out=$2
  shift 2
fi
[ $# -gt 0 ] || set -- go python dotnet

work="$(mktemp -d "${TMPDIR:-/tmp}/pulumi-liqo-sdk.XXXXXX")"
trap 'rm -rf "$work"' EXIT
for language in "$@"; do
  command -v "pulumi-language-$language" >/dev/null || die "sdk: pulumi-language-$language is not built: run scripts/toolchain.sh"
  # The engine's warning that the host comes from PATH, and its last line, say nothing new here.
  status=0
  pulumi package gen-sdk schema.json --language "$language" --out "$work" >"$work/$language.log" 2>&1 || status=$?
  grep -v "using pulumi-language-$language from \$PATH\|SDK has been written to" "$work/$language.log" >&2 || true
  [ "$status" -eq 0 ] || die "sdk: pulumi package gen-sdk --language $language failed (exit $status): its output is above"
  if [ "$language" = go ]; then
    (cd "$work/go" && go mod edit -require="github.com/pulumi/pulumi/sdk/v3@v$PULUMI_VERSION" &&
      GOWORK=off GOFLAGS=-mod=mod go mod tidy) ||
      die "sdk: go mod tidy failed (the Go module proxy must serve github.com/pulumi/pulumi/sdk/v3 v$PULUMI_VERSION)"
  fi
  rm -rf "${out:?}/$language"
  mkdir -p "$out"
  mv -T "$work/$language" "$out/$language"
  step "sdk: $out/$language"
done
