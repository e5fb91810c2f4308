package proxy

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/s3cond/s3cond/proxy/leasedwrite"
)

// writeTableRow is one row of docs/spec.md §7's table.
type writeTableRow struct {
	name    string // a header, or "?sub" for a sub-resource
	ops     []string
	outcome string // implemented, forwarded or 501
	example string
}

// readWriteTable parses the table between its markers in docs/spec.md.
func readWriteTable(t *testing.T) []writeTableRow {
	t.Helper()
	raw, err := os.ReadFile("../docs/spec.md")
	if err != nil {
		t.Fatalf("read the spec: %v", err)
	}
	_, rest, ok := strings.Cut(string(raw), "<!-- write-header-table:begin -->")
	table, _, ok2 := strings.Cut(rest, "<!-- write-header-table:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/spec.md has no write header table markers")
	}
	var rows []writeTableRow
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] { // past the head and its rule
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			t.Fatalf("table row %q has %d cells, want 5", line, len(cells))
		}
		cell := func(i int) string { return strings.Trim(strings.TrimSpace(cells[i]), "`") }
		row := writeTableRow{name: cell(0), outcome: cell(2), example: cell(3)}
		for _, op := range strings.Split(cell(1), ",") {
			row.ops = append(row.ops, strings.TrimSpace(op))
		}
		rows = append(rows, row)
	}
	if len(rows) < 20 {
		t.Fatalf("the table has %d rows; the parser lost some", len(rows))
	}
	return rows
}

// writeTableRequest is the request of op that the table test sends: its
// method, target and body, and the headers it needs besides the row's.
func writeTableRequest(t *testing.T, op string) (method, target string, header http.Header, body []byte) {
	t.Helper()
	object := "/" + bucketName + "/k"
	copySource := http.Header{"X-Amz-Copy-Source": {"/" + bucketName + "/src"}}
	switch op {
	case "PutObject":
		return http.MethodPut, object, http.Header{}, []byte("x")
	case "CopyObject":
		return http.MethodPut, object, copySource, nil
	case "CreateMultipartUpload":
		return http.MethodPost, object + "?uploads", http.Header{}, nil
	case "UploadPart":
		return http.MethodPut, object + "?partNumber=1&uploadId=u1", http.Header{}, []byte("x")
	case "UploadPartCopy":
		return http.MethodPut, object + "?partNumber=1&uploadId=u1", copySource, nil
	case "CompleteMultipartUpload":
		return http.MethodPost, object + "?uploadId=u1", http.Header{},
			[]byte(`<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"0123"</ETag></Part></CompleteMultipartUpload>`)
	case "DeleteObject":
		return http.MethodDelete, object, http.Header{}, nil
	case "DeleteObjects":
		doc := []byte(`<Delete><Object><Key>k</Key></Object></Delete>`)
		sum := md5.Sum(doc)
		return http.MethodPost, "/" + bucketName + "?delete", http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(sum[:])}}, doc
	case "AbortMultipartUpload":
		return http.MethodDelete, object + "?uploadId=u1", http.Header{}, nil
	case "CreateBucket":
		return http.MethodPut, "/" + bucketName, http.Header{}, nil
	case "RenameObject":
		return http.MethodPut, object + "?renameObject", http.Header{}, nil
	}
	t.Fatalf("the table names operation %q, which this test cannot send", op)
	return
}

// withQuery adds name=value to target's query.
func withQuery(target, name, value string) string {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + url.QueryEscape(name) + "=" + url.QueryEscape(value)
}

// Issue 33 finding 1: every row of docs/spec.md §7 is what s3cond does. A
// 501 row is answered 501 NotImplemented naming the header, as a header
// and hoisted into the query, and nothing reaches the store; a forwarded
// row reaches the store; an implemented one is not refused; a "501 or
// forwarded" row is each, on a store the start-up check found without and
// with the capability. The store is native (it would be sent the
// conditions) so that an implemented condition needs no lease store here.
func TestWriteHeaderTableIsWhatTheProxyDoes(t *testing.T) {
	documented := map[string]bool{}
	for _, row := range readWriteTable(t) {
		switch row.outcome {
		case "501":
			documented[strings.ToLower(row.name)] = true
			walkWriteTableRow(t, row, false)
		case "501 or forwarded":
			documented[strings.ToLower(row.name)] = true
			walkWriteTableRow(t, writeTableRow{row.name, row.ops, "501", row.example}, false)
			walkWriteTableRow(t, writeTableRow{row.name, row.ops, "forwarded", row.example}, true)
		default:
			walkWriteTableRow(t, row, false)
		}
	}
	for _, row := range unimplementedHeaders {
		if !documented[row.name] {
			t.Errorf("s3cond refuses %s, which docs/spec.md §7 does not list as 501", row.name)
		}
	}
}

// walkWriteTableRow sends row's header on each of its operations to a store
// with (capable) or without the capability a "501 or forwarded" row needs.
func walkWriteTableRow(t *testing.T, row writeTableRow, capable bool) {
	t.Helper()
	v := newValueProbe(t, KeyPolicyStrict)
	v.proxy.backend.Mode = func() leasedwrite.Mode { return leasedwrite.Mode{Kind: leasedwrite.Native} }
	if capable {
		v.proxy.backend.StoreKeeps = map[string]bool{KeepsObjectLock: true, KeepsMPUObjectSize: true, KeepsAbortInitiatedTime: true}
	}
	for _, op := range row.ops {
		method, target, header, body := writeTableRequest(t, op)
		sub, isSub := strings.CutPrefix(row.name, "?")
		if isSub {
			target = withQuery(strings.Split(target, "?")[0], sub, row.example)
		} else {
			header.Set(row.name, row.example)
		}
		v.store.take()
		status, answer := v.do(t, testKeyID, method, target, header, body)
		reached := v.store.take()
		what := row.name + " on " + op
		switch row.outcome {
		case "501":
			// The allow-list refuses a RenameObject, and a hoisted
			// copy-source header, by its query parameter before any
			// header is read: that 501 names the parameter.
			refusedByQuery := isSub || op == "RenameObject"
			checkRefusedRow(t, what, row.name, refusedByQuery, status, answer, reached)
			if !isSub {
				header.Del(row.name)
				status, answer := v.do(t, testKeyID, method, withQuery(target, strings.ToLower(row.name), row.example), header, body)
				checkRefusedRow(t, what+" (in the query)", row.name, true, status, answer, v.store.take())
			}
		case "forwarded":
			if status != http.StatusOK || !carries(reached, row.name) {
				t.Errorf("%s: %d %s, %d store requests; the table says forwarded", what, status, answer, len(reached))
			}
		case "dropped":
			// The store request is what counts: this fake store's answer to
			// DeleteObjects is no result document, which s3cond answers 502.
			if status == http.StatusNotImplemented || len(reached) != 1 || carries(reached, row.name) {
				t.Errorf("%s: %d %s, %d store requests; the table says dropped", what, status, answer, len(reached))
			}
			if !isSub {
				header.Del(row.name)
				status, answer := v.do(t, testKeyID, method, withQuery(target, strings.ToLower(row.name), row.example), header, body)
				if reached := v.store.take(); status == http.StatusNotImplemented || len(reached) != 1 || carries(reached, row.name) {
					t.Errorf("%s (in the query): %d %s, %d store requests; the table says dropped", what, status, answer, len(reached))
				}
			}
		case "implemented":
			if status == http.StatusNotImplemented || strings.Contains(answer, "<Code>NotImplemented</Code>") {
				t.Errorf("%s: %d %s; the table says implemented", what, status, answer)
			}
		default:
			t.Errorf("%s: the table's outcome %q is none of implemented, forwarded, dropped, 501, 501 or forwarded", what, row.outcome)
		}
	}
}

func checkRefusedRow(t *testing.T, what, name string, byQuery bool, status int, answer string, reached []*http.Request) {
	t.Helper()
	switch {
	case status != http.StatusNotImplemented || !strings.Contains(answer, "<Code>NotImplemented</Code>"):
		t.Errorf("%s: %d %s; the table says 501", what, status, answer)
	case !byQuery && !strings.Contains(answer, "<Header>"+strings.ToLower(name)+"</Header>"):
		t.Errorf("%s: the 501 does not name the header: %s", what, answer)
	case len(reached) != 0:
		t.Errorf("%s: refused, yet %d requests reached the store", what, len(reached))
	}
}

// carries reports whether one of the store's requests has the header.
func carries(reached []*http.Request, name string) bool {
	for _, r := range reached {
		if r.Header.Get(name) != "" {
			return true
		}
		for param := range r.URL.Query() {
			if strings.EqualFold(param, name) {
				return true // hoisted into the query
			}
		}
	}
	return false
}
