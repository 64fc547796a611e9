# Shared by scripts/run, scripts/test and the bench scripts: configure and build one
# build tree. Build output goes to a log that is shown only when the build fails.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# build_tree DIR [cmake -D options...]
build_tree() {
  local dir="$1"; shift
  local log="$dir/build.log"
  mkdir -p "$dir"
  # ccache, where installed, lets a second build tree (or a rebuild) reuse objects; the
  # base dir and no-hash-dir settings make objects from different build trees match.
  local launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  if [[ ! -f "$dir/build.ninja" ]]; then
    if ! cmake -S "$root" -B "$dir" -G Ninja "${launcher[@]}" "$@" >"$log" 2>&1; then
      echo "configure failed; see $log:" >&2; tail -n 30 "$log" >&2; return 1
    fi
  fi
  if ! cmake --build "$dir" -- -j"$(nproc)" >>"$log" 2>&1; then
    echo "build failed; see $log:" >&2; grep -E "error|Error" "$log" | head -n 30 >&2; return 1
  fi
}
