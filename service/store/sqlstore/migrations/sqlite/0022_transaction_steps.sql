-- A payment's next step (its quote's expiry, its settlement) is found
-- through transaction_steps, not through an index on transactions: see
-- the PostgreSQL migration of the same number for why (SERIALIZABLE's
-- page-level predicate locks). SQLite runs one writer at a time and has
-- no such conflicts; it keeps the same tables so that both stores share
-- one set of queries, and its execute writes one index entry fewer.
--
-- A step row is inserted whenever a transaction gets a next step and is
-- never updated; a row whose transaction has moved on (its next_step_at
-- is no longer due_at) is stale and is deleted by the settlement worker's
-- next round (DueTransactions).
CREATE TABLE transaction_steps (
    due_at         INTEGER NOT NULL,
    transaction_id TEXT    NOT NULL,
    PRIMARY KEY (due_at, transaction_id)
) STRICT, WITHOUT ROWID;

INSERT INTO transaction_steps (due_at, transaction_id)
    SELECT next_step_at, id FROM transactions WHERE next_step_at IS NOT NULL;

DROP INDEX transactions_due;
DROP INDEX transactions_customer_in_flight;
