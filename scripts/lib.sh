# Shared by scripts/run, scripts/test and the bench scripts: configure and build one
# build tree. Build output goes to a log that is shown only when the build fails.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# build_tree DIR [cmake -D options...]
build_tree() {
  local dir="$1"; shift
  local log="$dir/build.log"
  mkdir -p "$dir"
  if [[ ! -f "$dir/build.ninja" ]]; then
    if ! cmake -S "$root" -B "$dir" -G Ninja "$@" >"$log" 2>&1; then
      echo "configure failed; see $log:" >&2; tail -n 30 "$log" >&2; return 1
    fi
  fi
  if ! cmake --build "$dir" -- -j"$(nproc)" >>"$log" 2>&1; then
    echo "build failed; see $log:" >&2; grep -E "error|Error" "$log" | head -n 30 >&2; return 1
  fi
}
