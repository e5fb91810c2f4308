package s3xml

import (
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// A key that strings.EqualFold (and encoding/json) matches to another
// without being the same in lower case — "Reſource" (U+017F) beside
// "Resource" — is the key given twice: refused, every time, whatever the
// map order. Outside a Condition a key must be ASCII at all.
func TestReadPolicyRefusesKeysFoldingOntoAnother(t *testing.T) {
	statement := `{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::mb2/*",` +
		`"Reſource":"arn:aws:s3:::granted-public/*"}`
	for name, doc := range map[string]string{
		"Reſource beside Resource":    `{"Statement":[` + statement + `]}`,
		"ſtatement beside Statement":  `{"Statement":[],"ſtatement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*"}]}`,
		"ſtatement alone":             `{"ſtatement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*"}]}`,
		"Kelvin sign in a principal":  `{"Statement":[{"Effect":"Deny","Principal":{"AWS":"a","\u212aey":"b"},"Action":"s3:*","Resource":"arn:aws:s3:::a"}]}`,
		"folded twice in a Condition": `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::a","Condition":{"StringEquals":{"s3:ExistingObjectTag/ſ":"x","s3:ExistingObjectTag/s":"y"}}}]}`,
	} {
		for range 50 { // map order is random: every order must refuse
			if _, err := ReadPolicy(strings.NewReader(doc)); !s3err.Is(err, s3err.MalformedPolicy) {
				t.Fatalf("%s: %v, want MalformedPolicy", name, err)
			}
		}
	}
	// A Condition may test a tag whose key is not ASCII.
	tagged := `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:*","Resource":"arn:aws:s3:::a/*",` +
		`"Condition":{"StringEquals":{"s3:ExistingObjectTag/ключ":"значение"}}}]}`
	if _, err := ReadPolicy(strings.NewReader(tagged)); err != nil {
		t.Errorf("a condition on a non-ASCII tag key: %v", err)
	}
}

// field refuses a document in which two keys match, rather than taking
// whichever the map yields first.
func TestFieldRefusesTwoMatches(t *testing.T) {
	doc := map[string]any{"Resource": "arn:aws:s3:::mb2/*", "Reſource": "arn:aws:s3:::granted-public/*"}
	for range 50 {
		if v, err := field(doc, "Resource"); !s3err.Is(err, s3err.MalformedPolicy) {
			t.Fatalf("two keys matching Resource: %v, %v; want MalformedPolicy", v, err)
		}
	}
	if v, err := field(doc, "Action"); v != nil || err != nil {
		t.Errorf("an absent field: %v, %v", v, err)
	}
}
