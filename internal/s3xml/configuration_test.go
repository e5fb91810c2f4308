package s3xml

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

var replicationSchema = ConfigurationSchema{Roots: []string{"ReplicationConfiguration"}, Limit: 4 << 10,
	BucketElements: []string{"Bucket"}, ForeignElements: []string{"Account"}}

var aclSchema = ConfigurationSchema{Roots: []string{"AccessControlPolicy"}, Limit: 4 << 10, Grantees: true}

func bucketValues(c Configuration) []string {
	var out []string
	for _, r := range c.Buckets {
		out = append(out, r.Value)
	}
	return out
}

// Every watched element counts, wherever it stands and however often: a
// store that reads the first of two, or one the schema does not place
// there, finds nothing the caller did not see.
func TestReadConfigurationFindsEveryWatchedElement(t *testing.T) {
	doc := `<ReplicationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Rule><Destination>` +
		`<Bucket>arn:aws:s3:::first</Bucket><Bucket> arn:aws:s3:::second </Bucket></Destination>` +
		`<Misplaced><Deeper><bucket>lower-case</bucket></Deeper></Misplaced>` +
		`<Destination><Bucket><![CDATA[cdata]]></Bucket><Bucket>&#109;b&#x32;</Bucket></Destination></Rule></ReplicationConfiguration>`
	got, err := ReadConfiguration(strings.NewReader(doc), replicationSchema)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"arn:aws:s3:::first", "arn:aws:s3:::second", "lower-case", "cdata", "mb2"}
	if !reflect.DeepEqual(bucketValues(got), want) {
		t.Errorf("buckets %q, want %q", bucketValues(got), want)
	}
	if string(got.Body) != doc {
		t.Errorf("the body to forward is not the body read")
	}
	withAccount, err := ReadConfiguration(strings.NewReader(`<ReplicationConfiguration><Rule><Destination><ACCOUNT>1</ACCOUNT></Destination></Rule></ReplicationConfiguration>`), replicationSchema)
	if err != nil || !reflect.DeepEqual(withAccount.Foreign, []string{"Account"}) {
		t.Errorf("foreign elements %q, %v", withAccount.Foreign, err)
	}
}

// Grantees are the identifiers inside Grantee elements, at any depth; an
// Owner's ID is not one.
func TestReadConfigurationGrantees(t *testing.T) {
	doc := `<AccessControlPolicy><Owner><ID>owner</ID></Owner><AccessControlList>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>a</ID><ID>b</ID></Grantee></Grant>` +
		`<Grant><Grantee><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee></Grant>` +
		`<Grant><Grantee><Nested><EmailAddress>x@example.com</EmailAddress></Nested></Grantee></Grant>` +
		`</AccessControlList></AccessControlPolicy>`
	got, err := ReadConfiguration(strings.NewReader(doc), aclSchema)
	if err != nil {
		t.Fatal(err)
	}
	want := []Grantee{{"ID", "a"}, {"ID", "b"}, {"URI", "http://acs.amazonaws.com/groups/global/AllUsers"}, {"EmailAddress", "x@example.com"}}
	if !reflect.DeepEqual(got.Grantees, want) {
		t.Errorf("grantees %+v, want %+v", got.Grantees, want)
	}
}

// Hostile documents are MalformedXML (or IncompleteBody), never read
// another way than a store might read them.
func TestReadConfigurationRefusesHostileDocuments(t *testing.T) {
	deep := "<ReplicationConfiguration>" + strings.Repeat("<a>", 20) + strings.Repeat("</a>", 20) + "</ReplicationConfiguration>"
	for name, doc := range map[string]string{
		"DOCTYPE with an entity": `<!DOCTYPE r [<!ENTITY d "arn:aws:s3:::mb2">]><ReplicationConfiguration><Rule><Destination><Bucket>&d;</Bucket></Destination></Rule></ReplicationConfiguration>`,
		"undefined entity":       `<ReplicationConfiguration><Bucket>&d;</Bucket></ReplicationConfiguration>`,
		"external entity":        `<!DOCTYPE r SYSTEM "file:///etc/passwd"><ReplicationConfiguration/>`,
		"foreign namespace":      `<ReplicationConfiguration><x:Bucket xmlns:x="urn:other">mb2</x:Bucket></ReplicationConfiguration>`,
		"another root":           `<InventoryConfiguration><Bucket>mb2</Bucket></InventoryConfiguration>`,
		"two roots":              `<ReplicationConfiguration/><ReplicationConfiguration><Bucket>mb2</Bucket></ReplicationConfiguration>`,
		"text after the root":    `<ReplicationConfiguration/>mb2`,
		"nested too deep":        deep,
		"unclosed":               `<ReplicationConfiguration><Bucket>mb2</Bucket>`,
		"invalid UTF-8":          "<ReplicationConfiguration><Bucket>mb\xff2</Bucket></ReplicationConfiguration>",
		"empty":                  ``,
		"oversize":               "<ReplicationConfiguration>" + strings.Repeat(" ", 5<<10) + "</ReplicationConfiguration>",
	} {
		_, err := ReadConfiguration(strings.NewReader(doc), replicationSchema)
		if !s3err.Is(err, s3err.MalformedXML) {
			t.Errorf("%s: %v, want MalformedXML", name, err)
		}
	}
	// The bound holds whatever the body's length: one byte past the limit
	// is read, no more.
	counting := &countingReader{r: io.MultiReader(strings.NewReader("<ReplicationConfiguration>"), neverEnding('x'))}
	if _, err := ReadConfiguration(counting, replicationSchema); !s3err.Is(err, s3err.MalformedXML) || counting.n > replicationSchema.Limit+1 {
		t.Errorf("oversize stream: %v after %d bytes", err, counting.n)
	}
	// A body reader's own S3 error (a signature check) comes through.
	if _, err := ReadConfiguration(failingReader{s3err.New(s3err.SignatureDoesNotMatch)}, replicationSchema); !s3err.Is(err, s3err.SignatureDoesNotMatch) {
		t.Errorf("failing body: %v", err)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// FuzzReadConfiguration: any body is read or refused with a client error,
// and every <Bucket> encoding/xml itself finds where a replication
// destination stands is among what the reader reports.
func FuzzReadConfiguration(f *testing.F) {
	f.Add([]byte(`<ReplicationConfiguration><Rule><Destination><Bucket>arn:aws:s3:::a</Bucket></Destination></Rule></ReplicationConfiguration>`))
	f.Add([]byte(`<ReplicationConfiguration><Rule><Destination><Bucket>a</Bucket><Bucket>b</Bucket></Destination></Rule><Rule><Destination><Bucket>&amp;</Bucket></Destination></Rule></ReplicationConfiguration>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ReadConfiguration(bytes.NewReader(body), replicationSchema)
		if err != nil {
			var e *s3err.Error
			if !errors.As(err, &e) || e.Code != s3err.MalformedXML {
				t.Fatalf("error %v", err)
			}
			return
		}
		var doc struct {
			Rules []struct {
				Destinations []struct {
					Buckets []string `xml:"Bucket"`
				} `xml:"Destination"`
			} `xml:"Rule"`
		}
		if decodeInto(body, &doc) != nil {
			return
		}
		reported := map[string]bool{}
		for _, v := range bucketValues(got) {
			reported[v] = true
		}
		for _, r := range doc.Rules {
			for _, d := range r.Destinations {
				for _, b := range d.Buckets {
					if !reported[strings.TrimSpace(b)] {
						t.Fatalf("encoding/xml reads destination %q, the reader reported %q", b, bucketValues(got))
					}
				}
			}
		}
	})
}
