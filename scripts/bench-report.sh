#!/usr/bin/env bash
# bench-report.sh OUTDIR: writes BENCHMARKS.md (to stdout) from the results
# scripts/bench-vm.sh left in OUTDIR (results.tsv, env.txt, gobench.txt).
set -euo pipefail

out=${1:?usage: bench-report.sh OUTDIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
results=$out/results.tsv
[ -s "$results" ] || { echo "bench-report.sh: no results in $results" >&2; exit 1; }
env_of() { sed -n "s/^$1=//p" "$out/env.txt" | head -n1; }

# medians.tsv: row tool metric median runs min max, over the runs that
# reported the metric (columns of results.tsv: 4 msg, 5 bw, 6 p50, 7 p99).
medians=$out/medians.tsv
: >"$medians"
for col in 4 5 6 7; do
	awk -F'\t' -v c="$col" '$c != "NA" && $c != "FAIL" { print $1 "\t" $2 "\t" $c }' "$results" |
		sort -t"$(printf '\t')" -k1,1 -k2,2 -k3,3g |
		awk -F'\t' -v m="$col" '
			function flush() {
				med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
				print key "\t" m "\t" med "\t" n "\t" v[1] "\t" v[n]
				n = 0
			}
			{ k = $1 "\t" $2; if (n && k != key) flush(); key = k; v[++n] = $3 }
			END { if (n) flush() }' >>"$medians"
done

# get ROW TOOL COL [FIELD]: FIELD 4 median (default), 5 runs, 6 min, 7 max.
get() {
	awk -F'\t' -v r="$1" -v t="$2" -v c="$3" -v f="${4:-4}" \
		'$1 == r && $2 == t && $3 == c { print $f; found = 1 } END { if (!found) print "" }' "$medians"
}
# pratio ROW TOOL COL: the median over repetitions of udapl/TOOL, each ratio
# taken between runs of the same repetition (a few seconds apart).
pratio() {
	awk -F'\t' -v r="$1" -v t="$2" -v c="$3" '
		$1 != r || $c == "NA" || $c == "FAIL" { next }
		$2 == "udapl" { u[$3] = $c } $2 == t { o[$3] = $c }
		END { for (k in u) if ((k in o) && o[k] > 0) print u[k] / o[k] }' "$results" | sort -g |
		awk '{ v[++n] = $1 } END { if (n) printf "%.2f", (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}
fails() { awk -F'\t' -v r="$1" -v t="$2" '$1 == r && $2 == t && $4 == "FAIL" { n++ } END { print n + 0 }' "$results"; }
# failures.tsv (row tool rep reason raw), from scripts/bench-vm.sh; older
# runs have none.
failures=$out/failures.tsv
[ -f "$failures" ] || failures=/dev/null
nfailed=$(awk -F'\t' '$4 == "FAIL" { n++ } END { print n + 0 }' "$results")

# fmt V DIGITS: a number with thousands separators, or "–".
fmt() {
	[ -n "$1" ] || { echo "–"; return; }
	awk -v v="$1" -v d="$2" 'BEGIN {
		s = sprintf("%." d "f", v); i = index(s, "."); ip = i ? substr(s, 1, i - 1) : s; fp = i ? substr(s, i) : ""
		o = ""; while (length(ip) > 3) { o = "," substr(ip, length(ip) - 2) o; ip = substr(ip, 1, length(ip) - 3) }
		print ip o fp }'
}
# val ROW TOOL COL DIGITS: the median, formatted, marked when runs of ROW
# and TOOL failed: "V (N failed)", or "FAILED (N runs)" when none passed.
val() {
	local v f
	v=$(fmt "$(get "$1" "$2" "$3")" "$4")
	f=$(fails "$1" "$2")
	if [ "$f" != 0 ]; then
		if [ "$v" = "–" ]; then v="FAILED ($f run$([ "$f" = 1 ] || echo s))"; else v="$v ($f failed)"; fi
	fi
	echo "$v"
}
ratio() {
	[ -n "$1" ] && [ -n "$2" ] || { echo ""; return; }
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'
}
# ge A B: A >= B (numbers), false when A is empty.
ge() { [ -n "$1" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
le() { [ -n "$1" ] && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

title() {
	case $1 in
	write_bw_64) echo "RDMA write, 64 B" ;;
	write_bw_4k) echo "RDMA write, 4 KiB" ;;
	write_bw_64_list16) echo "RDMA write, 64 B, posts of 16" ;;
	read_bw_64) echo "RDMA read, 64 B" ;;
	read_bw_4k) echo "RDMA read, 4 KiB" ;;
	send_bw_64) echo "send/recv, 64 B" ;;
	send_bw_4k) echo "send/recv, 4 KiB" ;;
	write_lat_64) echo "RDMA write latency, 64 B" ;;
	send_lat_64) echo "send/recv latency, 64 B" ;;
	esac
}

bw_rows="write_bw_64 write_bw_4k read_bw_64 read_bw_4k send_bw_64 send_bw_4k write_bw_64_list16"
lat_rows="write_lat_64 send_lat_64"
reps=$(env_of reps | awk '{ sub(/^reps=/, ""); print $1 }')
read -r _ n64 n4k nlat depth <<<"$(env_of reps | tr ' ' '\n' | sed 's/^[a-z0-9]*=//' | tr '\n' ' ')"

# Targets: message rate and bandwidth >= 0.95 x perftest and >= 1.0 x C DAPL;
# p50 latency <= 1.05 x perftest.
table_bw() {
	echo "| Row | Metric (median) | perftest | C DAPL (dapltest) | udapl (udattest) | udapl / perftest | udapl / C DAPL | Targets met | paired: udapl / perftest | paired: udapl / C DAPL |"
	echo "|---|---|---:|---:|---:|---:|---:|---|---:|---:|"
	local row t col unit name p d u rp rd ok why pp pd
	for row in $bw_rows; do
		t=$(title "$row")
		for col in 4 5; do
			if [ "$col" = 4 ]; then name="msg rate (1/s)" unit=0; else name="bandwidth (MB/s)" unit=2; fi
			p=$(get "$row" perftest "$col") d=$(get "$row" dapl "$col") u=$(get "$row" udapl "$col")
			rp=$(ratio "$u" "$p") rd=$(ratio "$u" "$d")
			ok=yes why=()
			if ! ge "$rp" 0.95; then ok=no why+=("< 0.95 x perftest"); fi
			if [ -n "$d" ] && ! ge "$rd" 1.0; then ok=no why+=("< 1.0 x C DAPL"); fi
			[ -n "$u" ] || { ok=no why=("no result"); }
			local cell=$ok
			[ "$ok" = no ] && cell="no ($(IFS=,; echo "${why[*]}" | sed 's/,/, /g'))"
			[ -z "$d" ] && [ "$ok" = yes ] && cell="yes (no C DAPL counterpart)"
			pp=$(pratio "$row" perftest "$col") pd=$(pratio "$row" dapl "$col")
			local cp cd cu
			if [ "$col" = 4 ]; then
				# The failed runs show once per row, on its first line.
				cp=$(val "$row" perftest 4 "$unit") cd=$(val "$row" dapl 4 "$unit") cu=$(val "$row" udapl 4 "$unit")
			else
				cp=$(fmt "$p" "$unit") cd=$(fmt "$d" "$unit") cu=$(fmt "$u" "$unit")
			fi
			printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$([ "$col" = 4 ] && echo "$t")" "$name" \
				"$cp" "$cd" "$cu" "${rp:-–}" "${rd:-–}" "$cell" "${pp:-–}" "${pd:-–}"
		done
	done
}

table_lat() {
	echo "| Row | Metric (median) | perftest | udapl (udattest) | udapl / perftest | Target met | paired: udapl / perftest |"
	echo "|---|---|---:|---:|---:|---|---:|"
	local row t p u rp ok
	for row in $lat_rows; do
		t=$(title "$row")
		p=$(get "$row" perftest 6) u=$(get "$row" udapl 6)
		rp=$(ratio "$u" "$p")
		if le "$rp" 1.05; then ok=yes; else ok="no (> 1.05 x perftest)"; fi
		printf '| %s | p50 (us) | %s | %s | %s | %s | %s |\n' "$t" "$(val "$row" perftest 6 2)" "$(val "$row" udapl 6 2)" "${rp:-–}" "$ok" \
			"$(pratio "$row" perftest 6)"
		p=$(get "$row" perftest 7) u=$(get "$row" udapl 7)
		printf '| | p99 (us) | %s | %s | %s | (no target) | %s |\n' "$(fmt "$p" 2)" "$(fmt "$u" 2)" "$(ratio "$u" "$p")" \
			"$(pratio "$row" perftest 7)"
	done
}

spread() {
	echo "| Row | Tool | Runs (failed) | msg rate min – max (1/s) | p50 min – max (us) |"
	echo "|---|---|---|---|---|"
	local row tool n f
	for row in $bw_rows $lat_rows; do
		for tool in perftest dapl udapl; do
			n=$(get "$row" "$tool" 4 5)
			[ -n "$n" ] || n=$(get "$row" "$tool" 6 5)
			f=$(fails "$row" "$tool")
			[ -n "$n" ] || [ "$f" != 0 ] || continue
			printf '| %s | %s | %s (%s) | %s | %s |\n' "$(title "$row")" "$tool" "${n:-0}" "$f" \
				"$(fmt "$(get "$row" "$tool" 4 6)" 0) – $(fmt "$(get "$row" "$tool" 4 7)" 0)" \
				"$(fmt "$(get "$row" "$tool" 6 6)" 2) – $(fmt "$(get "$row" "$tool" 6 7)" 2)"
		done
	done | sed 's/– – –/–/g'
}

# failed_runs: every failed run, with why, from failures.tsv.
failed_runs() {
	if [ "$nfailed" = 0 ]; then
		echo "None: every run of every tool ended within its bound and reported a result."
		return
	fi
	local row tool rep reason raw explained
	explained=$(wc -l <"$failures")
	if [ "$explained" -gt 0 ]; then
		echo "| Row | Tool | Repetition | Why | Output |"
		echo "|---|---|---:|---|---|"
		while IFS=$'\t' read -r row tool rep reason raw; do
			printf '| %s | %s | %s | %s | `%s` |\n' "$(title "$row")" "$tool" "$rep" "${reason//|/\\|}" "${raw#"$out/"}"
		done <"$failures"
		echo
	fi
	# Failed runs in results.tsv that failures.tsv does not explain (older
	# runs of bench-vm.sh).
	if [ "$explained" -lt "$nfailed" ]; then
		echo "$((nfailed - explained)) failed runs are counted in the Spread table without a recorded reason."
	fi
}

gobench_table() {
	local f=$out/gobench.txt
	[ -s "$f" ] || { echo "(not run)"; return; }
	echo "| Benchmark | ns/DTO | allocs/op | post allocs/DTO | poll allocs/DTO | cgo calls per batch: post | poll | empty polls/batch |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	awk '/^Benchmark/ {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		delete m
		for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
		if (name == "DequeueEmpty") {
			printf "| %s | %s ns/op | %s | – | %s | – | %s | – |\n", name, m["ns/op"], m["allocs/op"], m["allocs/op"], m["cgo/op"]
			next
		}
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, m["ns/DTO"], m["allocs/op"], m["post-allocs/DTO"],
			m["poll-allocs/DTO"], m["post-cgo/batch"], m["poll-cgo/batch"], m["empty-polls/batch"] }' "$f"
}

# gb NAME UNIT: one figure of the Go benchmarks.
gb() {
	awk -v n="Benchmark$1" -v u="$2" '{ b = $1; sub(/-[0-9]+$/, "", b) } b == n { for (i = 3; i < NF; i += 2) if ($(i + 1) == u) print $i }' \
		"$out/gobench.txt" 2>/dev/null | head -n1
}

notes() {
	cat <<NOTES
**The commands.** perftest: \`ib_write_bw|ib_read_bw|ib_send_bw -R -d rxe0 -F -s SIZE -n N -t $depth -Q 1\`
(server and client), \`ib_write_lat|ib_send_lat -R -d rxe0 -F -s 64 -n $nlat\`. C DAPL: \`dapltest -T S -D PROVIDER\`
once, then \`dapltest -T P -D PROVIDER -s ADDR -m p -i N -p $depth RW|RR SIZE 1\`. udapl: \`udattest -s\` once, then
\`udattest -h ADDR -T P -o write|read|send -size SIZE -n N -q $depth -signal 1 -wait poll -lat-n 0\` and
\`udattest -h ADDR -T P -o write|send -lat -size 64 -n $nlat\`. The raw output of every run is kept in
\`$out/raw\` until the next run.

**What the VM measures.** Soft-RoCE is a device in software: the kernel does the adapter's work,
most of it inside the poster's \`ibv_post_send\` system call, some (RDMA read responses, deferred
acknowledgements) in softirq context. Client, server, that kernel work and, on the host, qemu's
emulation of the CPUs all share the same two emulated CPUs, so every extra cycle a tool spends per
operation shows directly as lost message rate, far more than with an adapter doing the work.
Latency is bimodal for every tool: microseconds while each spinning process has a CPU to itself,
milliseconds (the scheduler tick) when a spinner and the kernel work it waits for share one; the
p99 column shows it. Numbers move by 10-30 % between repetitions, hence the medians and the
paired ratios.

**Where udapl's time goes.** Each DAT post call (\`EP.PostSend\`, \`PostRDMAWrite\`, ...) crosses from Go
to C once; \`EP.PostRequests\` and \`EP.PostRecvs\` cross once per list of up to 128 DTOs. Completions are
polled up to 64 per crossing. In this VM one crossing with an empty \`ibv_poll_cq\` (\`DequeueEmpty\`) costs
$(gb DequeueEmpty ns/op) ns. An RDMA write posted and reaped costs $(gb RDMAWrite/segs=1/batch=1/post=each ns/DTO) ns alone;
in batches of 16, $(gb RDMAWrite/segs=1/batch=16/post=each ns/DTO) ns posted one call each and
$(gb RDMAWrite/segs=1/batch=16/post=list ns/DTO) ns posted as one list; in batches of 128,
$(gb RDMAWrite/segs=1/batch=128/post=each ns/DTO) and $(gb RDMAWrite/segs=1/batch=128/post=list ns/DTO) ns. Most of it is the
kernel's work inside the post's system call. The post and poll paths allocate nothing (allocs/op 0 in every
benchmark). Sends and RDMA writes of up to 64 B are posted inline, as the C reference does; perftest's
bandwidth tests post without inline data, its latency tests with.

**The cgo-crossings-per-batch figure.** Measured, not estimated (the runtime's own counter). Posting a list
(\`post=list\`) takes 1 crossing per batch of 16 or 128 (send/recv: 2, the receives and the sends); posting
one DAT call per DTO (\`post=each\`) takes one per DTO. Polling takes one crossing per EVD per 64 completions
(3 for a batch of 128: 64 + 64 + the empty poll that ends it). The bandwidth rows above post one DTO per
call, like perftest (without \`-l\`) and dapltest; the "posts of 16" row posts lists, like \`ib_write_bw -l 16\`.

**The Go runtime and busy polling.** A goroutine that runs 10 ms without yielding is due for preemption; when
the runtime finds it inside a cgo call (where a poller spends most of its time) it takes the goroutine's P and
sets its monitor thread (sysmon) waking every 20 us for the next millisecond or more. A profile of udattest in
this VM showed that thread taking 16-18 % of the process's samples. udattest's polling loops therefore yield
(\`runtime.Gosched\`) every 2 ms, and compare \`Dequeue\`'s error with \`udat.ErrQueueEmpty\` directly (it is
returned as is; \`errors.Is\` on every empty poll was 3-6 % of a latency run). Each yield wakes an idle thread:
yielding every 64 polls instead showed up as 5 % of the profile. The VM's kernel marks the TSC unstable and reads
the clock from the emulated HPET, so each clock read of the Go runtime or of udattest is a system call here;
perftest reads the TSC directly.

**What would close the gaps.** Per operation, udapl still does more in Go than the C tools do in C: the
checks the man pages ask for at post time (an LMR lookup per segment, bounds, PZ, privileges), the cookie ring
under its lock, the cgo crossing, and turning each completion into a DAT event; under emulation each of these
costs about ten times what it costs on hardware. The latency gap is not a fixed cost: in side-by-side trial
runs (udattest under GOMAXPROCS=1 or GODEBUG=asyncpreemptoff=1, beside perftest) single runs had a p50 below
perftest's (14.0 vs 19.4 us for RDMA write, 18.3 vs 20.8 us for send/recv) and others of the same setting
1.5-2 x above it, which points at where the two spinning processes and the Go runtime's threads land on the
two virtual CPUs. Pinning a Go client to one CPU (taskset) made it 2-3 x slower, as its runtime threads then
share the poller's CPU. Measuring on KVM or an adapter, where the device's work does not compete for the same
two emulated CPUs, would separate these effects from the per-operation cost.

**Receive queue depth and RNR.** The send/recv bandwidth test keeps 512 receives posted, like
\`ib_send_bw\`'s default \`-r 512\`. With fewer, a receiver that falls behind for a few
milliseconds makes the sender's adapter wait for an RNR NAK timer, and rdma_cm leaves the QPs'
minimum RNR timer at 0, which means 655 ms (IB encoding): one such event costs as much as the
whole run (seen with 128 receives).

**C DAPL faster than perftest at 4 KiB.** In these runs \`dapltest\` moves 4 KiB writes and reads
faster than perftest with the same queue depth and polling; not investigated further.
NOTES
}

bound=$(env_of timeout | sed 's/ .*//')
bound=${bound:+$bound s}
bw=$(table_bw)
lat=$(table_lat)
met=$(cat <<<"$bw"$'\n'"$lat" | grep -c '| yes' || true)
total=$(($(grep -c '^| .*| [a-z]* (' <<<"$bw") + $(grep -c 'p50 (us)' <<<"$lat")))
cat <<EOF
# Benchmarks

udapl (package \`udat\`, measured with \`cmd/udattest\`) beside perftest and the C
uDAPL reference (OFA DAPL $(env_of dapl), \`dapltest -T P\`), all on the same
Soft-RoCE device in one boot of the test VM. Produced by \`make bench\`
(\`scripts/bench.sh\`); do not edit by hand.

- Date: $(date -u -r "$results" +"%Y-%m-%d %H:%M UTC")
- Commit: $(sed -n 's/^commit=//p' "$out/host.txt" 2>/dev/null | grep . || echo unknown)
- Machine: qemu TCG (software emulation), $(env_of cpus) vCPUs, kernel $(env_of kernel) (in the VM)
- Device: $(env_of device) (rdma_rxe) on netdev $(env_of netdev), active MTU $(env_of mtu); perftest $(env_of perftest), dapl2-utils $(env_of dapl)
- Runs: $reps repetitions of every row, the three tools in rotating order (one tool after the
  other, never at the same time); the tables show medians. VM time $(env_of seconds) s for the comparison.
- Bounds: every run (client and server) ${bound:-a fixed time} at most, then killed; a run that times
  out, fails or reports nothing counts as failed and is left out of the medians. Failed runs: **$nfailed**
  (marked "(N failed)" beside the medians; see [Failed runs](#failed-runs)).
- Parameters, the same for all tools: bandwidth rows $n64 iterations at 64 B and $n4k at 4 KiB,
  queue depth $depth (perftest \`-t $depth\`, dapltest \`-p $depth\`, udattest \`-q $depth\`), a completion for every
  operation (perftest \`-Q 1\`; dapltest always), busy polling (dapltest \`-m p\`, udattest \`-wait poll\`),
  one segment, rdma_cm connections (perftest \`-R\`). Latency rows: $nlat iterations, ping-pong, half the
  round trip (perftest \`ib_*_lat\`, udattest \`-lat\`); p50 is perftest's t_typical. MB = 2^20 bytes.

Timings in an emulated VM are slow and noisy: only the ratios, measured side by side in
the same run, mean anything.

## Results

Targets: message rate and bandwidth >= 0.95 x perftest and >= 1.0 x C DAPL on every
row; p50 latency <= 1.05 x perftest. **$met of $total met**, judged on the ratio of the
medians. The "paired" columns are the median of the per-repetition ratios (each
between runs a few seconds apart), which the VM's noise disturbs less.

$bw

$lat

## Spread

$(spread)

## Failed runs

$(failed_runs)

## Go data-path benchmarks (\`udat/bench_test.go\`)

\`go test -bench . ./udat/\` in the same VM boot (\`-benchtime 1000x\`). One op is one batch
of DTOs posted from a loop (\`segs=8\`: 8 segments in 8 LMRs, each looked up and checked at
post time). Allocations and cgo calls are counted per phase with \`runtime/metrics\`
(\`/gc/heap/allocs:objects\` + tiny, \`/cgo/go-to-c-calls:calls\`); "poll" counts the
\`Dequeue\` calls that returned a completion, "empty polls" the ones that found none.

$(gobench_table)

## Notes

$(notes)
EOF
