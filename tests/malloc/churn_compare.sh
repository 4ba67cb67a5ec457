#!/usr/bin/env bash
# tests/malloc/churn_compare.sh — churn_bench under each allocator, side by side.
#   churn_compare.sh <churn_bench> <libphysmem.so> [reps=5] [modes...]
# Prints, per mode and allocator, the median ns per malloc+free pair and the min..max
# spread over the repetitions; allocators are interleaved within each repetition so
# machine noise hits them alike. Not a test.
set -euo pipefail
bench=$1; physmem=$2; reps=${3:-5}; shift $(( $# < 3 ? $# : 3 ))
modes=${*:-lifo fifo mixed larson prodcons}
lib=/usr/lib/x86_64-linux-gnu
declare -A pre=([glibc]="" [physmem]=$physmem [mimalloc]=$lib/libmimalloc.so.2
                [jemalloc]=$lib/libjemalloc.so.2 [tcmalloc]=$lib/libtcmalloc_minimal.so.4)
names="glibc physmem mimalloc jemalloc tcmalloc"
printf "%-9s" mode; for n in $names; do printf " %22s" "$n"; done; echo
for m in $modes; do
  declare -A runs=()
  for ((r = 0; r < reps; ++r)); do
    for n in $names; do
      [[ -z ${pre[$n]} || -e ${pre[$n]} ]] || continue
      runs[$n]+="$(LD_PRELOAD=${pre[$n]} "$bench" "$m" | awk '{print $2}') "
    done
  done
  printf "%-9s" "$m"
  for n in $names; do
    v=$(tr ' ' '\n' <<<"${runs[$n]:-}" | grep . | sort -g || true)
    if [[ -z $v ]]; then printf " %22s" n/a; continue; fi
    k=$(wc -l <<<"$v")
    printf " %22s" "$(sed -n "$(( (k + 1) / 2 ))p" <<<"$v") ($(head -1 <<<"$v")..$(tail -1 <<<"$v"))"
  done
  echo
  unset runs
done
