-- Incoming UMA payments: the sender's and the receiver's UMA addresses of
-- an INCOMING transaction made by an UMA payment (empty otherwise).
ALTER TABLE transactions ADD COLUMN sender_uma_address TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN receiver_uma_address TEXT NOT NULL DEFAULT '';

-- An incoming UMA payment finds its receiver by UMA address.
CREATE INDEX customers_uma_address ON customers (uma_address);
