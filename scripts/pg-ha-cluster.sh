#!/usr/bin/env bash
# pg-ha-cluster.sh: a local PostgreSQL HA cluster on loopback under pg_auto_failover,
# for the failover test (internal/hatest, `make ha-test`) and for anyone who wants to
# see the service ride through a failover.
#
#   scripts/pg-ha-cluster.sh start  DIR   # create (first time) or start the cluster in DIR; prints the URL
#   scripts/pg-ha-cluster.sh url    DIR   # the multi-host URL of the application database
#   scripts/pg-ha-cluster.sh status DIR   # pg_autoctl show state: which node is primary
#   scripts/pg-ha-cluster.sh primary DIR  # the name of the current primary (node1…node3)
#   scripts/pg-ha-cluster.sh kill    DIR NODE  # SIGKILL a node: its pg_autoctl keeper and its PostgreSQL
#   scripts/pg-ha-cluster.sh freeze  DIR NODE  # SIGSTOP them: a cut network, as the rest of the cluster sees it
#   scripts/pg-ha-cluster.sh thaw    DIR NODE  # SIGCONT them: the network is back
#   scripts/pg-ha-cluster.sh run     DIR NODE  # start a killed node again (it rejoins as a standby)
#   scripts/pg-ha-cluster.sh stop   DIR   # stop every node and the monitor (DIR is kept)
#
# With PG_HA_WATCH_PID=<pid>, start also stops the cluster once that process has exited.
#
# Why pg_auto_failover rather than Patroni + etcd: it is one Debian package
# (postgresql-15-auto-failover, `make pg-auto-failover` installs it), one process per
# node (pg_autoctl) and a monitor that is itself a PostgreSQL, with nothing else to run
# (no etcd cluster, no REST API, no YAML per node). Patroni is the other good choice in
# production (see README "Running several instances").
#
# Layout: a monitor and three data nodes (a primary and two standbys) with
# number_sync_standbys=1: every commit waits until one of the two standbys has it
# (synchronous_standby_names = ANY 1 (…)), so an acknowledged write survives the loss of
# the primary; and with one node down, the two left still have a synchronous standby
# and can fail over a second time. With two data nodes, the one left after a failover
# would run alone (pg_auto_failover turns synchronous replication off when no standby is
# left, or writes block), which is not what the test should prove. The issue's "three
# nodes" are the three data nodes; the monitor only decides.
#
# Timings: the defaults fail over in about 30 s (health checks every 5 s, a node is
# unhealthy after 20 s without news, the primary gets 30 s to drain). On loopback the
# monitor checks every 500 ms and gives up on a node after about 2 s, and a primary cut
# off from the monitor and its standbys demotes itself after 2 s (network_partition_timeout,
# which must stay below primary_demote_timeout so that there is never a moment with two
# primaries). A failover takes a few seconds. Production keeps longer timeouts: a
# failover costs more than a pause of a few seconds does.
#
# Ports are picked free at start and kept in DIR/ports. Everything runs as the user
# "postgres" when started by root (PostgreSQL refuses to run as root), everything is
# below DIR (data, configuration, logs, pid files), and nothing listens beyond 127.0.0.1.
# Authentication is trust: this is a cluster for a laptop or a test, never for production.
set -euo pipefail

BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
NODES=(node1 node2 node3)
DBNAME=${PG_HA_DBNAME:-paywallet}

die() { echo "pg-ha-cluster: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: $0 start|stop|status|url|primary|kill|freeze|thaw|run DIR [NODE]"
CMD=$1
DIR=$2
NODE=${3:-}
command -v pg_autoctl >/dev/null || die "pg_autoctl not found: apt-get install -y postgresql-15-auto-failover (make pg-auto-failover)"
[ -x "$BINDIR/pg_ctl" ] || die "no PostgreSQL 15 binaries in $BINDIR (set PG_BINDIR)"
if [ "$CMD" = start ]; then
	mkdir -p "$DIR"
elif [ ! -d "$DIR" ]; then
	[ "$CMD" = stop ] && exit 0 # nothing to stop (a watcher after the cleanup)
	die "no cluster in $DIR"
fi
DIR=$(cd "$DIR" && pwd)

# as_pg runs a command as the postgres user (when root) with the cluster's environment:
# pg_autoctl keeps its configuration and state under the XDG directories, here below DIR.
as_pg() {
	local env=(env "PATH=$BINDIR:/usr/bin:/bin" "HOME=$DIR" "XDG_CONFIG_HOME=$DIR/xdg/config"
		"XDG_DATA_HOME=$DIR/xdg/data" "XDG_RUNTIME_DIR=$DIR/xdg/run" "PG_CONFIG=$BINDIR/pg_config")
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "${env[@]}" "$@"
	else
		"${env[@]}" "$@"
	fi
}

port_of() { sed -n "s/^$1=//p" "$DIR/ports"; }

free_port() {
	local p
	for _ in $(seq 1 200); do
		p=$((20000 + RANDOM % 40000))
		grep -q "=$p\$" "$DIR/ports" 2>/dev/null && continue
		# Nothing answers on it: free (a race with another program is possible and harmless: start fails).
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
	done
	die "no free port found"
}

monitor_uri() { echo "postgres://autoctl_node@127.0.0.1:$(port_of monitor)/pg_auto_failover?sslmode=disable"; }

psql_monitor() { as_pg "$BINDIR/psql" -X -q -At -h 127.0.0.1 -p "$(port_of monitor)" -U postgres -d pg_auto_failover -c "$1"; }

url() {
	local hosts=() n
	for n in "${NODES[@]}"; do hosts+=("127.0.0.1:$(port_of "$n")"); done
	local IFS=,
	echo "postgres://postgres@${hosts[*]}/$DBNAME?sslmode=disable&target_session_attrs=read-write"
}

# run_node starts `pg_autoctl run` for a node (or the monitor) in its own session and
# process group, so that kill/freeze reach the keeper, its services and PostgreSQL at once.
run_node() {
	local name=$1
	if pgid_of "$name" >/dev/null 2>&1; then return; fi
	setsid bash -c "$(declare -f as_pg); BINDIR='$BINDIR' DIR='$DIR'; as_pg pg_autoctl run --pgdata '$DIR/$name' >>'$DIR/$name.log' 2>&1" </dev/null >/dev/null 2>&1 &
	echo $! >"$DIR/$name.pgid"
}

# pgid_of is the process group of a node's processes, when it runs.
pgid_of() {
	local f="$DIR/$1.pgid" g
	[ -f "$f" ] || return 1
	g=$(cat "$f")
	kill -0 -- "-$g" 2>/dev/null || return 1
	echo "$g"
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND…
	local limit=$1 what=$2
	shift 2
	local end=$((SECONDS + limit))
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || die "timed out after ${limit}s waiting for $what (logs in $DIR/*.log)"
		sleep 0.3
	done
}

settled() { # one primary, every other node secondary
	local states
	states=$(psql_monitor "select string_agg(reportedstate::text, ',' order by nodename) from pgautofailover.node where reportedstate = goalstate")
	[ "$(tr ',' '\n' <<<"$states" | grep -c '^primary$')" = 1 ] &&
		[ "$(tr ',' '\n' <<<"$states" | grep -c '^secondary$')" = $((${#NODES[@]} - 1)) ]
}

create() {
	chmod 0755 "$DIR"
	mkdir -p "$DIR/xdg/config" "$DIR/xdg/data" "$DIR/xdg/run"
	: >"$DIR/ports"
	for n in monitor "${NODES[@]}"; do echo "$n=$(free_port)" >>"$DIR/ports"; done
	[ "$(id -u)" = 0 ] && chown -R postgres: "$DIR"

	as_pg pg_autoctl create monitor --pgdata "$DIR/monitor" --pgport "$(port_of monitor)" --hostname 127.0.0.1 \
		--listen 127.0.0.1 --pgctl "$BINDIR/pg_ctl" --auth trust --no-ssl >>"$DIR/monitor.log" 2>&1 || die "create monitor failed: see $DIR/monitor.log"
	run_node monitor
	wait_for 60 "the monitor" psql_monitor "select 1"
	# Fail over in seconds on loopback (see the header). Milliseconds.
	local gucs=(health_check_period=500 health_check_timeout=500 health_check_max_retries=1 health_check_retry_delay=200
		node_considered_unhealthy_timeout=2000 primary_demote_timeout=4000 startup_grace_period=2000) g
	for g in "${gucs[@]}"; do psql_monitor "alter system set pgautofailover.${g%%=*} = ${g#*=}" >/dev/null; done
	psql_monitor "select pg_reload_conf()" >/dev/null

	local n first=1
	for n in "${NODES[@]}"; do
		as_pg pg_autoctl create postgres --pgdata "$DIR/$n" --pgport "$(port_of "$n")" --hostname 127.0.0.1 --listen 127.0.0.1 --name "$n" \
			--pgctl "$BINDIR/pg_ctl" --dbname "$DBNAME" --monitor "$(monitor_uri)" --auth trust --no-ssl \
			>>"$DIR/$n.log" 2>&1 || die "create $n failed: see $DIR/$n.log"
		as_pg pg_autoctl config set --pgdata "$DIR/$n" timeout.network_partition_timeout 2 >/dev/null
		as_pg pg_autoctl config set --pgdata "$DIR/$n" timeout.postgresql_restart_failure_timeout 5 >/dev/null
		run_node "$n"
		if [ $first = 1 ]; then
			wait_for 90 "$n to be up" node_is "$n" single
			first=0
		fi
	done
	for n in "${NODES[@]:1}"; do wait_for 180 "$n to be a standby" node_is "$n" secondary; done
	# Every commit waits for one of the two standbys (synchronous_standby_names = ANY 1 (…)).
	psql_monitor "select pgautofailover.set_formation_number_sync_standbys('default', 1)" >/dev/null
	wait_for 60 "synchronous replication on the primary" sync_on
}

# sync_on: the primary has a synchronous (quorum) standby streaming.
sync_on() {
	local p
	p=$(psql_monitor "select nodeport from pgautofailover.node where reportedstate = 'primary' and goalstate = 'primary'")
	[ -n "$p" ] && [ "$(as_pg "$BINDIR/psql" -X -q -At -h 127.0.0.1 -p "$p" -U postgres -d postgres \
		-c "select count(*) from pg_stat_replication where sync_state in ('sync', 'quorum')")" -ge 1 ]
}

node_is() { [ "$(psql_monitor "select reportedstate from pgautofailover.node where nodename = '$1' and reportedstate = goalstate")" = "$2" ]; }

# signal_node sends a signal to every process of NODE: the pg_autoctl keeper and its
# services (their process group), PostgreSQL's postmaster and its children (backends,
# walsenders, the walreceiver: each in a session of its own, so they are found by parent).
signal_node() {
	local g pm="" kids=""
	g=$(pgid_of "$NODE") || die "$NODE is not running"
	[ -f "$DIR/$NODE/postmaster.pid" ] && pm=$(head -1 "$DIR/$NODE/postmaster.pid")
	# The children first when stopping (no backend sees its postmaster gone), after when resuming.
	[ -n "$pm" ] && kids=$(pgrep -P "$pm" || true)
	case $1 in
	CONT)
		kill -CONT -- "-$g" 2>/dev/null || true
		[ -n "$pm" ] && kill -CONT "$pm" 2>/dev/null || true
		for k in $kids; do kill -CONT "$k" 2>/dev/null || true; done
		;;
	*)
		for k in $kids; do kill "-$1" "$k" 2>/dev/null || true; done
		[ -n "$pm" ] && kill "-$1" "$pm" 2>/dev/null || true
		kill "-$1" -- "-$g" 2>/dev/null || true
		;;
	esac
}

need_node() {
	[ -n "$NODE" ] || die "$CMD needs a node name (${NODES[*]})"
	[ -d "$DIR/$NODE" ] || die "no node $NODE in $DIR"
}

case $CMD in
start)
	if [ ! -f "$DIR/ports" ]; then
		create
	else
		for n in monitor "${NODES[@]}"; do run_node "$n"; done
	fi
	wait_for 180 "one primary and two standbys" settled
	# PG_HA_WATCH_PID: stop the cluster when that process is gone (a test
	# binary that dies or times out does not leave the cluster running).
	if [ -n "${PG_HA_WATCH_PID:-}" ]; then
		setsid bash -c "while kill -0 $PG_HA_WATCH_PID 2>/dev/null; do sleep 1; done; '$0' stop '$DIR'" </dev/null >/dev/null 2>&1 &
	fi
	url
	;;
url) url ;;
status) as_pg pg_autoctl show state --pgdata "$DIR/monitor" ;;
primary) psql_monitor "select nodename from pgautofailover.node where reportedstate = 'primary' and goalstate = 'primary'" ;;
kill)
	# The whole node, as a machine that loses power: killing the postmaster alone is not a
	# failover, the keeper starts PostgreSQL again within a few seconds (crash recovery).
	need_node
	signal_node KILL
	wait_for 10 "$NODE to be gone" sh -c "! kill -0 -- -$(cat "$DIR/$NODE.pgid") 2>/dev/null"
	;;
freeze) need_node && signal_node STOP ;;
thaw) need_node && signal_node CONT ;;
run)
	need_node
	# A node killed with its PostgreSQL leaves postmaster.pid behind; pg_autoctl and
	# PostgreSQL see the pid is gone and start anyway.
	run_node "$NODE"
	;;
settled) settled ;;
stop)
	for n in "${NODES[@]}" monitor; do
		if g=$(pgid_of "$n"); then
			kill -CONT -- "-$g" 2>/dev/null || true
			kill -TERM -- "-$g" 2>/dev/null || true
		fi
	done
	for n in "${NODES[@]}" monitor; do
		if g=$(pgid_of "$n"); then
			end=$((SECONDS + 30))
			while kill -0 -- "-$g" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
			kill -KILL -- "-$g" 2>/dev/null || true
		fi
	done
	;;
*) die "unknown command $CMD" ;;
esac
