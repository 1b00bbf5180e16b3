#!/usr/bin/env bash
# record --metrics scraped by a real Prometheus (Debian's prometheus, on 127.0.0.1, every
# second), two traced jobs (fake driver) on two "hosts", each a rank:
#   - as root where namespaces may be made, each host is its own UTS namespace (its own
#     hostname) and network namespace joined to this one by a veth pair, and both jobs
#     listen on the same port (each host has its own); otherwise both run here on ports
#     of their own, and the test says SKIP for the two hosts, not for the rest;
#   - each job holds still at two moments; at each, once Prometheus has scraped both after
#     the job held, the values its HTTP API gives (/api/v1/query) equal those of the job's
#     recording then: live and peak bytes (from the recording's records), events, lost
#     events, the device's size, the suspect's count, growth and time to full (from
#     `culeak report --format json` of the recording), with labels host and rank, and
#     the recordings are named by %h and %r;
#   - the alert README.md gives, loaded into Prometheus, fires for both ranks;
#   - between the two moments host a's endpoint is attacked (a slow loris, a 1 MiB head,
#     a crowd of silent connections): the job runs on at its pace, Prometheus still scrapes
#     it, and the second moment's values are still equal.
set -u
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null ||
    { echo "SKIP: prometheus is not installed (tools/packages.deb: apt-get install prometheus)"; exit 0; }

nspids=() links=() jobs_=() prom=""
cleanup() {
    for p in "${jobs_[@]}" $prom; do kill "$p" 2>/dev/null; done
    for p in "${nspids[@]}"; do kill "$p" 2>/dev/null; done
    for l in "${links[@]}"; do ip link del "$l" 2>/dev/null; done
    rm -rf "$T"
}
trap cleanup EXIT

cc -g -O0 -I"$ROOT/include" -o "$T/job" "$C/metrics_job.c" -ldl || fail "cannot build the job"
# get URL: its body, or a failure status
get() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1" 2>/dev/null; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Two hosts: a namespace holder (sleep) per host, its hostname set, a veth pair to it.
net=$((20 + $$ % 200))
two_hosts() {
    [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
    command -v ip >/dev/null && command -v nsenter >/dev/null || { echo "no ip or nsenter"; return 1; }
    for i in 1 2; do
        unshare --uts --net sleep 100000 >/dev/null 2>"$T/unshare" &
        local pid=$!
        nspids+=("$pid")
        for _ in $(seq 50); do
            [ "$(readlink /proc/$pid/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
            sleep 0.1
        done
        kill -0 "$pid" 2>/dev/null || { echo "unshare --uts --net: $(cat "$T/unshare")"; return 1; }
        local name=h$i
        local out=cm$$$i
        nsenter -t "$pid" -u hostname "culeak-host-$name" &&
            nsenter -t "$pid" -n ip link set lo up &&
            ip link add "$out" type veth peer name "${out}p" && links+=("$out") &&
            ip link set "${out}p" netns "$pid" &&
            ip addr add "10.$net.$i.1/24" dev "$out" && ip link set "$out" up &&
            nsenter -t "$pid" -n ip addr add "10.$net.$i.2/24" dev "${out}p" &&
            nsenter -t "$pid" -n ip link set "${out}p" up || { echo "cannot make host $name's network"; return 1; }
    done
}
# (not in $(...): the holders' pids are kept in this shell)
if two_hosts >"$T/hosts" 2>&1; then
    hosts=1
else
    echo "SKIP: two hosts (own hostname and network namespace): $(cat "$T/hosts"); both jobs run on this host"
    hosts=0
    for p in "${nspids[@]}"; do kill "$p" 2>/dev/null; done
    for l in "${links[@]}"; do ip link del "$l" 2>/dev/null; done
    nspids=() links=()
fi

# start_job I ENV: job I under culeak record --metrics, in host I's namespaces if any
start_job() {
    local i=$1 env=$2 listen=127.0.0.1:0 enter=()
    mkdir -p "$T/g$i"
    if [ "$hosts" = 1 ]; then
        listen=:9400 # the same port on both hosts
        enter=(nsenter -t "${nspids[$((i - 1))]}" -u -n)
    fi
    "${enter[@]}" env $env LD_LIBRARY_PATH="$B/fakecuda" FAKECUDA_MEM_BYTES=1073741824 \
        "$B/culeak" record --metrics "$listen" -o "$T/rec/%h-r%r.culeak" -- "$T/job" "$T/g$i" 6 2 \
        >"$T/out$i" 2>&1 &
    jobs_+=($!)
}
mkdir -p "$T/rec"
start_job 1 RANK=0
start_job 2 SLURM_PROCID=1
targets=() names=()
for i in 1 2; do
    for _ in $(seq 100); do grep -q "metrics on http://" "$T/out$i" && break; sleep 0.1; done
    addr=$(sed -n 's|^culeak record: metrics on http://\(.*\)/metrics$|\1|p' "$T/out$i")
    [ -n "$addr" ] || fail "job $i says no metrics address: $(cat "$T/out$i")"
    if [ "$hosts" = 1 ]; then
        [ "$addr" = "0.0.0.0:9400" ] || [ "$addr" = "[::]:9400" ] || fail "job $i listens on $addr"
        targets+=("10.$net.$i.2:9400")
        names+=("culeak-host-h$i")
    else
        targets+=("$addr")
        names+=("$(uname -n)")
    fi
done

# the alert README.md gives, as an operator would load it
python3 - "$ROOT/README.md" >"$T/rules.yml" <<'PY' || fail "no alert rules in README.md's Prometheus section"
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("## Live numbers for Prometheus"):]
print(re.search(r"```yaml\n(.*?)```", section, re.S).group(1), end="")
PY
if command -v promtool >/dev/null; then
    promtool check rules "$T/rules.yml" >"$T/promtool" 2>&1 || fail "README's alert rules: $(cat "$T/promtool")"
fi
pport=$(free_port)
cat >"$T/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: ['$T/rules.yml']
scrape_configs:
  - job_name: culeak
    static_configs: [{targets: ['${targets[0]}', '${targets[1]}']}]
EOF
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$pport" \
    --log.level=warn >"$T/prom.log" 2>&1 &
prom=$!
API=http://127.0.0.1:$pport
for _ in $(seq 600); do get "$API/-/ready" >/dev/null && break; sleep 0.1; done
get "$API/-/ready" >/dev/null || fail "prometheus is not ready: $(tail -5 "$T/prom.log")"

# check K: at the jobs' K-th hold, Prometheus's values against the recordings'
check() {
    local k=$1
    for i in 1 2; do
        for _ in $(seq 600); do [ -e "$T/g$i/held.$k" ] && break; sleep 0.1; done
        [ -e "$T/g$i/held.$k" ] || fail "job $i did not reach hold $k: $(cat "$T/out$i")"
    done
    local held
    held=$(date +%s.%N)
    for i in 1 2; do
        local rank=$((i - 1)) rec="$T/rec/${names[$((i - 1))]}-r$((i - 1)).culeak"
        [ -s "$rec" ] || fail "no recording $rec (%h-r%r): $(ls "$T/rec")"
        # the job runs on: its recording has no end yet, and dump says so
        "$B/culeak" dump "$rec" >"$T/dump$i" 2>"$T/dump$i.err" || grep -q "ends before its process did" "$T/dump$i.err" ||
            fail "dump $rec: $(cat "$T/dump$i.err")"
        "$B/culeak" report --format json "$rec" >"$T/json$i" 2>"$T/json$i.err" ||
            fail "report $rec: $(cat "$T/json$i.err")"
        python3 - "$API" "${names[$((i - 1))]}" "$rank" "$held" "${targets[$((i - 1))]}" "$T/dump$i" "$T/json$i" \
            "$k" <<'PY' || fail "hold $k, host ${names[$((i - 1))]}: the scrape differs from the recording"
import json, sys, time, urllib.parse, urllib.request
api, host, rank, held, target, dump, rep, k = sys.argv[1:]
sel = '{host="%s",rank="%s"}' % (host, rank)

def query(q):
    url = api + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    d = json.load(urllib.request.urlopen(url, timeout=10))
    assert d["status"] == "success", d
    return d["data"]["result"]

# a scrape taken after the job held: its values are those of the recording now
deadline = time.time() + 30
while True:
    r = query("timestamp(culeak_events_total%s)" % sel)
    if r and float(r[0]["value"][1]) > float(held) + 0.05:
        break
    assert time.time() < deadline, "no scrape of %s after the hold: %s" % (sel, r)
    time.sleep(0.2)

live = peak = events = 0
size = 0
addrs = {}
for line in open(dump):
    x = json.loads(line)
    if x["type"] == "alloc":
        addrs[x["addr"]] = x["size"]
        live += x["size"]
        peak = max(peak, live)
    elif x["type"] == "free":
        live -= addrs.pop(x["addr"], 0)
    elif x["type"] == "mark" and x.get("mem_total"):
        size = x["mem_total"]
    elif x["type"] == "hello":
        assert x["host"] == host, (x["host"], host)
j = json.load(open(rep))
p = j["processes"][0]
s = j.get("suspects", [])
want = {
    "culeak_live_bytes": live, "culeak_peak_bytes": peak, "culeak_events_total": p["events"],
    "culeak_lost_events_total": p["lost_events"], "culeak_device_size_bytes": size,
    "culeak_suspects": len(s), "culeak_processes": 1,
    "culeak_suspect_growth_bytes": s[0]["bytes_per_iteration"] if s else 0,
}
assert p["host"] == host and p["rank"] == int(rank), p
assert peak == p["peak_device_bytes"], (peak, p)
got = {}
for name in want:
    r = query(name + sel)
    assert len(r) == 1, (name, r)
    m = r[0]["metric"]
    assert m["instance"] == target, m
    if name in ("culeak_live_bytes", "culeak_peak_bytes"):
        assert m["device"] == "0" and m["allocator"] == "cuda", m
    got[name] = float(r[0]["value"][1])
for name in want:
    assert got[name] == want[name], "%s: prometheus %s, recording %s" % (name, got[name], want[name])
assert len(s) == 1 and s[0]["bytes_per_iteration"] == 16384, s
r = query("culeak_time_to_full_seconds" + sel)
fill = float(r[0]["value"][1])
assert abs(fill - s[0]["forecast"]["seconds_to_full"]) <= 0.05 + 1e-6, (fill, s[0]["forecast"])
assert float(query('up{instance="%s"}' % target)[0]["value"][1]) == 1
print("hold %s, %s rank %s: live %d, peak %d, events %d, suspect +%d per iteration, full in %.1f s: equal"
      % (k, host, rank, live, peak, p["events"], s[0]["bytes_per_iteration"], fill))
PY
    done
}

check 1
# README's alert: a device that fills within the hour (at +16 KiB per 10 ms, 1 GiB lasts
# minutes) is pending, for each rank
python3 - "$API" <<'PY' || fail "README's alert did not fire"
import json, sys, time, urllib.request
deadline = time.time() + 30
while True:
    d = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/alerts", timeout=5))
    ranks = sorted(a["labels"].get("rank") for a in d["data"]["alerts"]
                   if a["labels"]["alertname"] == "GpuMemoryFillsWithinAnHour")
    if ranks == ["0", "1"]:
        break
    assert time.time() < deadline, d
    time.sleep(0.5)
print("README's alert GpuMemoryFillsWithinAnHour is %s for ranks %s" % (d["data"]["alerts"][0]["state"], ranks))
PY
if [ "$hosts" = 1 ]; then
    n=$(get "$API/api/v1/query?query=count(count%20by%20(host)%20(culeak_events_total))" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
    [ "$n" = 2 ] || fail "want the series of 2 hosts, got $n"
fi

# host a's endpoint under attack while its job runs its second round
python3 - "${targets[0]}" "$T/attack.done" <<'PY' >"$T/attack.log" 2>&1 &
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
def conn():
    s = socket.create_connection((host, int(port)), timeout=5)
    return s
loris = conn()
loris.sendall(b"GET /metr")
idle = [conn() for _ in range(24)]  # more than the server's slots
huge = conn()
try:
    huge.sendall(b"GET /metrics HTTP/1.1\r\nX-Junk: " + b"a" * (1 << 20))
except OSError as e:
    print("huge request cut off by the server:", e)
t0 = time.time()
drops = 0
while time.time() - t0 < 4:
    try:
        loris.sendall(b"x")
    except OSError:  # dropped for a newer client, or its head's time was up: again
        drops += 1
        loris = conn()
        loris.sendall(b"GET /metr")
    time.sleep(0.3)
print("the slow client was dropped %d times and came back" % drops)
open(sys.argv[2], "w").close()
print("attack over after %.1f s" % (time.time() - t0))
PY
jobs_+=($!)
sleep 0.5
start=$(date +%s.%N)
touch "$T/g1/go.1" "$T/g2/go.1"
check 2
for _ in $(seq 100); do [ -e "$T/attack.done" ] && break; sleep 0.1; done
echo "round 2 under attack: job 1 held again $(python3 -c "import os; print('%.3f' % (os.path.getmtime('$T/g1/held.2') - $start))") s after it was let go (6 iterations of >= 10 ms)"
cat "$T/attack.log"
touch "$T/g1/go.2" "$T/g2/go.2"
for i in 1 2; do
    wait "${jobs_[$((i - 1))]}" || fail "job $i exited $?: $(cat "$T/out$i")"
    grep -q "metrics_job: 12 iterations ok" "$T/out$i" || fail "job $i: $(cat "$T/out$i")"
done
echo "prometheus: ${#targets[@]} targets (${targets[*]}), hosts ${names[*]}: ok"
