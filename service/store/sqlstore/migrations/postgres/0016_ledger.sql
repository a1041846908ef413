-- The books (package ledger): an append-only double-entry journal. See the
-- SQLite migration of the same number for the why of each table.
CREATE TABLE ledger_transactions (
    id             text COLLATE "C" PRIMARY KEY,
    kind           text NOT NULL,
    transaction_id text COLLATE "C",
    quote_id       text COLLATE "C",
    pending_id     text COLLATE "C" UNIQUE REFERENCES ledger_transactions (id),
    description    text NOT NULL,
    created_at     timestamptz NOT NULL
);

CREATE INDEX ledger_transactions_payment ON ledger_transactions (transaction_id, id)
    WHERE transaction_id IS NOT NULL;

-- Unlike on SQLite, ledger_entries and ledger_unsealed have no foreign key
-- to ledger_transactions: they are written in the same statement as their
-- transaction (sqlstore's PostLedger), and under SERIALIZABLE the foreign
-- key's check reads the newest page of ledger_transactions' primary key,
-- which every concurrent payment appends to, so concurrent payments from
-- different wallets kept making PostgreSQL abort one another. `paymentsd
-- ledger verify` checks that every entry and queue row has its transaction.
CREATE TABLE ledger_entries (
    id                    text COLLATE "C" PRIMARY KEY,
    ledger_transaction_id text COLLATE "C" NOT NULL,
    n                     integer NOT NULL CHECK (n BETWEEN 1 AND 9),
    account_id            text COLLATE "C" NOT NULL,
    currency              text NOT NULL,
    amount                bigint NOT NULL CHECK (amount <> 0),
    wallet_id             text COLLATE "C",
    available_after       bigint NOT NULL,
    held_after            bigint NOT NULL,
    created_at            timestamptz NOT NULL,
    UNIQUE (ledger_transaction_id, n)
);

CREATE INDEX ledger_entries_wallet ON ledger_entries (wallet_id, id) WHERE wallet_id IS NOT NULL;

CREATE TABLE ledger_chain (
    seq                   bigint PRIMARY KEY CHECK (seq > 0),
    ledger_transaction_id text COLLATE "C" NOT NULL UNIQUE REFERENCES ledger_transactions (id),
    link                  bytea NOT NULL CHECK (length(link) = 32),
    sealed_at             timestamptz NOT NULL
);

CREATE TABLE ledger_unsealed (
    ledger_transaction_id text COLLATE "C" PRIMARY KEY
);

CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are immutable (% refused)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END
$$;

CREATE TRIGGER ledger_transactions_immutable BEFORE UPDATE OR DELETE ON ledger_transactions
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_transactions_no_truncate BEFORE TRUNCATE ON ledger_transactions
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_immutable BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_chain_immutable BEFORE UPDATE OR DELETE ON ledger_chain
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change();
CREATE TRIGGER ledger_chain_no_truncate BEFORE TRUNCATE ON ledger_chain
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change();

CREATE VIEW ledger_statement AS
SELECT e.id, e.ledger_transaction_id, t.kind, t.transaction_id, t.quote_id, t.description, e.wallet_id,
       e.account_id, e.currency, e.amount, e.available_after, e.held_after, e.created_at
FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.ledger_transaction_id;
