package webhooksig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Known answers for the Standard Webhooks v1a signature.
//
// The spec (spec/standard-webhooks.md, version 1.0.0) has no Ed25519
// vector: its example header's v1a entry comes without the key. The
// reference library's Go test (libraries/go/webhook_asymmetric_test.go,
// TestAsymmetricWebhookSign, github.com/standard-webhooks/standard-webhooks)
// has one, a seed and the entry it must sign; it is the first vector here.
// The others are this package's, made from fixed seeds by
// `go test -run TestStandardVectors -update` and checked by an
// independent implementation (Node's crypto, testdata/ed25519_check.mjs)
// in TestStandardVectorsNode.

var update = flag.Bool("update", false, "rewrite testdata/standard_vectors.json")

const vectorsFile = "testdata/standard_vectors.json"

type vectorKey struct {
	SecretKey string `json:"secretKey,omitempty"`
	PublicKey string `json:"publicKey"`
}

type vector struct {
	Name      string      `json:"name"`
	Source    string      `json:"source"`
	Keys      []vectorKey `json:"keys"`
	ID        string      `json:"id"`
	Timestamp string      `json:"timestamp"`
	Body      string      `json:"body"`
	Signature string      `json:"signature"` // webhook-signature: the i-th v1a entry is keys[i]'s
}

type vectorFile struct {
	Note    string   `json:"note"`
	Vectors []vector `json:"vectors"`
}

// libraryVector is the reference library's known answer (see above).
var libraryVector = vector{
	Name:      "reference library: TestAsymmetricWebhookSign",
	Source:    "github.com/standard-webhooks/standard-webhooks libraries/go/webhook_asymmetric_test.go",
	Keys:      []vectorKey{{SecretKey: "whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk="}},
	ID:        "msg_p5jXN8AQM9LWM0D4loKWxJek",
	Timestamp: "1614265330",
	Body:      `{"test": 2432232314}`,
	Signature: "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag==",
}

// vectorSeed is the fixed Ed25519 key number n of this package's vectors.
func vectorSeed(n string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("paywallet webhooksig test vector key " + n))
	return ed25519.NewKeyFromSeed(seed[:])
}

// makeVectors computes the vector file: the library's vector as given,
// with its public key derived, and this package's vectors signed here.
func makeVectors(t *testing.T) vectorFile {
	t.Helper()
	lib := libraryVector
	priv, err := ParseStandardSecretKey(lib.Keys[0].SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	lib.Keys = []vectorKey{{SecretKey: lib.Keys[0].SecretKey, PublicKey: StandardPublicKey(priv.Public().(ed25519.PublicKey))}}
	out := vectorFile{
		Note:    "Standard Webhooks v1a known answers; see vectors_test.go. Regenerate with go test -run TestStandardVectors -update ./shared/webhooksig/",
		Vectors: []vector{lib},
	}
	ours := []struct {
		name, id, ts, body string
		keys               []string
	}{
		{"one key, a service webhook", "Webhook:0199a3c4-0000-7000-8000-000000000001", "1800000000", body, []string{"1"}},
		{"two keys during a rotation, the newer first", "Webhook:0199a3c4-0000-7000-8000-000000000001", "1800000000", body, []string{"2", "1"}},
		{"UTF-8 body", "Webhook:0199a3c4-0000-7000-8000-000000000002", "1800000300", `{"id":"Webhook:0199a3c4-0000-7000-8000-000000000002","note":"café € 😀"}`, []string{"1"}},
		{"empty body", "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", "1674087231", "", []string{"3"}},
	}
	for _, o := range ours {
		v := vector{Name: o.name, Source: "paywallet", ID: o.id, Timestamp: o.ts, Body: o.body}
		var entries []string
		for _, n := range o.keys {
			priv := vectorSeed(n)
			v.Keys = append(v.Keys, vectorKey{SecretKey: StandardSecretKey(priv), PublicKey: StandardPublicKey(priv.Public().(ed25519.PublicKey))})
			e, err := SignStandard(priv, o.id, mustInt(t, o.ts), []byte(o.body))
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, e)
		}
		v.Signature = strings.Join(entries, " ")
		out.Vectors = append(out.Vectors, v)
	}
	return out
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func readVectors(t *testing.T) vectorFile {
	t.Helper()
	raw, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStandardVectors: the stored vectors are the ones this package
// computes (the library's among them, so SignStandard gives its known
// answer), and each verifies with VerifyStandard under each of its keys
// alone and fails with the body changed.
func TestStandardVectors(t *testing.T) {
	want := makeVectors(t)
	if *update {
		raw, err := json.MarshalIndent(want, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(vectorsFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := readVectors(t)
	if len(got.Vectors) != len(want.Vectors) {
		t.Fatalf("%s has %d vectors, want %d (run with -update)", vectorsFile, len(got.Vectors), len(want.Vectors))
	}
	if got.Vectors[0].Signature != libraryVector.Signature {
		t.Fatalf("the library's vector was changed: %s", got.Vectors[0].Signature)
	}
	for i, v := range got.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			w := want.Vectors[i]
			if v.Signature != w.Signature || v.Body != w.Body || v.ID != w.ID || v.Timestamp != w.Timestamp || len(v.Keys) != len(w.Keys) {
				t.Fatalf("stored %+v\ncomputed %+v", v, w)
			}
			now := time.Unix(mustInt(t, v.Timestamp), 0)
			for j, k := range v.Keys {
				if k != w.Keys[j] {
					t.Fatalf("key %d: stored %+v, computed %+v", j, k, w.Keys[j])
				}
				pub, err := ParseStandardPublicKey(k.PublicKey)
				if err != nil {
					t.Fatal(err)
				}
				if err := VerifyStandard(v.ID, v.Timestamp, v.Signature, []byte(v.Body), []ed25519.PublicKey{pub}, now); err != nil {
					t.Fatalf("key %d: %v", j, err)
				}
				if err := VerifyStandard(v.ID, v.Timestamp, v.Signature, []byte(v.Body+" "), []ed25519.PublicKey{pub}, now); !errors.Is(err, ErrSignature) {
					t.Fatalf("key %d, body changed: %v", j, err)
				}
			}
		})
	}
}

// TestStandardVectorsNode has Node's Ed25519 check the stored vectors, and
// the headers of a delivery Keys signs now with three fresh generations:
// an implementation that shares no code with this package accepts what it
// signs.
func TestStandardVectorsNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH, so the vectors are not checked by an independent Ed25519: " + err.Error())
	}
	script, err := filepath.Abs("testdata/ed25519_check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, file string) {
		t.Helper()
		cmd := exec.Command(node, script, file)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("node: %v\n%s", err, out.String())
		}
		t.Logf("node: %s", strings.TrimSpace(out.String()))
	}
	t.Run("stored vectors", func(t *testing.T) { run(t, vectorsFile) })
	t.Run("a delivery signed now", func(t *testing.T) {
		gens := []*Generation{newGeneration(t), newGeneration(t), newGeneration(t)}
		keys, err := NewKeys(gens, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, err := keys.Sign("Webhook:0199a3c4-0000-7000-8000-000000000001", []byte(body), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		v := vector{Name: "Keys.Sign with three generations", Source: "paywallet", ID: h.StdID, Timestamp: h.StdTimestamp, Body: body, Signature: h.StdSignature}
		for i := len(gens) - 1; i >= 0; i-- { // the entries are newest first
			v.Keys = append(v.Keys, vectorKey{PublicKey: gens[i].PublicKey()})
		}
		raw, err := json.Marshal(vectorFile{Vectors: []vector{v}})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "live.json")
		if err := os.WriteFile(file, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		run(t, file)
	})
}
