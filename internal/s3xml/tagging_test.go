package s3xml

import (
	"strings"
	"testing"

	"github.com/s3cond/s3cond/s3err"
)

func TestParseTagging(t *testing.T) {
	got, err := ParseTagging(strings.NewReader(`<Tagging><TagSet><Tag><Key>a b</Key><Value>1&amp;2</Value></Tag>`+
		`<Tag><Key>c</Key><Value></Value></Tag></TagSet></Tagging>`), 0)
	if err != nil || got != "a+b=1%262&c=" {
		t.Errorf("tags %q, %v", got, err)
	}
	for _, doc := range []string{`<Tagging><TagSet>`, `<Other><TagSet/></Other>`, `<!DOCTYPE t><Tagging/>`,
		`<Tagging>` + strings.Repeat("x", int(DefaultTaggingLimit)) + `</Tagging>`} {
		_, err := ParseTagging(strings.NewReader(doc), 0)
		wantCode(t, err, s3err.MalformedXML)
	}
}
