-- Money in (SQLite): deposit references and deposits matched by them.

-- Every internal account has a deposit reference (store.NewDepositReference),
-- the code a bank transfer into it quotes. The store makes one for each new
-- account; the migration's Go step (sqlstore.backfillDepositReferences)
-- gives one to every existing account. Unique, and never reassigned.
ALTER TABLE internal_accounts ADD COLUMN deposit_reference TEXT;
CREATE UNIQUE INDEX internal_accounts_deposit_reference ON internal_accounts (deposit_reference);

-- A bank credit is recorded once: an incoming transaction's reference (the
-- bank's reference of a deposit, or one made from the id; when set) is unique per
-- receiving account, so recording the same credit twice is refused.
CREATE UNIQUE INDEX transactions_incoming_reference ON transactions (destination_account_id, reference)
    WHERE type = 'INCOMING' AND reference <> '';
