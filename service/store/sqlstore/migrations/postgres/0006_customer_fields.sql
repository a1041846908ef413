-- Every field of the reference's customers, and deletion (PostgreSQL).
-- Same columns and indexes as migrations/sqlite/0006_customer_fields.sql.

ALTER TABLE customers ADD COLUMN kyb_status text NOT NULL DEFAULT '';
ALTER TABLE customers ADD COLUMN profile bytea;
ALTER TABLE customers ADD COLUMN identifier bytea;
ALTER TABLE customers ADD COLUMN deleted_at timestamptz;

DROP INDEX customers_platform_customer_id;
CREATE UNIQUE INDEX customers_platform_customer_id ON customers (platform_customer_id) WHERE deleted_at IS NULL;
CREATE INDEX transactions_customer_in_flight ON transactions (customer_id) WHERE next_step_at IS NOT NULL OR status = 'PROCESSING';
