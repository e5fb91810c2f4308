package etcdstore

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/s3cond/s3cond/dynamolease"
	"github.com/s3cond/s3cond/dynamolease/internal/rowcodec"
)

// generationDigits is the width of the generation line that starts an etcd
// row's value: every uint64 fits, and equal widths make byte order numeric.
const generationDigits = 20

// etcdRow is the JSON part of an etcd row, in the units of a DynamoDB row.
// path and etag repeat the key, for people reading rows with etcdctl.
type etcdRow struct {
	Path      string `json:"path"`
	ETag      string `json:"etag"`
	TimeoutMS int64  `json:"timeout"`
	TTL       int64  `json:"ttl,omitempty"` // epoch seconds; 0 when unset
	Owner     string `json:"owner,omitempty"`
	Released  bool   `json:"released,omitempty"`
	KeyState  string `json:"key_state,omitempty"`
	Receipt   string `json:"receipt,omitempty"`
}

// generationLine is how a row's value starts: its generation in
// generationDigits digits, then a newline.
func generationLine(generation uint64) string {
	return fmt.Sprintf("%0*d\n", generationDigits, generation)
}

// generationBounds are the two values between which, exclusively, lies
// every value whose generation line is generation's: the line itself (a
// value is that line plus a JSON object, so it sorts after it) and the line
// with its newline replaced by the next byte.
func generationBounds(generation uint64) (low, high string) {
	line := generationLine(generation)
	return line, line[:len(line)-1] + string(rune('\n'+1))
}

func encodeEtcdRow(r dynamolease.Record) (string, error) {
	row := etcdRow{Path: r.Path, ETag: r.ETag, TimeoutMS: r.Timeout.Milliseconds(), Owner: r.Owner, Released: r.Released,
		KeyState: rowcodec.EncodeKeyState(r.KeyState), Receipt: r.Receipt}
	if !r.TTL.IsZero() {
		row.TTL = r.TTL.Unix()
	}
	body, err := json.Marshal(row)
	if err != nil {
		return "", fmt.Errorf("encode lease row %q %q: %w", r.Path, r.ETag, err)
	}
	return generationLine(r.Generation) + string(body), nil
}

// decodeEtcdRow reads the value of the row (path, etag).
func decodeEtcdRow(value []byte, path, etag string) (*dynamolease.Record, error) {
	r := &dynamolease.Record{Path: path, ETag: etag, Generation: rowcodec.UnreadableGeneration}
	var problems rowcodec.Problems
	line, body, ok := bytes.Cut(value, []byte("\n"))
	if !ok || len(line) != generationDigits {
		problems.Add("value does not start with a %d-digit generation line", generationDigits)
		body = value
	} else {
		r.Generation = rowcodec.ParseGeneration(string(line), &problems)
	}
	rowcodec.DecodeJSON(body, r, false, &problems)
	r.Unreadable = problems.String()
	return r, nil
}
