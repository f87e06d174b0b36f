#!/usr/bin/env bash
# Packs the provider plugin pulumi-resource-liqo from the build (dist/, made by `npm run build`;
# `npm run plugin` does both) as the archive a pluginDownloadURL serves:
# pulumi-resource-liqo-v<version>-linux-amd64.tar.gz, in $1 (default .plugin-output/).
# Install it with: pulumi plugin install resource liqo <version> --file <archive>
#
# The archive holds, at its root: the executable pulumi-resource-liqo (a shell script that starts
# dist/plugin/main.js on Node), the built provider (dist/plugin, dist/core, dist/declarations, dist/vendor),
# package.json, schema.json and the production dependencies (node_modules, exactly the non-dev
# entries of package-lock.json, copied from this checkout's node_modules: no registry is asked).
set -euo pipefail
# shellcheck source=env.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/env.sh"
cd "$REPO_ROOT"

out="$(mkdir -p "${1:-$REPO_ROOT/.plugin-output}" && cd "${1:-$REPO_ROOT/.plugin-output}" && pwd)"
version="$(node -p 'require("./package.json").version')"
schema_version="$(node -p 'require("./schema.json").version')"
[ "$version" = "$schema_version" ] ||
  die "plugin: package.json is at version $version but schema.json at $schema_version: the plugin reports the schema's"
for built in dist/plugin/main.js dist/vendor/kubernetes-client.cjs dist/core/cluster/agent-build.json; do
  [ -f "$built" ] || die "plugin: $built is missing: run npm run build first (npm run plugin does)"
done

stage="$(mktemp -d "${TMPDIR:-/tmp}/pulumi-resource-liqo.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
step "plugin: staging pulumi-resource-liqo v$version"
mkdir -p "$stage/dist"
# dist/core holds the build's identity too (cluster/agent-build.json): the agent image it deploys by default.
cp -r dist/plugin dist/core dist/declarations dist/vendor "$stage/dist/"
find "$stage/dist" \( -name '*.d.ts' -o -name '*.map' \) -delete
cp package.json schema.json "$stage/"
# The production dependencies as the lock file lays them out (nested ones included).
node -e '
  const lock = require("./package-lock.json");
  for (const [path, entry] of Object.entries(lock.packages))
    if (path.startsWith("node_modules/") && !entry.dev && !entry.devOptional) console.log(path);
' | xargs cp -a --parents -t "$stage"

# The executable: the project's Node when this machine has it, else PULUMI_LIQO_NODE or `node` on PATH.
build_node="$(command -v node)"
cat >"$stage/pulumi-resource-liqo" <<EOF
#!/bin/sh
# pulumi-resource-liqo v$version: starts the liqo provider plugin on Node 24 or later. The engine
# runs it from the program's directory: everything it needs is found beside this script.
here=\$(dirname "\$(readlink -f "\$0")")
node="\${PULUMI_LIQO_NODE:-}"
[ -n "\$node" ] || { [ -x "$build_node" ] && node="$build_node"; } || node=\$(command -v node) || {
  echo "pulumi-resource-liqo: no Node.js found: put Node 24 or later on PATH, or set PULUMI_LIQO_NODE to its path" >&2
  exit 1
}
case "\$("\$node" --version 2>/dev/null)" in
v2[4-9].* | v[3-9][0-9].*) ;;
*)
  echo "pulumi-resource-liqo: \$node is Node \$("\$node" --version 2>/dev/null || echo '(not runnable)'); the plugin needs 24 or later (set PULUMI_LIQO_NODE)" >&2
  exit 1
  ;;
esac
exec "\$node" "\$here/dist/plugin/main.js" "\$@"
EOF
chmod 755 "$stage/pulumi-resource-liqo"

archive="$out/pulumi-resource-liqo-v$version-linux-amd64.tar.gz"
tar -C "$stage" -cf - . | gzip -1 >"$archive.tmp"
mv "$archive.tmp" "$archive"
step "plugin: $archive ($(du -h "$archive" | cut -f1)); install it with: pulumi plugin install resource liqo $version --file $archive"
