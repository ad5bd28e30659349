# SPDX-License-Identifier: MIT
# lib-clickhouse.sh - sourced by the tests that run real clickhouse-server instances on
# loopback (t410, t791, t792): finding the server and client (the test skips without them), a
# server's configuration, and waiting until it answers. Needs lib.sh and CUT (tests/tcp-cut,
# whose --probe checks the HTTP port).

CHS=$(command -v clickhouse-server || ls /usr/sbin/clickhouse-server 2>/dev/null)
CHC=$(command -v clickhouse-client)
if [ -z "$CHS" ] || [ -z "$CHC" ]; then
	echo "1..0 # SKIP clickhouse-server/clickhouse-client not installed (apt-get install clickhouse-server clickhouse-client)"
	exit 0
fi

# ch_config DIR HTTP TCP [TCP_OF_SHARD1 TCP_OF_SHARD2]: config.xml and users.xml of a server
# on 127.0.0.1 keeping its data in DIR; with the two shard ports, a cluster nt_cluster of
# those two servers (for Distributed tables).
ch_config() {
	mkdir -p "$1/data" "$1/tmp" "$1/user_files"
	cluster=
	[ $# -ge 5 ] && cluster="<remote_servers>
    <nt_cluster>
      <shard><replica><host>127.0.0.1</host><port>$4</port></replica></shard>
      <shard><replica><host>127.0.0.1</host><port>$5</port></replica></shard>
    </nt_cluster>
  </remote_servers>"
	cat >"$1/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$1/server.log</log><errorlog>$1/error.log</errorlog><console>0</console></logger>
  <http_port>$2</http_port>
  <tcp_port>$3</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$1/data/</path>
  <tmp_path>$1/tmp/</tmp_path>
  <user_files_path>$1/user_files/</user_files_path>
  <users_config>$1/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
  $cluster
</yandex>
EOF
	cat >"$1/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
EOF
}

# ch_up TCP HTTP [PID]: waits until the server answers on both ports (60 s at most; gives up
# at once when PID, the server's process, has ended). 0 when it does.
ch_up() {
	i=0
	while [ $i -lt 600 ]; do
		[ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && return 1
		"$CHC" --port "$1" -q "SELECT 1" >/dev/null 2>&1 && "$CUT" --probe "$2" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# ch_start BASE STEP: one server in $T/ch on the first free pair of ports from BASE (HTTP
# H, TCP TP; three tries, STEP apart), its process id in pid (the test's EXIT trap kills
# it); bails out when none starts. Passes a test line and defines ch SQL (the client's
# answer to one query, errors included).
ch_start() {
	base=$1
	started=0
	for attempt in 1 2 3; do
		H=$base TP=$((base + 1))
		ch_config "$T/ch" "$H" "$TP"
		"$CHS" --config-file="$T/ch/config.xml" >"$T/ch/out.log" 2>&1 &
		pid=$!
		ch_up "$TP" "$H" "$pid" && { started=1; break; }
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		pid=""
		base=$((base + $2))
	done
	if [ $started != 1 ]; then
		echo "Bail out! clickhouse-server did not start: $(tail -n 3 "$T/ch/error.log" 2>/dev/null)"
		exit 1
	fi
	pass "clickhouse-server on 127.0.0.1:$TP"
}
ch() { "$CHC" --port "$TP" -q "$1" 2>&1; }

# ch_cut PORTFILE HTTP PATTERN BYTES: starts tests/tcp-cut in front of the server's HTTP
# port (it cuts the connection BYTES bytes after a request matching PATTERN; 120 s at most),
# its process id in cutpid, its own port in CP once it listens.
ch_cut() {
	"$CUT" "$1" "$2" "$3" "$4" 120 &
	cutpid=$!
	i=0; while [ ! -s "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	CP=$(cat "$1")
}
