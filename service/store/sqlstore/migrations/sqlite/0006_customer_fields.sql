-- Every field of the reference's customers, and deletion (SQLite).
-- Conventions as in 0001_init.sql.
--   * kyb_status: a business customer's verification status, '' for none;
--   * profile: the customer's other fields (region, currencies, phone
--     number, address, the fields of its type) as the service's JSON
--     document, NULL for none;
--   * identifier: an individual's identification number, sealed with the
--     at-rest key (never stored in clear), NULL for none;
--   * deleted_at: when the customer was deleted, NULL while it is not.
-- A platformCustomerId is unique among customers that are not deleted: a
-- deleted customer's id is free for a new customer, as in the reference.

ALTER TABLE customers ADD COLUMN kyb_status TEXT NOT NULL DEFAULT '';
ALTER TABLE customers ADD COLUMN profile BLOB;
ALTER TABLE customers ADD COLUMN identifier BLOB;
ALTER TABLE customers ADD COLUMN deleted_at INTEGER;

DROP INDEX customers_platform_customer_id;
CREATE UNIQUE INDEX customers_platform_customer_id ON customers (platform_customer_id) WHERE deleted_at IS NULL;
CREATE INDEX transactions_customer_in_flight ON transactions (customer_id) WHERE next_step_at IS NOT NULL OR status = 'PROCESSING';
