-- Money in (PostgreSQL). Same columns and indexes as
-- migrations/sqlite/0007_deposits.sql.

ALTER TABLE internal_accounts ADD COLUMN deposit_reference text COLLATE "C";
CREATE UNIQUE INDEX internal_accounts_deposit_reference ON internal_accounts (deposit_reference);

CREATE UNIQUE INDEX transactions_incoming_reference ON transactions (destination_account_id, reference)
    WHERE type = 'INCOMING' AND reference <> '';
