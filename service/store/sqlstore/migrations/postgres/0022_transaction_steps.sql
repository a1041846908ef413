-- A payment's next step (its quote's expiry, its settlement) is found
-- through transaction_steps, not through an index on transactions.
--
-- Why: executing a quote changes its transaction's status and
-- next_step_at. While an index named either column (transactions_due,
-- and transactions_customer_in_flight's predicate), that UPDATE could not
-- be HOT: it added a new entry to every index of transactions, the
-- primary key's among them. Ids are time-ordered, so the payments in
-- flight at one moment share the primary key's last leaf page; every
-- concurrent execute read that page (its own transaction by id) and
-- wrote it (the new entry), and SERIALIZABLE's page-level predicate
-- locks made each pair of them a read/write cycle: one of the two failed
-- and ran again. Eight clients paying at once retried about once per
-- payment (service tests, 5 s: 1,254 pairs, 1,781 retries); without the
-- two indexes and with room on each page for the new row version
-- (fillfactor) the execute's UPDATE stays in its heap page and touches no
-- index (3,131 pairs, 389 retries).
--
-- A step row is inserted whenever a transaction gets a next step and is
-- never updated; a row whose transaction has moved on (its next_step_at
-- is no longer due_at) is stale and is deleted by the settlement worker's
-- next round (DueTransactions). Nothing but that worker reads the table.
CREATE TABLE transaction_steps (
    due_at         timestamptz NOT NULL,
    transaction_id text        NOT NULL,
    PRIMARY KEY (due_at, transaction_id)
);

INSERT INTO transaction_steps (due_at, transaction_id)
    SELECT next_step_at, id FROM transactions WHERE next_step_at IS NOT NULL;

DROP INDEX transactions_due;
DROP INDEX transactions_customer_in_flight;

ALTER TABLE transactions SET (fillfactor = 80);
