-- The books (package ledger): an append-only double-entry journal.
--
-- ledger_transactions and ledger_entries are written once and never
-- changed: the triggers below refuse UPDATE and DELETE, so a correction is
-- a new transaction (a VOID, a RETURN), never an edit. A wallet's balances
-- stay as the columns internal_accounts.available and .held, written in the
-- same database transaction as its entries; `paymentsd ledger verify`
-- checks that they equal the entries' sums.
--
-- pending_id: the HOLD a POST or VOID resolves. UNIQUE: a pending
-- transaction resolves at most once, whoever tries twice.
CREATE TABLE ledger_transactions (
    id             TEXT    PRIMARY KEY,
    kind           TEXT    NOT NULL,
    transaction_id TEXT,
    quote_id       TEXT,
    pending_id     TEXT    UNIQUE REFERENCES ledger_transactions (id),
    description    TEXT    NOT NULL,
    created_at     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX ledger_transactions_payment ON ledger_transactions (transaction_id, id)
    WHERE transaction_id IS NOT NULL;

-- One row per entry; id is LedgerEntry:<uuid of its transaction>-<n>, so
-- entries sort like their transactions. wallet_id is the internal account
-- of an entry on a wallet's side (NULL on system accounts), with the
-- wallet's balances after the transaction (0 elsewhere).
CREATE TABLE ledger_entries (
    id                    TEXT    PRIMARY KEY,
    ledger_transaction_id TEXT    NOT NULL REFERENCES ledger_transactions (id),
    n                     INTEGER NOT NULL CHECK (n BETWEEN 1 AND 9),
    account_id            TEXT    NOT NULL,
    currency              TEXT    NOT NULL,
    amount                INTEGER NOT NULL CHECK (amount <> 0),
    wallet_id             TEXT,
    available_after       INTEGER NOT NULL,
    held_after            INTEGER NOT NULL,
    created_at            INTEGER NOT NULL,
    UNIQUE (ledger_transaction_id, n)
) STRICT, WITHOUT ROWID;

CREATE INDEX ledger_entries_wallet ON ledger_entries (wallet_id, id) WHERE wallet_id IS NOT NULL;

-- The chain: link n = SHA-256 over link n-1, n and the body hash of the
-- transaction sealed n-th (package ledger, chain.go).
CREATE TABLE ledger_chain (
    seq                   INTEGER PRIMARY KEY CHECK (seq > 0),
    ledger_transaction_id TEXT    NOT NULL UNIQUE REFERENCES ledger_transactions (id),
    link                  BLOB    NOT NULL CHECK (length(link) = 32),
    sealed_at             INTEGER NOT NULL
) STRICT;

-- Transactions posted and not yet chained: the sealer's queue, the only
-- ledger table rows leave.
CREATE TABLE ledger_unsealed (
    ledger_transaction_id TEXT PRIMARY KEY REFERENCES ledger_transactions (id)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER ledger_transactions_no_update BEFORE UPDATE ON ledger_transactions
BEGIN SELECT RAISE(ABORT, 'ledger_transactions rows are immutable'); END;
CREATE TRIGGER ledger_transactions_no_delete BEFORE DELETE ON ledger_transactions
BEGIN SELECT RAISE(ABORT, 'ledger_transactions rows are immutable'); END;
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries rows are immutable'); END;
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
BEGIN SELECT RAISE(ABORT, 'ledger_entries rows are immutable'); END;
CREATE TRIGGER ledger_chain_no_update BEFORE UPDATE ON ledger_chain
BEGIN SELECT RAISE(ABORT, 'ledger_chain rows are immutable'); END;
CREATE TRIGGER ledger_chain_no_delete BEFORE DELETE ON ledger_chain
BEGIN SELECT RAISE(ABORT, 'ledger_chain rows are immutable'); END;

-- A wallet's statement: its entries with what they belong to.
CREATE VIEW ledger_statement AS
SELECT e.id, e.ledger_transaction_id, t.kind, t.transaction_id, t.quote_id, t.description, e.wallet_id,
       e.account_id, e.currency, e.amount, e.available_after, e.held_after, e.created_at
FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.ledger_transaction_id;

-- The opening balances of the wallets that had money before the books
-- are written by Go right after this file (openingBalances).
