package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testkit"
)

// promAPI is a client of the Prometheus HTTP API (/api/v1).
type promAPI struct{ endpoint string }

type promAnswer struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
}

func (p promAPI) get(path string, query url.Values) (json.RawMessage, error) {
	resp, err := http.Get(p.endpoint + path + "?" + query.Encode())
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var a promAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("%s answered %d, not JSON: %s", path, resp.StatusCode, body)
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("%s: %s: %s", path, a.ErrorType, a.Error)
	}
	return a.Data, nil
}

// query evaluates expr now and returns how many series or samples it gave.
func (p promAPI) query(expr string) (int, error) {
	data, err := p.get("/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return 0, err
	}
	var v struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return 0, fmt.Errorf("decode query result: %w", err)
	}
	if v.ResultType == "scalar" {
		return 1, nil
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(v.Result, &rows); err != nil {
		return 0, fmt.Errorf("decode %s result: %w", v.ResultType, err)
	}
	return len(rows), nil
}

// metricNames lists every metric name that has a series.
func (p promAPI) metricNames(t *testing.T) []string {
	t.Helper()
	data, err := p.get("/api/v1/label/__name__/values", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		t.Fatal(err)
	}
	return names
}

// firing reports whether the named alert is firing.
func (p promAPI) firing(t *testing.T, alert string) bool {
	t.Helper()
	data, err := p.get("/api/v1/alerts", nil)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, a := range v.Alerts {
		if a.Labels["alertname"] == alert && a.State == "firing" {
			return true
		}
	}
	return false
}

// waitUntil polls cond (Prometheus learns by scraping and evaluating on its
// own schedule; there is no event to wait for) until it holds.
func waitUntil(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	testkit.Within(t, within, what, func(context.Context) error {
		if !cond() {
			return errors.New("not yet")
		}
		return nil
	})
}

// seriesNames are the s3cond metric and recording-rule names a PromQL
// expression reads.
var seriesName = regexp.MustCompile(`\bs3cond[_:][a-zA-Z0-9_:]+`)

func namesIn(expr string) []string {
	names := seriesName.FindAllString(expr, -1)
	slices.Sort(names)
	return slices.Compact(names)
}

// ruleFile is the part of a Prometheus rules file the test reads.
type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Record string `yaml:"record"`
			Alert  string `yaml:"alert"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// dashboardQueries returns each panel's queries of a Grafana dashboard,
// by panel title, with the dashboard's variables replaced as Grafana would.
func dashboardQueries(t *testing.T, path string, vars map[string]string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	out := map[string][]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			expr := target.Expr
			for name, value := range vars {
				expr = strings.ReplaceAll(expr, name, value)
			}
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q: a variable is left in %s", p.Title, expr)
			}
			out[p.Title] = append(out[p.Title], expr)
		}
	}
	return out
}
