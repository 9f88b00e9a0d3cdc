# Section timing for scripts/test.sh (sourced): `section NAME` ends the previous section and
# starts NAME; at exit, every section's wall time is printed as a table.
section_names=()
section_secs=()
section_current=""
section_start=0
run_start=$SECONDS
end_section() {
  if [ -n "$section_current" ]; then
    local secs=$((SECONDS - section_start))
    section_names+=("$section_current")
    section_secs+=("$secs")
    printf -- '-- %s: %d min %02d s\n' "$section_current" $((secs / 60)) $((secs % 60))
    # A lane running in the background records its sections for the parent's table.
    [ -z "${section_rows_file:-}" ] || printf '%s\t%s\n' "$secs" "$section_current" >> "$section_rows_file"
  fi
  section_current=""
}
section() {
  end_section
  section_current="$1"
  section_start=$SECONDS
  echo "== $1 =="
}
# Adds the sections a background lane recorded (section_rows_file) to this table.
section_import() {
  local secs name
  while IFS=$'\t' read -r secs name; do
    section_names+=("$name")
    section_secs+=("$secs")
  done < "$1"
}
section_table() {
  local rc=$?
  end_section
  echo
  echo "| section | wall time |"
  echo "|---|---:|"
  local i
  for i in "${!section_names[@]}"; do
    printf '| %s | %d:%02d |\n' "${section_names[$i]}" $((section_secs[i] / 60)) $((section_secs[i] % 60))
  done
  local total=$((SECONDS - run_start))
  printf '| total | %d:%02d |\n' $((total / 60)) $((total % 60))
  [ "$rc" = 0 ] || echo "test.sh: failed (exit $rc) in section: ${section_names[-1]:-setup}"
}
[ -n "${section_rows_file:-}" ] || trap section_table EXIT
