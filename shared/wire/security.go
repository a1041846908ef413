package wire

// Headers by which the BFF tells the service who is at the other end of a
// wallet's request: the end user's IP address and the device as the BFF
// names it ("Chrome on Android"). Used only for the customer's security
// log, never trusted for anything else; absent means unknown.
const (
	HeaderEndUserIP     = "Service-End-User-Ip"
	HeaderEndUserDevice = "Service-End-User-Device"
)

// SecurityEvent is one record of a customer's security log (GET
// /customers/{customerId}/security-events). hash and previousHash are the
// record's links of the customer's chain (service/seclog says how to
// recompute them).
type SecurityEvent struct {
	ID           string         `json:"id"`
	CustomerID   string         `json:"customerId"`
	AccountID    string         `json:"accountId,omitempty"`
	Sequence     int64          `json:"sequence"`
	Type         string         `json:"type"`
	Details      map[string]any `json:"details"`
	CreatedAt    string         `json:"createdAt"`
	Hash         string         `json:"hash"`
	PreviousHash string         `json:"previousHash"`
}

// SignOutEverywhereRequest is the body of POST /auth/sign-out-everywhere:
// the token of a security e-mail's link.
type SignOutEverywhereRequest struct {
	Token string `json:"token"`
}

// SignOutEverywhereResponse counts the sessions the link revoked.
type SignOutEverywhereResponse struct {
	RevokedSessions int `json:"revokedSessions"`
}
