#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser and of decryption of arbitrary input (issue 10,
# item 7), with cargo-fuzz (libFuzzer) on stable Rust.
#
#   security/fuzz/run.sh            full form: 10^7 executions per target, no sanitizer
#                                   (plain stable; ASan costs 5-10x in speed) and no
#                                   comparison tracing (see below), under `nice -n 10`
#   security/fuzz/run.sh --short    CI form: AddressSanitizer build (RUSTC_BOOTSTRAP=1),
#                                   every committed corpus file replayed, then 4 s of
#                                   fuzzing per target
#   options: --runs N (full form: executions per target), --seconds S (short form),
#            --max-seconds S (full form: also stop a target after S s; fewer than N
#            executions is then reported as INCOMPLETE and the exit status is 1),
#            --jobs J (J targets at once; default 1 in the full form, 2 in the short one),
#            --seeds (rewrite seeds/ with fuzz-seedgen first), TARGET... (a subset)
#
# The full form builds with `--no-trace-compares`: libFuzzer's comparison callbacks fire on
# every compare of the arithmetic loops (residue range checks, NTTs) and took 70 % of the
# time of seal_secret_key (perf); without them the slow targets run 4-8x faster. The short
# form keeps them (and ASan), and the committed corpora were grown with them.
# -malloc_limit_mb needs a sanitizer's allocator hooks: in the full form the bound that
# holds is -rss_limit_mb.
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --version 0.13.2 --locked`). Writes
# reports/security/fuzz.md (per target: executions, exec/s, corpus files and bytes,
# libFuzzer's final cov/ft, result) and exits 1 if any target found a crash, panic,
# timeout (-timeout), oversized allocation (-malloc_limit_mb) or RSS over -rss_limit_mb;
# the offending input is kept in security/fuzz/artifacts/<target>/.
#
# Corpora: corpus/<target>/ is committed (the seeds from fuzz-seedgen merged with what
# campaigns found, minimized with -merge=1); new inputs of a run go to work/<target>/
# (not committed). `--merge` after a full run folds work/ into corpus/ (size-capped).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
mode=full
runs=10000000
seconds=4
max_seconds=""
jobs=""
seeds=0
merge=0
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --short) mode=short ;;
        --runs) runs="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        --max-seconds) max_seconds="$2"; shift ;;
        --jobs) jobs="$2"; shift ;;
        --seeds) seeds=1 ;;
        --merge) merge=1 ;;
        -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1") ;;
    esac
    shift
done

cd "$here"
if [[ ${#targets[@]} -eq 0 ]]; then
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.toml | grep -v '^zeppelin-fuzz$')
fi

# Limits: one allocation above 128 MiB, an RSS above 1.5 GiB or an input running 10 s is a
# failure (the largest legitimate object here is a Seal8192 ciphertext of a few hundred KB).
limits=(-rss_limit_mb=1536 -malloc_limit_mb=128 -timeout=10)

flag=""
if [[ -z $jobs ]]; then
    if [[ $mode == short ]]; then jobs=2; else jobs=1; fi
fi
if [[ $mode == short ]]; then
    flag=" --short"
    export RUSTC_BOOTSTRAP=1
    # Its own target directory, so that the ASan and the plain builds do not replace each other.
    # 16 codegen units (cargo-fuzz's default is 1): the build is most of the short form's
    # time on two cores, and 4 s of fuzzing per target barely notices the slower code.
    sanitizer=(-s address --codegen-units 16 --target-dir "$here/target/asan")
    triple_dir=target/asan/x86_64-unknown-linux-gnu/release
else
    sanitizer=(-s none --no-trace-compares --target-dir "$here/target/plain")
    triple_dir=target/plain/x86_64-unknown-linux-gnu/release
fi

if [[ $seeds == 1 ]]; then
    nice -n 10 cargo run --quiet --release -p fuzz-seedgen -- "$here/seeds"
fi

build_start=$SECONDS
nice -n 10 cargo fuzz build "${sanitizer[@]}" --fuzz-dir "$here" >"$here/build.log" 2>&1 || {
    tail -n 40 "$here/build.log" >&2
    exit 1
}
build_secs=$((SECONDS - build_start))
# What the binaries were built from (the fuzzed code: the crates and the targets).
built_from=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$repo" diff --quiet HEAD -- crates security/fuzz Cargo.lock 2>/dev/null || built_from+="+uncommitted"

dict_for() {
    case "$1" in
        evalmult_*) echo "$here/dict/evalmult.dict" ;;
        rblwe_*) echo "$here/dict/rblwe.dict" ;;
        cli_values) echo "$here/dict/values.dict" ;;
        *) echo "$here/dict/seal.dict" ;;
    esac
}

dir_stats() { # files bytes of the given directories
    local files=0 bytes=0 d
    for d in "$@"; do
        [[ -d $d ]] || continue
        files=$((files + $(find "$d" -type f | wc -l)))
        bytes=$((bytes + $(find "$d" -type f -printf '%s\n' | awk '{s+=$1} END {print s+0}')))
    done
    echo "$files $bytes"
}

report="$repo/reports/security/fuzz.md"
mkdir -p "$(dirname "$report")" "$here/logs"
total_start=$SECONDS
# One target: fuzzes it and writes its report row to logs/<target>.row.
run_target() {
    local t=$1
    local bin corpus work log start rc secs execs rate final cov ft files bytes result
    local -a budget
    bin="$here/$triple_dir/$t"
    corpus="$here/corpus/$t"
    work="$here/work/$t"
    mkdir -p "$corpus" "$work" "$here/artifacts/$t"
    if [[ $seeds == 1 && -d $here/seeds/$t ]]; then
        cp "$here/seeds/$t"/* "$corpus"/
    fi
    log="$here/logs/$t.log"
    if [[ $mode == short ]]; then
        budget=(-max_total_time="$seconds")
    else
        budget=(-runs="$runs")
        if [[ -n $max_seconds ]]; then
            budget+=(-max_total_time="$max_seconds")
        fi
    fi
    start=$SECONDS
    set +e
    nice -n 10 "$bin" "$work" "$corpus" "${budget[@]}" "${limits[@]}" \
        -dict="$(dict_for "$t")" -artifact_prefix="$here/artifacts/$t/" \
        -print_final_stats=1 >"$log" 2>&1
    rc=$?
    set -e
    secs=$((SECONDS - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
    final=$(grep -E '^#[0-9]+' "$log" | tail -n1 || true)
    cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$final")
    ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$final")
    read -r files bytes < <(dir_stats "$corpus" "$work")
    if [[ $rc -eq 0 ]]; then
        result=pass
    else
        result="FAIL (exit $rc: $(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|panicked at [^ ]+|==ERROR: AddressSanitizer: [a-z-]+' "$log" || echo see log))"
    fi
    if [[ $mode == full && ${execs:-0} -lt $runs && $rc -eq 0 ]]; then
        result="INCOMPLETE (${execs:-0} of $runs executions, stopped after ${max_seconds:-?} s; no failure)"
    fi
    printf '%-24s %10s execs %8s/s %5s s  corpus %4s files %9s B  cov %5s ft %6s  %s\n' \
        "$t" "${execs:-?}" "${rate:-?}" "$secs" "$files" "$bytes" "${cov:-?}" "${ft:-?}" "$result"
    echo "| \`$t\` | ${execs:-?} | ${rate:-?} | $secs | $files | $bytes | ${cov:-?} | ${ft:-?} | $result |" \
        >"$here/logs/$t.row"
    echo "$built_from $mode" >"$here/logs/$t.built"

    if [[ $merge == 1 && $rc -eq 0 ]]; then
        # Fold the new inputs into the committed corpus, keeping only inputs that add
        # coverage (-merge=1) and no input above 64 KiB unless it was a seed.
        merged="$here/work/$t.merged"
        rm -rf "$merged" && mkdir -p "$merged"
        find "$work" -type f -size +64k -delete
        nice -n 10 "$bin" -merge=1 "$merged" "$corpus" "$work" "${limits[@]}" >"$here/logs/$t.merge.log" 2>&1
        rm -rf "$corpus" && mv "$merged" "$corpus"
        rm -rf "$work"
    fi
}

for t in "${targets[@]}"; do
    rm -f "$here/logs/$t.row" "$here/logs/$t.built"
    if [[ $jobs -gt 1 ]]; then
        while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n || true; done
        run_target "$t" &
    else
        run_target "$t"
    fi
done
wait
total_secs=$((SECONDS - total_start))
# The report covers every target, each with its last run of this form (a campaign can be
# run in parts: `run.sh A B` then `run.sh C`); rows of other forms or missing rows fail.
mapfile -t all_targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' "$here/Cargo.toml" | grep -v '^zeppelin-fuzz$')
rows=()
failed=0
for t in "${all_targets[@]}"; do
    row=$(cat "$here/logs/$t.row" 2>/dev/null || echo "| \`$t\` | ? | ? | ? | ? | ? | ? | ? | FAIL (no result) |")
    read -r commit form < <(cat "$here/logs/$t.built" 2>/dev/null || echo "? ?")
    if [[ $form != "$mode" ]]; then
        row="${row% |} (last run: ${form} form) |"
    fi
    rows+=("$row $commit |")
    [[ $row == *"| pass |" ]] || failed=1
done

{
    if [[ $mode == short ]]; then
        echo "## Fuzzing (short form: ASan, corpus replay + ${seconds} s per target)"
    else
        echo "## Fuzzing (full form: ${runs} executions per target${max_seconds:+, at most ${max_seconds} s each}, no sanitizer, no comparison tracing)"
    fi
    echo
    echo "cargo-fuzz $(cargo fuzz --version | awk '{print $2}') (libFuzzer), $(rustc --version | awk '{print $1, $2}')" \
        "${RUSTC_BOOTSTRAP:+with RUSTC_BOOTSTRAP=1 for -Zsanitizer=address}; report written $(date -u '+%Y-%m-%d %H:%M UTC') at commit $(git -C "$repo" rev-parse --short HEAD). Each row is its target's last run of this form; \"built from\" is the commit its binary was built from."
    [[ -n $max_seconds && $mode == full ]] && flag+=" --max-seconds $max_seconds"
    [[ $runs != 10000000 && $mode == full ]] && flag+=" --runs $runs"
    [[ $jobs != 1 && $mode == full ]] && flag+=" --jobs $jobs"
    [[ $jobs != 2 && $mode == short ]] && flag+=" --jobs $jobs"
    echo "Command: \`security/fuzz/run.sh${flag}\` (build ${build_secs} s, targets ${total_secs} s)."
    echo "Limits per input: \`${limits[*]}\`$([[ $mode == full ]] && echo ' (without a sanitizer libFuzzer cannot enforce -malloc_limit_mb; -rss_limit_mb holds)'); dictionaries in \`security/fuzz/dict/\`."
    echo "Corpus = committed \`security/fuzz/corpus/<target>\` plus this run's new inputs."
    echo
    echo "| target | executions | exec/s | seconds | corpus files | corpus bytes | cov | ft | result | built from |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"
    echo
    if [[ $failed == 0 ]]; then
        echo "Result: **pass**: no crash, panic, timeout or oversized allocation in any target."
    else
        echo "Result: **FAIL** (a failure or an incomplete target): see security/fuzz/artifacts/ and security/fuzz/logs/."
    fi
} >"$report"
echo "wrote $report"
exit $failed
