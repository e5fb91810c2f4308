package s3xml

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func renameBackend(name string) (string, bool) {
	if name == "AKIDBACKEND" {
		return "client<&>id", true
	}
	return "", false
}

func TestRewriteIdentitiesReplacesOnlyOwnerNames(t *testing.T) {
	doc := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>` +
		`<Contents><Key>AKIDBACKEND</Key><Owner><ID>AKIDBACKEND</ID><DisplayName>AKIDBACKEND</DisplayName></Owner></Contents>` +
		`<Contents><Key>x &amp; y</Key><Owner><ID>someone-else</ID></Owner></Contents>` +
		`<Upload><Initiator><ID>AKIDBACKEND</ID></Initiator></Upload>` +
		`<Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>AKIDBACKEND</ID></Grantee></Grant>` +
		`<ID>AKIDBACKEND</ID></ListBucketResult>`
	want := strings.ReplaceAll(doc, "<ID>AKIDBACKEND</ID><DisplayName>AKIDBACKEND</DisplayName>",
		"<ID>client&lt;&amp;&gt;id</ID><DisplayName>client&lt;&amp;&gt;id</DisplayName>")
	want = strings.ReplaceAll(want, "<Initiator><ID>AKIDBACKEND</ID>", "<Initiator><ID>client&lt;&amp;&gt;id</ID>")
	want = strings.ReplaceAll(want, `"CanonicalUser"><ID>AKIDBACKEND</ID>`, `"CanonicalUser"><ID>client&lt;&amp;&gt;id</ID>`)
	// one byte at a time: a token split across reads is still found
	var out bytes.Buffer
	if err := RewriteIdentities(&out, iotest.OneByteReader(strings.NewReader(doc)), renameBackend); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestRewriteIdentitiesStreamsLongDocumentsUnchanged(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`<ListBucketResult>`)
	for i := 0; i < 20000; i++ {
		doc.WriteString(`<Contents><Key>k</Key><Owner><ID>AKIDBACKEND</ID></Owner></Contents>`)
	}
	doc.WriteString(`</ListBucketResult>`)
	var out bytes.Buffer
	if err := RewriteIdentities(&out, strings.NewReader(doc.String()), renameBackend); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), strings.ReplaceAll(doc.String(), "AKIDBACKEND", "client&lt;&amp;&gt;id"); got != want {
		t.Fatalf("long document rewritten wrongly (%d bytes, want %d)", len(got), len(want))
	}
}

func TestRewriteIdentitiesRefusesBrokenDocuments(t *testing.T) {
	for name, doc := range map[string]string{
		"unclosed tag": `<A><Owner><ID>AKIDBACKEND</ID></Owner><B`,
		"overlong":     `<A><Owner><ID>` + strings.Repeat("x", 2*maxPendingBytes) + `</ID></Owner></A>`,
		"overlong tag": `<A b="` + strings.Repeat("x", 2*maxPendingBytes) + `"></A>`,
		"doctype":      `<!DOCTYPE a><A></A>`,
		"deep":         strings.Repeat("<a>", identityDepth+1),
	} {
		err := RewriteIdentities(io.Discard, strings.NewReader(doc), renameBackend)
		if !errors.Is(err, ErrIdentityDocument) {
			t.Errorf("%s: err %v, want ErrIdentityDocument", name, err)
		}
	}
}

func TestRewriteIdentitiesReportsTheSourceError(t *testing.T) {
	broken := errors.New("backend went away")
	src := io.MultiReader(strings.NewReader(`<A><Owner><ID>x</ID>`), iotest.ErrReader(broken))
	if err := RewriteIdentities(io.Discard, src, renameBackend); !errors.Is(err, broken) {
		t.Fatalf("err %v, want the source's", err)
	}
}

// countingWriter stands for the client's connection: it counts the writes
// that reach it.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

// A listing whose every entry names the backend principal leaves in large
// writes, not one per stretch between two replacements: each write reaches
// the client's connection.
func TestRewriteIdentitiesWritesListingsInLargeWrites(t *testing.T) {
	src := listingWithOwners(1000)
	var dst countingWriter
	if err := RewriteIdentities(&dst, strings.NewReader(src), renameBackend); err != nil {
		t.Fatal(err)
	}
	if most := dst.bytes/flushBytes + 2; dst.writes > most {
		t.Fatalf("%d writes for %d bytes, want at most %d", dst.writes, dst.bytes, most)
	}
}

// listingWithOwners is a ListObjectsV2 page of n keys with owners, as
// ListObjectsV2 with fetch-owner returns it.
func listingWithOwners(n int) string {
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>`)
	for i := 0; i < n; i++ {
		doc.WriteString(`<Contents><Key>photos/2026/12/02/IMG_` + strings.Repeat("0", 6) + `.jpg</Key>` +
			`<LastModified>2026-12-02T07:00:00.000Z</LastModified><ETag>&#34;9b2cf535f27731c974343645a3985328&#34;</ETag>` +
			`<Size>1048576</Size><Owner><ID>AKIDBACKEND</ID><DisplayName>AKIDBACKEND</DisplayName></Owner><StorageClass>STANDARD</StorageClass></Contents>`)
	}
	doc.WriteString(`</ListBucketResult>`)
	return doc.String()
}

// BenchmarkRewriteIdentities measures the rewrite of a 1000-key listing
// page with owners, as ListObjectsV2 with fetch-owner returns it.
func BenchmarkRewriteIdentities(b *testing.B) {
	src := listingWithOwners(1000)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if err := RewriteIdentities(io.Discard, strings.NewReader(src), renameBackend); err != nil {
			b.Fatal(err)
		}
	}
}

// Whatever the document, a rewrite that renames nothing copies it byte for
// byte, or stops with ErrIdentityDocument having copied a prefix of it;
// and renaming never changes a byte outside an identity's text.
func FuzzRewriteIdentities(f *testing.F) {
	f.Add([]byte(`<A><Owner><ID>AKIDBACKEND</ID></Owner><Key>AKIDBACKEND</Key></A>`))
	f.Add([]byte(`<?xml version="1.0"?><!-- c --><A x="1>2"><![CDATA[<Owner>]]><Grantee><DisplayName>a&amp;b</DisplayName></Grantee></A>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var out bytes.Buffer
		err := RewriteIdentities(&out, bytes.NewReader(doc), func(string) (string, bool) { return "", false })
		switch {
		case err == nil && !bytes.Equal(out.Bytes(), doc):
			t.Fatalf("copy differs:\n%q\n%q", out.Bytes(), doc)
		case err != nil && !errors.Is(err, ErrIdentityDocument):
			t.Fatalf("error %v", err)
		case err != nil && !bytes.HasPrefix(doc, out.Bytes()):
			t.Fatalf("wrote what the document does not start with: %q", out.Bytes())
		}
		out.Reset()
		if err := RewriteIdentities(&out, bytes.NewReader(doc), renameBackend); err == nil &&
			!bytes.Contains(doc, []byte("AKIDBACKEND")) && !bytes.ContainsAny(doc, "&") && !bytes.Equal(out.Bytes(), doc) {
			t.Fatalf("renamed a document without the backend's name:\n%q\n%q", out.Bytes(), doc)
		}
	})
}

// The scanner renames exactly what encoding/xml's tokenizer finds: on
// every document the reference reads, both write the same bytes (the
// scanner refuses only declarations, which S3 documents never carry).
func FuzzRewriteIdentitiesMatchesTheDecoder(f *testing.F) {
	f.Add([]byte(`<A><Owner><ID>AKIDBACKEND</ID></Owner><Key>AKIDBACKEND</Key></A>`))
	f.Add([]byte(`<?xml version="1.0"?><!-- <Owner> --><A x="1>2"><s:Grantee xmlns:s="x"><s:ID >AKID&#66;ACKEND</s:ID><DisplayName><![CDATA[AKIDBACKEND]]></DisplayName></s:Grantee><ID>AKIDBACKEND</ID></A>`))
	f.Add([]byte(`<Initiator><ID/><ID>AKIDBACKEND</ID><DisplayName>AKID<!---->BACKEND</DisplayName></Initiator>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var want, got bytes.Buffer
		if err := rewriteIdentitiesByDecoder(&want, bytes.NewReader(doc), renameBackend); err != nil {
			return
		}
		err := RewriteIdentities(&got, iotest.HalfReader(bytes.NewReader(doc)), renameBackend)
		switch {
		case err != nil && errors.Is(err, ErrIdentityDocument) && bytes.Contains(doc, []byte("<!")):
		case err != nil:
			t.Fatalf("the scanner refused what the decoder read: %v", err)
		case !bytes.Equal(got.Bytes(), want.Bytes()):
			t.Fatalf("scanner\n%q\ndecoder\n%q", got.Bytes(), want.Bytes())
		}
	})
}
