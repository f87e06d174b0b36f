# shellcheck shell=bash
#
# Pulumi CLI + Node.js language host, built from source.
#
# Sourced by the project's toolchain script, which provides:
#   LIQO_CACHE      cache root outside the repository (e.g. ~/.cache/pulumi-liqo)
#   PULUMI_VERSION  Pulumi version, e.g. 3.259.0 (must equal the @pulumi/pulumi npm version)
#   REPO_ROOT       repository root
#   step "msg"      progress line;   die "msg"   error and exit 1
#
# build_pulumi leaves in "$LIQO_CACHE/pulumi-$PULUMI_VERSION/bin/":
#   pulumi                         the CLI, from github.com/pulumi/pulumi/pkg/v3 via the Go module proxy
#   pulumi-language-nodejs         our language host, from toolchain/pulumi-language-nodejs (the
#                                  upstream one cannot be fetched from the module proxy)
#   pulumi-resource-pulumi-nodejs  dynamic-provider shim; runs the copy shipped in the program's
#                                  node_modules/@pulumi/pulumi
# The engine finds the last two beside the `pulumi` it runs from (or on PATH), so putting bin/ on
# PATH, or calling bin/pulumi by its path, is enough.
#
# Cache layout under "$LIQO_CACHE/pulumi-$PULUMI_VERSION/":
#   cli-<recipe>/pulumi   the CLI (slow to build; keyed by version and build recipe only)
#   bin-<hash>/           complete bin dir; <hash> covers the language host sources, the
#                         Pulumi version and the shim, so editing any of them rebuilds it
#   bin -> bin-<hash>     switched atomically once bin-<hash> is complete
# Everything is built in a .tmp.* directory and renamed into place, so an interrupted build never
# leaves a half-filled cache; leftovers are removed by the next build. Older bin-<hash> dirs are
# kept (another checkout may still use them); pulumi inside them is a hard link to cli-*/pulumi.

# Bump when the way the CLI is built changes, to force a rebuild of cli-*.
_PULUMI_CLI_RECIPE=1

_pulumi_shim_script() {
	cat <<'EOF'
#!/bin/sh
# pulumi-resource-pulumi-nodejs: the plugin the Pulumi engine starts to serve
# pulumi.dynamic resources. Its real implementation ships in the @pulumi/pulumi
# npm package. The engine starts plugins in the program's directory, so run the
# copy that directory's node_modules provides (looking in parent directories
# too, like Node's module resolution does). Needs `node` on PATH.
dir=$PWD
while :; do
	shim=$dir/node_modules/@pulumi/pulumi/pulumi-resource-pulumi-nodejs
	if [ -f "$shim" ]; then
		exec sh "$shim" "$@"
	fi
	[ "$dir" = / ] && break
	dir=$(dirname "$dir")
done
echo "pulumi-resource-pulumi-nodejs: no node_modules/@pulumi/pulumi in $PWD or its parents; run npm ci first" >&2
exit 1
EOF
}

# Hash of everything that goes into bin-<hash>/ besides the CLI.
_pulumi_bin_hash() {
	local src=$1
	{
		echo "pulumi $PULUMI_VERSION cli-recipe $_PULUMI_CLI_RECIPE"
		_pulumi_shim_script
		(cd "$src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print | LC_ALL=C sort |
			while IFS= read -r f; do
				echo "== $f"
				cat "$f"
			done)
	} | sha256sum | cut -c1-16
}

build_pulumi() {
	: "${LIQO_CACHE:?}" "${PULUMI_VERSION:?}" "${REPO_ROOT:?}"
	local ver=${PULUMI_VERSION#v}
	local root="$LIQO_CACHE/pulumi-$ver"
	local src="$REPO_ROOT/toolchain/pulumi-language-nodejs"
	local pkg_mod="github.com/pulumi/pulumi/pkg/v3"
	local sdk_mod="github.com/pulumi/pulumi/sdk/v3"
	local cli_dir="$root/cli-$_PULUMI_CLI_RECIPE"

	[[ -f $src/go.mod ]] || die "pulumi: language host sources missing: $src/go.mod"
	local hash
	hash=$(_pulumi_bin_hash "$src") || die "pulumi: could not hash $src"
	local bin_name="bin-$hash"

	# Warm path: existence checks only.
	if [[ -x $root/$bin_name/pulumi && -x $root/$bin_name/pulumi-language-nodejs &&
		-x $root/$bin_name/pulumi-resource-pulumi-nodejs && $(readlink "$root/bin" 2>/dev/null) == "$bin_name" ]]; then
		return 0
	fi

	mkdir -p "$root" || die "pulumi: cannot create $root"

	# One builder at a time per version; whoever waited re-checks what is now there.
	local lock_fd=
	if command -v flock >/dev/null 2>&1; then
		exec {lock_fd}>"$root/.lock" || die "pulumi: cannot open $root/.lock"
		flock "$lock_fd" || die "pulumi: cannot lock $root/.lock"
	fi
	# With the lock held, any .tmp.* or .bin.* left is from an interrupted build.
	rm -rf "$root"/.tmp.* "$root"/.bin.*

	local tmp=
	if [[ ! -x $root/$bin_name/pulumi ]]; then
		tmp=$(mktemp -d "$root/.tmp.XXXXXX") || die "pulumi: cannot create a temp dir in $root"
		# Build from a snapshot of the sources, and key the result by the snapshot's hash, so
		# an edit made while building cannot end up under the wrong key.
		cp -R "$src/." "$tmp/langhost-src" || die "pulumi: cannot copy $src"
		hash=$(_pulumi_bin_hash "$tmp/langhost-src") || die "pulumi: could not hash $src"
		bin_name="bin-$hash"
	fi

	if [[ ! -x $root/$bin_name/pulumi ]]; then
		command -v go >/dev/null 2>&1 ||
			die "pulumi: 'go' not found on PATH; it is needed to build $pkg_mod@v$ver and $src"

		if [[ ! -x $cli_dir/pulumi ]]; then
			_pulumi_build_cli "$ver" "$tmp" "$pkg_mod" "$sdk_mod" # dies on failure
			rm -rf "$cli_dir" # incomplete (a file removed by hand), if it exists at all
			mv -T "$tmp/cli" "$cli_dir" || die "pulumi: cannot move the CLI into $cli_dir"
		fi

		local stage="$tmp/bin"
		mkdir -p "$stage"
		ln "$cli_dir/pulumi" "$stage/pulumi" 2>/dev/null || cp "$cli_dir/pulumi" "$stage/pulumi" ||
			die "pulumi: cannot copy $cli_dir/pulumi"

		step "pulumi: building the Node.js language host (toolchain/pulumi-language-nodejs, $sdk_mod@v$ver)"
		if ! _pulumi_logged "pulumi: language host" "$tmp/langhost.log" \
			env -C "$tmp/langhost-src" CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" \
			go build -trimpath -ldflags "-s -w -X main.version=$ver" \
			-o "$stage/pulumi-language-nodejs" .; then
			_pulumi_build_failed "$tmp/langhost.log" "$root" \
				"the language host in $src (needs $sdk_mod@v$ver; if go.sum is incomplete run 'go mod tidy' there)"
		fi

		_pulumi_shim_script >"$stage/pulumi-resource-pulumi-nodejs"
		chmod 0755 "$stage/pulumi-resource-pulumi-nodejs"

		rm -rf "${root:?}/$bin_name" # incomplete (a file removed by hand), if it exists at all
		mv -T "$stage" "$root/$bin_name" || die "pulumi: cannot move the build into $root/$bin_name"
	fi
	[[ -n $tmp ]] && rm -rf "$tmp"

	# Point bin at the finished directory (rename of a symlink: atomic).
	[[ -e $root/bin && ! -L $root/bin ]] && rm -rf "${root:?}/bin"
	{ ln -sfn "$bin_name" "$root/.bin.$$" && mv -T "$root/.bin.$$" "$root/bin"; } ||
		die "pulumi: cannot switch $root/bin to $bin_name"

	if [[ -n $lock_fd ]]; then
		exec {lock_fd}>&-
	fi
}

# Builds the CLI into "$tmp/cli/pulumi" through a generated wrapper module: `go install
# .../cmd/pulumi@v` is refused because pkg/v3's go.mod has replace directives, so we
# carry those replaces (except its ../sdk one; we require sdk/v3 at the same version).
_pulumi_build_cli() {
	local ver=$1 tmp=$2 pkg_mod=$3 sdk_mod=$4
	local mod="$tmp/cli-mod"
	mkdir -p "$mod" "$tmp/cli"

	step "pulumi: fetching $pkg_mod@v$ver through the Go module proxy"
	local json gomod
	if ! json=$(cd "$mod" && GOWORK=off GOFLAGS='' go mod download -json "$pkg_mod@v$ver" 2>"$tmp/download.log"); then
		cat "$tmp/download.log" >&2
		printf '%s\n' "$json" | grep '"Error"' >&2 || true
		die "pulumi: could not fetch $pkg_mod@v$ver from the Go module proxy ($(go env GOPROXY))"
	fi
	gomod=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
	[[ -f $gomod ]] || die "pulumi: no go.mod for $pkg_mod@v$ver in the module cache"

	local go_line replaces
	go_line=$(awk '$1 == "go" { print; exit }' "$gomod")
	# Single-line and block replaces whose target is a module (not a ../local path).
	replaces=$(awk '
		{ line = $0; sub(/\/\/.*/, "", line) }
		line ~ /^replace[[:space:]]*\(/ { inblock = 1; next }
		inblock && line ~ /^[[:space:]]*\)/ { inblock = 0; next }
		inblock || line ~ /^replace[[:space:]]/ {
			sub(/^replace[[:space:]]+/, "", line); gsub(/^[[:space:]]+|[[:space:]]+$/, "", line)
			if (line !~ /=>/) next
			target = line; sub(/.*=>[[:space:]]*/, "", target)
			if (target !~ /^(\.|\/)/) print "replace " line
		}' "$gomod")

	cat >"$mod/go.mod" <<EOF
// Generated by scripts/toolchain/pulumi.sh to build the pulumi CLI.
module pulumi-liqo.local/toolchain/pulumi-cli

${go_line:-go 1.25}

require (
	$pkg_mod v$ver
	$sdk_mod v$ver
)

$replaces
EOF

	step "pulumi: building the pulumi CLI v$ver ($pkg_mod/cmd/pulumi; first build takes several minutes)"
	if ! _pulumi_logged "pulumi: CLI v$ver" "$tmp/cli.log" \
		env -C "$mod" CGO_ENABLED=0 GOWORK=off GOFLAGS="-mod=mod -buildvcs=false" \
		go build -trimpath \
		-ldflags "-s -w -X $sdk_mod/go/common/version.Version=v$ver" \
		-o "$tmp/cli/pulumi" "$pkg_mod/cmd/pulumi"; then
		_pulumi_build_failed "$tmp/cli.log" "${tmp%/*}" "$pkg_mod@v$ver (the pulumi CLI)"
	fi

	local got
	got=$(PULUMI_SKIP_UPDATE_CHECK=true "$tmp/cli/pulumi" version 2>/dev/null) || true
	[[ $got == "v$ver" ]] || die "pulumi: the built CLI reports version '$got', expected v$ver"
}

# _pulumi_logged LABEL LOG COMMAND...: runs COMMAND in the foreground (so Ctrl-C stops it) with
# its output in LOG, while a ticker prints a line every 30 s so a cold build never looks stuck.
# The ticker ends within a second of this shell ending, so it never holds the caller's locks.
_pulumi_logged() {
	local label=$1 log=$2
	shift 2
	local parent=$BASHPID rc=0
	(
		n=0
		while sleep 1 && kill -0 "$parent" 2>/dev/null; do
			n=$((n + 1))
			if ((n % 30 == 0)); then
				step "$label: still building ($n s; $(grep -c '^go: downloading' "$log" || true) modules fetched)"
			fi
		done
	) &
	local ticker=$!
	"$@" >"$log" 2>&1 || rc=$?
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	return "$rc"
}

# Reports a failed go build: the module versions Go could not fetch, if any, and the log's tail.
_pulumi_build_failed() {
	local log=$1 root=$2 what=$3
	cp "$log" "$root/last-build-failure.log" 2>/dev/null || true
	local missing
	missing=$(grep -oE '[A-Za-z0-9._~/!-]+@v[0-9][A-Za-z0-9.+-]*: (reading|unknown revision|invalid version|not found|missing)' "$log" |
		sed 's/: .*//' | sort -u | head -n 8 | paste -sd ' ') || true
	tail -n 25 "$log" >&2
	if [[ -n $missing ]]; then
		die "pulumi: building $what failed: could not fetch $missing from the Go module proxy; full log: $root/last-build-failure.log"
	fi
	die "pulumi: building $what failed; full log: $root/last-build-failure.log"
}
