// Package hatest is the failover test: the payments service and the BFF
// on a PostgreSQL HA cluster (scripts/pg-ha-cluster.sh: pg_auto_failover,
// a monitor and three data nodes on loopback, synchronous replication)
// while its primary is lost, and nothing acknowledged may be lost with it.
//
// A round runs the soak (internal/soak: every money operation, with
// Idempotency-Keys, retried on a 503 or a lost answer as a client should)
// against two paymentsd instances on the cluster's multi-host URL
// (target_session_attrs=read-write), and beside it two wallet binaries as
// BFFs only (--service-url, --sessions-database on the same cluster) under
// load that touches their PostgreSQL: login starts (the shared rate
// limiter), session look-ups, event streams fed by the services' webhooks
// through bffpg. A few seconds in, the primary is lost:
//
//   - kill: the primary node dies (SIGKILL of its pg_autoctl keeper, its
//     postmaster and every backend, as a machine that loses power). Killing
//     the postmaster alone is no failover: the keeper starts PostgreSQL
//     again within about three seconds and stays primary (crash recovery,
//     which the soak already covers).
//   - freeze: the primary's network is cut (SIGSTOP of the keeper, the
//     postmaster and its backends: connections hang, nothing answers, as
//     behind a dead switch); a standby is promoted; ten seconds after
//     that it comes back (SIGCONT), finds itself demoted and rejoins as a
//     standby. Connections to it hang rather than break, so this round
//     shows whether the service gives up on a silent primary.
//   - drain: a service instance is drained (SIGTERM) mid-load and started
//     again, then the primary is killed as in kill.
//
// Afterwards the soak's checks run (every acknowledged write in the books
// exactly once, nothing nobody asked for, no overdraft, conservation of
// money, `paymentsd ledger verify`), and the round's figures are printed:
// the time without writes (the longest gap between two successful writes
// from the fault until the end), the answers 503, any other 5xx (must be
// none: a failover is a 503, never a 500), and the requests lost (an
// acknowledged write missing from the books, or a request without an answer
// within its patience: must be 0). The BFFs' answers must be good or 503
// too; they reach the service instances through a small load balancer that
// takes an instance out while its /readyz answers 503, as production's does.
//
// TestFailover runs when pg_autoctl is installed (make pg-auto-failover),
// and skips otherwise. HATEST_ROUNDS chooses the rounds (default: one short
// kill round, for make test); make ha-test runs kill,freeze,drain.
package hatest
