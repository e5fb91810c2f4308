package s3xml

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func TestReadPolicyStatements(t *testing.T) {
	doc := `{"Version":"2012-10-17","Statement":[` +
		`{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*"},` +
		`{"effect":"Deny","principal":{"AWS":["arn:aws:iam::1:root","*"],"CanonicalUser":"c"},"NotAction":["s3:*"],"NotResource":"arn:aws:s3:::b"},` +
		`{"Effect":"Deny","NotPrincipal":{"AWS":"x"},"Action":[],"Resource":[]}]}`
	got, err := ReadPolicy(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got.Statements[1].Principals)
	want := []PolicyStatement{
		{Effect: "Allow", Principals: []string{"*"}, Actions: []string{"s3:GetObject"}, Resources: []string{"arn:aws:s3:::a/*"}},
		{Effect: "Deny", Principals: []string{"AWS:*", "AWS:arn:aws:iam::1:root", "CanonicalUser:c"}, Actions: []string{"s3:*"}, NotAction: true,
			Resources: []string{"arn:aws:s3:::b"}, NotResource: true},
		{Effect: "Deny", Principals: []string{"AWS:x"}, NotPrincipal: true, Actions: []string{}, Resources: []string{}},
	}
	if !reflect.DeepEqual(got.Statements, want) {
		t.Errorf("statements\n got %+v\nwant %+v", got.Statements, want)
	}
	if string(got.Body) != doc {
		t.Error("the body to forward is not the body read")
	}
	single, err := ReadPolicy(strings.NewReader(`{"Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::a"}}`))
	if err != nil || len(single.Statements) != 1 || single.Statements[0].Resources[0] != "arn:aws:s3:::a" {
		t.Errorf("a single statement object: %+v, %v", single, err)
	}
}

// What one JSON parser reads one way and another another way is refused:
// a key given twice (in any letter case), invalid UTF-8, data after the
// policy; so are deep nesting and oversize bodies.
func TestReadPolicyRefusesHostilePolicies(t *testing.T) {
	for name, doc := range map[string]string{
		"duplicate Principal": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::1:root"},"Principal":"*","Resource":"arn:aws:s3:::a"}]}`,
		"duplicate in case":   `{"Statement":[{"Effect":"Deny","effect":"Allow","Principal":"*"}]}`,
		"duplicate Statement": `{"Statement":[],"Statement":[{"Effect":"Allow","Principal":"*"}]}`,
		"duplicate AWS":       `{"Statement":[{"Principal":{"AWS":"a","aws":"*"}}]}`,
		"invalid UTF-8":       "{\"Statement\":[{\"Principal\":\"\xff\"}]}",
		"trailing data":       `{"Statement":[]} {"Statement":[{"Principal":"*"}]}`,
		"not an object":       `["Statement"]`,
		"leading space":       ` {"Statement":[]}`,
		"BOM":                 "\xef\xbb\xbf{\"Statement\":[]}",
		"no Statement":        `{"Version":"2012-10-17"}`,
		"bad Statement":       `{"Statement":"x"}`,
		"bad principal":       `{"Statement":[{"Principal":1}]}`,
		"bad principal list":  `{"Statement":[{"Principal":{"AWS":[1]}}]}`,
		"bad resource":        `{"Statement":[{"Resource":{"a":"b"}}]}`,
		"nested too deep":     `{"Statement":[{"Condition":` + strings.Repeat(`{"a":`, 10) + `1` + strings.Repeat(`}`, 10) + `}]}`,
		"oversize":            `{"Statement":[],"Id":"` + strings.Repeat("x", MaxPolicyBytes) + `"}`,
		"unterminated":        `{"Statement":[`,
		"empty":               ``,
		"null NotPrincipal":   `{"Statement":[{"Effect":"Allow","Principal":"*","NotPrincipal":null,"Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*"}]}`,
		"null Principal":      `{"Statement":[{"Effect":"Deny","Principal":null,"Action":"s3:*","Resource":"arn:aws:s3:::a/*"}]}`,
		"null in a list":      `{"Statement":[{"Effect":"Allow","Principal":"*","Action":["s3:GetObject",null],"Resource":"arn:aws:s3:::a/*"}]}`,
	} {
		_, err := ReadPolicy(strings.NewReader(doc))
		if !s3err.Is(err, s3err.MalformedPolicy) {
			t.Errorf("%s: %v, want MalformedPolicy", name, err)
		}
	}
}

// FuzzReadPolicy: any body is read or refused as MalformedPolicy, and a
// policy read has exactly the principals encoding/json finds in it.
func FuzzReadPolicy(f *testing.F) {
	f.Add([]byte(`{"Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*"}]}`))
	f.Add([]byte(`{"Statement":{"Effect":"Deny","Principal":{"AWS":["a","b"]},"Resource":["x","y"]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ReadPolicy(bytes.NewReader(body))
		if err != nil {
			var e *s3err.Error
			if !errors.As(err, &e) || e.Code != s3err.MalformedPolicy {
				t.Fatalf("error %v", err)
			}
			return
		}
		var doc struct {
			Statement json.RawMessage
		}
		if json.Unmarshal(body, &doc) != nil {
			t.Fatalf("accepted what encoding/json refuses: %q", body)
		}
		n := 0
		for _, st := range got.Statements {
			n += len(st.Principals)
		}
		if n > 0 && !bytes.Contains(bytes.ToLower(body), []byte("principal")) {
			t.Fatalf("principals %d without a Principal key", n)
		}
	})
}
