package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"paywallet/service/ledger"
	"paywallet/service/seclog"
	"paywallet/service/store/sqlstore"
)

// maxListed bounds the problems `ledger verify` lists (it counts them all).
const maxListed = 20

// runLedger is `paymentsd ledger verify`: it recomputes the database's
// hash chain and checks every invariant of the books (package ledger,
// verify.go), prints what it checked and the chain head on out, and fails
// naming the first bad row. It only reads the books: a running service may
// keep writing meanwhile (the verification reads one snapshot).
func runLedger(ctx context.Context, args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("paymentsd ledger verify", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: paymentsd ledger verify --database DB [--anchor FILE] [--security-heads FILE]

Verifies the books of the service's database: recomputes the hash chain of
the ledger transactions, and checks that each sums to zero per currency,
that every wallet's balances equal its entries and none is negative, that
every ledger transaction is chained or waiting to be, and that every
payment has the ledger transactions its status requires. It also
recomputes every customer's security log chain (security_events): a
record changed, removed from the middle or moved is a problem. Prints what
it checked and the chain head; exits 1 naming the first bad row when
anything is wrong (an amount changed, a row deleted or inserted, a cached
balance changed by hand, a security record edited). With --security-heads,
each customer's chain must still hold the newest record the file names
(the removal of newest records is caught), and the file is rewritten with
today's heads when everything verifies: run it from a schedule and keep the
file where the database's writers cannot.

The books hold no sealed secrets: no --data-key is needed. Opening the
database applies pending migrations, as the service does.

Flags:
`)
		fs.PrintDefaults()
	}
	if len(args) == 0 || args[0] != "verify" {
		fs.Usage()
		if len(args) == 0 {
			return errors.New("ledger: name a command: verify")
		}
		return fmt.Errorf("ledger: unknown command %q (only verify)", args[0])
	}
	database := os.Getenv("WALLET_DATABASE")
	fs.StringVar(&database, "database", database, "SQLite file path, or a postgres:// URL (required) [WALLET_DATABASE]")
	headsFile := fs.String("security-heads", "", `JSON file {"<customer id>": {"sequence": N, "hash": "<hex>"}, …}: the security logs' heads of the last verification, checked and then rewritten`)
	anchorFile := fs.String("anchor", "", `JSON file {"sequence": N, "hash": "<hex>"}, a chain head kept elsewhere (GET /ledger/head answers one): the chain must still have that link`)
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("ledger verify: unexpected arguments %q", fs.Args())
	}
	if database == "" {
		return errors.New("ledger verify: --database is required")
	}
	var opts sqlstore.VerifyOptions
	if *anchorFile != "" {
		a, err := readAnchor(*anchorFile)
		if err != nil {
			return fmt.Errorf("ledger verify: --anchor: %w", err)
		}
		opts.Anchor = &a
	}
	if err := checkExists(database); err != nil {
		return fmt.Errorf("ledger verify: %w", err)
	}
	st, err := sqlstore.Open(ctx, database)
	if err != nil {
		return fmt.Errorf("ledger verify: %w", err)
	}
	defer st.Close()
	start := time.Now()
	r, err := st.VerifyLedger(ctx, opts)
	var problem *ledger.Problem
	if err != nil && !errors.As(err, &problem) {
		return fmt.Errorf("ledger verify: %w", err)
	}
	var heads map[string]seclog.Head
	if *headsFile != "" {
		if heads, err = readHeads(*headsFile); err != nil {
			return fmt.Errorf("ledger verify: --security-heads: %w", err)
		}
	}
	sec, err := st.VerifySecurityLog(ctx, heads)
	var secProblem *seclog.Problem
	if err != nil && !errors.As(err, &secProblem) {
		return fmt.Errorf("ledger verify: %w", err)
	}
	printReport(out, redact(database), &r, opts.Anchor, time.Since(start))
	printSecurityReport(out, &sec)
	switch {
	case problem != nil:
		return fmt.Errorf("ledger verify: FAILED: %w", problem)
	case secProblem != nil:
		return fmt.Errorf("ledger verify: FAILED: %w", secProblem)
	}
	if *headsFile != "" {
		if err := writeHeads(*headsFile, sec.Heads); err != nil {
			return fmt.Errorf("ledger verify: --security-heads: %w", err)
		}
		fmt.Fprintf(out, "%-22s%d customers' heads written to %s\n", "security heads", len(sec.Heads), *headsFile)
	}
	fmt.Fprintln(out, "ledger verify: OK")
	return nil
}

// readHeads reads a --security-heads file; a missing one is the first run.
func readHeads(path string) (map[string]seclog.Head, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var heads map[string]seclog.Head
	if err := json.Unmarshal(b, &heads); err != nil {
		return nil, fmt.Errorf("%s is not a heads file: %w", path, err)
	}
	return heads, nil
}

// writeHeads replaces the file with heads, atomically (a rename).
func writeHeads(path string, heads map[string]seclog.Head) error {
	if heads == nil {
		heads = map[string]seclog.Head{}
	}
	b, err := json.MarshalIndent(heads, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// printSecurityReport adds the security logs' lines to printReport's.
func printSecurityReport(w io.Writer, r *seclog.Report) {
	fmt.Fprintf(w, "%-22s%d records of %d customers, every chain recomputed\n", "security log", r.Records, r.Customers)
	if r.ProblemCount == 0 {
		return
	}
	fmt.Fprintf(w, "%-22s%d\n", "security problems", r.ProblemCount)
	for i, p := range r.Problems {
		if i == maxListed {
			fmt.Fprintf(w, "  … and %d more\n", r.ProblemCount-int64(i))
			break
		}
		fmt.Fprintf(w, "  %s\n", p.Error())
	}
}

func printReport(w io.Writer, database string, r *ledger.Report, anchor *ledger.Anchor, took time.Duration) {
	line := func(what, format string, args ...any) {
		fmt.Fprintf(w, "%-22s%s\n", what, fmt.Sprintf(format, args...))
	}
	line("database", "%s", database)
	opened := "not recorded"
	if !r.OpenedAt.IsZero() {
		opened = r.OpenedAt.UTC().Format(time.RFC3339Nano)
	}
	line("books opened", "%s", opened)
	line("ledger transactions", "%d (%d sealed, %d waiting for the sealer)", r.Transactions, r.Sealed, r.Unsealed)
	line("entries", "%d", r.Entries)
	line("accounts", "%d with entries", r.Accounts)
	line("wallets", "%d (cached balances compared with the entries)", r.Wallets)
	line("payments", "%d checked against their status; %d made before the books opened", r.Payments, r.Exempt)
	if r.Head.Seq == 0 {
		line("chain head", "none (nothing sealed yet)")
	} else {
		line("chain head", "seq %d, %s, sealed at %s", r.Head.Seq, r.Head.Hash, r.Head.At.UTC().Format(time.RFC3339Nano))
	}
	if anchor != nil {
		line("anchor", "seq %d, %s", anchor.Seq, anchor.Hash)
	}
	rate := ""
	if s := took.Seconds(); s > 0 {
		rate = fmt.Sprintf(", %.0f entries/s", float64(r.Entries)/s)
	}
	line("took", "%s%s", took.Round(took/1000+1), rate)
	if r.ProblemCount == 0 {
		return
	}
	line("problems", "%d", r.ProblemCount)
	for i, p := range r.Problems {
		if i == maxListed {
			fmt.Fprintf(w, "  … and %d more\n", r.ProblemCount-int64(i))
			break
		}
		fmt.Fprintf(w, "  %s\n", p.Error())
	}
}

// readAnchor reads a chain head as GET /ledger/head answers it; members
// other than sequence and hash (its signature) are not looked at here.
func readAnchor(path string) (ledger.Anchor, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ledger.Anchor{}, err
	}
	var head struct {
		Sequence *int64 `json:"sequence"`
		Hash     string `json:"hash"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return ledger.Anchor{}, fmt.Errorf("%s: %w", path, err)
	}
	var bad []string
	if head.Sequence == nil || *head.Sequence < 1 {
		bad = append(bad, "sequence must be a link number from 1")
	}
	h, ok := ledger.ParseHash(strings.ToLower(head.Hash))
	if !ok {
		bad = append(bad, "hash must be 64 hex digits")
	}
	if len(bad) > 0 {
		return ledger.Anchor{}, fmt.Errorf("%s: %s", path, strings.Join(bad, "; "))
	}
	return ledger.Anchor{Seq: *head.Sequence, Hash: h}, nil
}

// checkExists refuses an SQLite path with no file: opening it would make
// an empty database, whose books verify.
func checkExists(database string) error {
	if isPostgres(database) || strings.HasPrefix(database, "file:") {
		return nil
	}
	if _, err := os.Stat(database); err != nil {
		return fmt.Errorf("no database at %s: %w", database, err)
	}
	return nil
}

func isPostgres(dsn string) bool {
	scheme, _, ok := strings.Cut(dsn, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// redact hides a PostgreSQL URL's password.
func redact(database string) string {
	if !isPostgres(database) {
		return database
	}
	u, err := url.Parse(database)
	if err != nil {
		return "postgres database"
	}
	return u.Redacted()
}
