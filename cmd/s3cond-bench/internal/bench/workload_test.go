package bench

import "testing"

func TestParseWorkloads(t *testing.T) {
	plan, err := ParseWorkloads("get-4k, put-1m:3,hot-cas,put-1g:1", 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name    string
		workers int
	}{{"get-4k", 8}, {"put-1m", 3}, {"hot-cas", 8}, {"put-1g", 1}}
	if len(plan) != len(want) {
		t.Fatalf("%d workloads, want %d", len(plan), len(want))
	}
	for i, w := range want {
		if plan[i].Workload.Name() != w.name || plan[i].Workers != w.workers {
			t.Errorf("workload %d: %s with %d workers, want %s with %d", i,
				plan[i].Workload.Name(), plan[i].Workers, w.name, w.workers)
		}
	}
	if put := plan[3].Workload.(putWorkload); put.size != 1<<30 {
		t.Errorf("put-1g size %d", put.size)
	}
	for _, bad := range []string{"", "nope", "put-", "get-12x", "list:0", "list:x"} {
		if _, err := ParseWorkloads(bad, 8); err == nil {
			t.Errorf("ParseWorkloads(%q): want an error", bad)
		}
	}
}

func TestEveryListedWorkloadExists(t *testing.T) {
	for _, name := range WorkloadNames {
		w, err := NewWorkload(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if w.Name() != name {
			t.Errorf("NewWorkload(%q).Name() = %q", name, w.Name())
		}
	}
}

func TestParseSize(t *testing.T) {
	cases := map[string]int64{"4k": 4096, "1m": 1 << 20, "64M": 64 << 20, "1g": 1 << 30, "100": 100, "0": 0}
	for in, want := range cases {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "k", "-1k", "1t", "1.5m"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q): want an error", bad)
		}
	}
}
