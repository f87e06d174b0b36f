#!/usr/bin/env bash
# `npm run release -- VERSION [--no-commit]`: makes release VERSION, one version for everything the
# project ships: the npm package (package.json and its lock), the plugin and the SDKs (schema.json,
# sdk/, generated from the declarations with that version), and the agent image, whose tag is
# `<VERSION>-<build>` (the build: the agent bundle's hash, image/agent-bundle.ts). It writes the
# changelog entry (CHANGELOG.md: the subjects of the commits since the previous release's tag),
# then commits "Release VERSION" and tags it vVERSION, unless --no-commit.
# Refuses, changing nothing: a VERSION that is not semver or not above the current one, a tag that
# exists, and a working tree with changes (a release is exactly a commit).
set -euo pipefail
# shellcheck source=lib.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
# shellcheck source=env.sh
. "$REPO_ROOT/scripts/env.sh"
cd "$REPO_ROOT"

usage="usage: npm run release -- VERSION [--no-commit]   (VERSION: semver, e.g. 0.2.0)"
version="${1:-}"
commit=true
[ "${2:-}" = "--no-commit" ] && commit=false
[ -n "$version" ] || die "release: $usage"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  die "release: VERSION \"$version\" is not semver (MAJOR.MINOR.PATCH, e.g. 0.2.0)"
current="$(node -p 'require("./package.json").version')"
node -e '
  const parse = (v) => { const [core, pre] = v.split("-", 2); return [...core.split(".").map(Number), pre]; };
  const [a, b] = [parse(process.argv[1]), parse(process.argv[2])];
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) process.exit(a[i] > b[i] ? 0 : 1);
  // Same MAJOR.MINOR.PATCH: a release is above its own pre-releases only.
  process.exit(a[3] === undefined && b[3] !== undefined ? 0 : a[3] !== undefined && b[3] !== undefined && a[3] > b[3] ? 0 : 1);
' "$version" "$current" || die "release: VERSION $version is not above the current version $current"
git rev-parse -q --verify "refs/tags/v$version" >/dev/null && die "release: tag v$version exists already"
[ -z "$(git status --porcelain)" ] ||
  die "release: the working tree has changes (git status): commit or stash them first, a release is exactly one commit"

previous="$(git describe --tags --abbrev=0 --match 'v*' 2>/dev/null || true)"
step "release: $current -> $version (changes since ${previous:-the first commit})"
npm version --no-git-tag-version --allow-same-version "$version" >/dev/null
# schema.json and the SDKs carry the version; the build writes the agent image's reference (dist/core/cluster/agent-build.json).
npm run --silent generate
image="$(node -p 'require("./dist/core/cluster/agent-build.json").image')"

entry="$(mktemp)"
trap 'rm -f "$entry"' EXIT
{
  printf '## %s (%s)\n\n' "$version" "$(date -u +%Y-%m-%d)"
  printf 'Agent image: `%s` (`npm run image` builds it).\n\n' "$image"
  git log --no-merges --format='- %s' ${previous:+"$previous..HEAD"}
  printf '\n'
} >"$entry"
[ -f CHANGELOG.md ] || printf '# Changelog\n\n' >CHANGELOG.md
# The entry goes above the previous releases' (the first "## " line), below the page's introduction.
awk -v entry="$entry" '
  !done && /^## / { while ((getline line < entry) > 0) print line; done = 1 }
  { print }
  END { if (!done) while ((getline line < entry) > 0) print line }
' CHANGELOG.md >CHANGELOG.md.next
mv CHANGELOG.md.next CHANGELOG.md

if [ "$commit" = true ]; then
  git add -A
  git commit -q -m "Release $version"
  git tag -a "v$version" -m "pulumi-liqo $version"
  step "release: committed and tagged v$version; push both (git push --follow-tags), then publish"
else
  step "release: files written, not committed (--no-commit)"
fi
