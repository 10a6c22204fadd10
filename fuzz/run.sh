#!/usr/bin/env bash
# Builds the fuzz targets once, then runs one target for a given time
# (default 600 s) and keeps the log in fuzz/logs/TARGET.log:
#   fuzz/run.sh TARGET [SECONDS]
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`). cargo-fuzz passes
# nightly-only flags; on a stable toolchain RUSTC_BOOTSTRAP=1 allows them.
# The crate has no `unsafe`, so no sanitizer (`-s none`): 2-3x the execs/s.
# The binary is run directly (not `cargo fuzz run`) so that edits to src/
# during a run do not trigger a rebuild of every target.
set -euo pipefail
cd "$(dirname "$0")"
t=$1
secs=${2:-600}
if [ -z "${NO_BUILD:-}" ]; then
  RUSTC_BOOTSTRAP=1 cargo fuzz build -s none "$t"
fi
mkdir -p corpus/"$t" artifacts/"$t" logs
./target/x86_64-unknown-linux-gnu/release/"$t" corpus/"$t" seeds/"$t" \
  -artifact_prefix=artifacts/"$t"/ -max_total_time="$secs" -dict=json.dict \
  -max_len=16384 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
  >logs/"$t".log 2>&1 || { echo "$t: crashed, see fuzz/logs/$t.log and fuzz/artifacts/$t/"; exit 1; }
tail -n 20 logs/"$t".log
