// Package soak is the seeded fault-injection run of the payments service,
// in the manner of TigerBeetle's VOPR and Jepsen's bank test: a seed
// chooses a random sequence of every money operation (sandbox funding,
// bank deposits through `paymentsd deposit`, transfers in and out,
// quotes, executes — several at once of one quote —, cancels, agents'
// payments and the platform's approvals of them, just-in-time funded
// payments), with destinations whose sandbox digits make payments settle,
// fail, come back or stay stuck, sent to real paymentsd processes while
// faults strike at random points: SIGKILL of an instance, of all of them,
// of a `paymentsd deposit` run, and (on PostgreSQL) an immediate shutdown
// of the database. A request whose answer is lost is sent again with its
// Idempotency-Key until it is answered, as a client should.
//
// After the run it waits until everything has settled and the chain is
// sealed, and checks the books against the answers (see world.check):
// every acknowledged request in the books exactly once, nothing in them
// that nobody asked for, conservation of money per currency and per
// wallet, no overdraft, the chain intact; then `paymentsd ledger verify`
// checks them its own way.
//
// TestSoak runs a round on PostgreSQL (two instances) and one on SQLite
// (one instance). SOAK_SEED replays a seed (the seed is printed at the
// start and with every failure), SOAK_DURATION lengthens the rounds:
//
//	make soak SEED=1234 DURATION=10m
//
// A seed fixes the faults and when they strike, and each client's
// sequence of draws (operations, amounts, outcomes, races); it does not fix
// how the processes interleave. A replay runs the same scenario as long as
// the service answers as it did; where another interleaving changes an
// answer (a refusal for want of money, which execute of a race won), that
// client's later draws differ.
package soak
