package bff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
)

// SignIn is what the BFF remembers about how a wallet session began: the
// User-Agent of the browser that signed in and when, so that the Security
// view can name each session's device ("Chrome on macOS") and a person can
// tell a session of theirs from one they do not know. It is kept per wallet
// session (not per cookie), because the list shows every session of the
// account, including those of the person's other browsers.
type SignIn struct {
	// UserAgent is the header as sent, without control or non-ASCII bytes
	// and cut to MaxUserAgent bytes.
	UserAgent string `json:"userAgent"`
	// At is when the sign-in completed; a refreshed session keeps the time
	// of the sign-in it descends from.
	At time.Time `json:"at"`
}

// MaxUserAgent caps the bytes of a User-Agent the BFF stores. Real ones are
// 100 to 300 bytes; a header can be up to the server's header limit, and
// the store must not grow by that much for every sign-in.
const MaxUserAgent = 512

// SignInStore keeps the [SignIn] of each wallet session the BFF created,
// under the wallet session's id, until the wallet session ends (the ttl is
// its remaining life) or it is revoked through the BFF. A [SessionStore]
// that also implements SignInStore ([MemoryStore] and the PostgreSQL store
// of paywallet/bff/bffpg do) keeps them with the cookie sessions, so every
// BFF instance sharing it sees the same devices. Implementations must be
// safe for concurrent use.
type SignInStore interface {
	// PutSignIn stores si under the wallet session id for ttl, replacing
	// any previous value.
	PutSignIn(ctx context.Context, sessionID string, si SignIn, ttl time.Duration) error
	// SignIns returns the live sign-ins of the given wallet session ids;
	// ids without one are absent from the map.
	SignIns(ctx context.Context, sessionIDs []string) (map[string]SignIn, error)
	// DeleteSignIn removes one; deleting an absent id is not an error.
	DeleteSignIn(ctx context.Context, sessionID string) error
}

// CleanUserAgent keeps the printable ASCII of a User-Agent header, cut to
// MaxUserAgent bytes. Stores call it too (it is exported for
// paywallet/bff/bffpg), so the bound holds whoever puts a sign-in. User-Agents are ASCII by their grammar; anything else
// is dropped rather than stored, so that what the store holds is always
// valid UTF-8 text without NUL bytes.
func CleanUserAgent(v string) string {
	b := make([]byte, 0, min(len(v), MaxUserAgent))
	for i := 0; i < len(v) && len(b) < MaxUserAgent; i++ {
		if c := v[i]; c >= 0x20 && c < 0x7f {
			b = append(b, c)
		}
	}
	return string(bytes.TrimSpace(b))
}

// rememberSignIn records the User-Agent of the request that completed a
// sign-in, for the wallet session it created. A store failure is logged,
// not returned: the sign-in has succeeded and the device name is only a
// convenience of the Security view.
func (s *Server) rememberSignIn(c *fiber.Ctx, sessionID string, ttl time.Duration) {
	si := SignIn{UserAgent: CleanUserAgent(c.Get(fiber.HeaderUserAgent)), At: s.now()}
	if err := s.signIns.PutSignIn(c.UserContext(), sessionID, si, ttl); err != nil {
		s.log.WarnContext(c.UserContext(), "bff: remembering a sign-in", slog.Any("err", err))
	}
}

// carrySignIn moves the sign-in of a refreshed wallet session to the
// session that replaced it: a refresh happens in the same browser, so the
// device and the sign-in time stay what they were.
func (s *Server) carrySignIn(ctx context.Context, from, to string, ttl time.Duration) {
	got, err := s.signIns.SignIns(ctx, []string{from})
	if err == nil {
		si, ok := got[from]
		if !ok {
			return
		}
		if err = s.signIns.PutSignIn(ctx, to, si, ttl); err == nil {
			err = s.signIns.DeleteSignIn(ctx, from)
		}
	}
	if err != nil {
		s.log.WarnContext(ctx, "bff: carrying a sign-in over a refresh", slog.Any("err", err))
	}
}

// forgetSignIn deletes the sign-in of a wallet session that has ended.
func (s *Server) forgetSignIn(ctx context.Context, sessionID string) {
	if err := s.signIns.DeleteSignIn(ctx, sessionID); err != nil {
		s.log.WarnContext(ctx, "bff: forgetting a sign-in", slog.Any("err", err))
	}
}

// withDevices is the annotation of GET /api/auth/sessions: each session
// the BFF signed in gets a "device" field named from its User-Agent. When
// the store cannot be read the list goes out as the service sent it; the
// devices are a convenience, the list is not.
func (s *Server) withDevices(ctx context.Context, body []byte) []byte {
	ids := sessionIDs(body)
	if len(ids) == 0 {
		return body
	}
	got, err := s.signIns.SignIns(ctx, ids)
	if err != nil {
		s.log.WarnContext(ctx, "bff: reading sign-ins", slog.Any("err", err))
		return body
	}
	if len(got) == 0 {
		return body
	}
	devices := make(map[string]Device, len(got))
	for id, si := range got {
		devices[id] = parseUserAgent(si.UserAgent)
	}
	return addDevices(body, devices)
}

// sessionIDs returns the ids of the objects in the "data" array of a list
// answer.
func sessionIDs(body []byte) []string {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &list) != nil {
		return nil
	}
	ids := make([]string, 0, len(list.Data))
	for _, d := range list.Data {
		if d.ID != "" {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// addDevices inserts `"device":{…}` as the last member of each object in
// the "data" array of body whose "id" is in devices, and changes no other
// byte: the service's answer is passed on as it is, only annotated. An
// object that already has a "device" member is left alone. Anything that
// is not a JSON object with such an array comes back unchanged.
func addDevices(body []byte, devices map[string]Device) []byte {
	var ins []deviceInsertion
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return body
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return body
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return body
		}
		if key != "data" {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(v)
		if start < 0 || !bytes.Equal(body[start:end], v) {
			return body
		}
		found, err := deviceInsertions(v, devices)
		if err != nil {
			return body
		}
		for _, f := range found {
			ins = append(ins, deviceInsertion{start + f.at, f.text})
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return body
	}
	if len(ins) == 0 {
		return body
	}
	out := make([]byte, 0, len(body)+64*len(ins))
	last := 0
	for _, in := range ins {
		out = append(out, body[last:in.at]...)
		out = append(out, in.text...)
		last = in.at
	}
	return append(out, body[last:]...)
}

// deviceInsertion is a device member to insert before the closing brace
// at offset at.
type deviceInsertion struct {
	at   int
	text []byte
}

var errNotList = errors.New("bff: not a JSON array")

// deviceInsertions finds, in the JSON array arr, where each object that
// gets a device closes, and the member to insert there.
func deviceInsertions(arr []byte, devices map[string]Device) ([]deviceInsertion, error) {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errNotList
	}
	var out []deviceInsertion
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		if len(el) < 2 || el[0] != '{' || !bytes.Equal(arr[end-len(el):end], el) {
			continue
		}
		var obj struct {
			ID     string          `json:"id"`
			Device json.RawMessage `json:"device"`
		}
		if json.Unmarshal(el, &obj) != nil || obj.Device != nil {
			continue
		}
		d, ok := devices[obj.ID]
		if !ok {
			continue
		}
		member, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		text := append([]byte(`"device":`), member...)
		if len(bytes.TrimSpace(el[1:len(el)-1])) > 0 {
			text = append([]byte{','}, text...)
		}
		out = append(out, deviceInsertion{at: end - 1, text: text})
	}
	return out, nil
}
