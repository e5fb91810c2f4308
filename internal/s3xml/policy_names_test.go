package s3xml

import (
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

// A statement with an element and its Not form is refused (s3cond would
// judge one, a store might obey the other), and so is an Allow naming no
// action or no resource, as S3 refuses them.
func TestReadPolicyRefusesAmbiguousOrIncompleteStatements(t *testing.T) {
	st := func(body string) string { return `{"Version":"2012-10-17","Statement":[{` + body + `}]}` }
	for name, doc := range map[string]string{
		"Action and NotAction":       st(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","NotAction":"s3:GetObject","Resource":"arn:aws:s3:::a/*"`),
		"Resource and NotResource":   st(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*","NotResource":"arn:aws:s3:::b/*"`),
		"Principal and NotPrincipal": st(`"Effect":"Allow","Principal":"*","NotPrincipal":{"AWS":"x"},"Action":"s3:GetObject","Resource":"arn:aws:s3:::a/*"`),
		"both in a Deny":             st(`"Effect":"Deny","Principal":"*","Action":"s3:*","NotAction":"s3:GetObject","Resource":"arn:aws:s3:::a/*"`),
		"Allow without Action":       st(`"Effect":"Allow","Principal":"*","Resource":"arn:aws:s3:::a/*"`),
		"Allow with no actions":      st(`"Effect":"Allow","Principal":"*","Action":[],"Resource":"arn:aws:s3:::a/*"`),
		"Allow without Resource":     st(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject"`),
		"unknown effect, no Action":  st(`"Effect":"Permit","Principal":"*","Resource":"arn:aws:s3:::a/*"`),
	} {
		if _, err := ReadPolicy(strings.NewReader(doc)); !s3err.Is(err, s3err.MalformedPolicy) {
			t.Errorf("%s: %v, want MalformedPolicy", name, err)
		}
	}
	for name, doc := range map[string]string{
		"Allow with NotAction":   st(`"Effect":"Allow","Principal":"*","NotAction":"s3:PutObject","Resource":"arn:aws:s3:::a/*"`),
		"Allow with NotResource": st(`"Effect":"Allow","Principal":"*","Action":"s3:GetObject","NotResource":"arn:aws:s3:::b/*"`),
	} {
		if _, err := ReadPolicy(strings.NewReader(doc)); err != nil {
			t.Errorf("%s: %v; the Not form alone is read (and judged by the proxy)", name, err)
		}
	}
}
