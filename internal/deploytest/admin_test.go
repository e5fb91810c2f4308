package deploytest

import (
	"strconv"
	"strings"
	"testing"
)

// The clients the NetworkPolicy tests try: an S3 client elsewhere in the
// cluster, a pod beside s3cond, and Prometheus and Grafana where
// kube-prometheus-stack puts them (namespace monitoring, labelled by name).
var (
	s3Client         = podIn("apps", map[string]string{"app": "uploader"})
	neighbour        = podIn(releaseNamespace, map[string]string{"app": "other"})
	prometheus       = podIn("monitoring", map[string]string{"app.kubernetes.io/name": "prometheus"})
	grafana          = podIn("monitoring", map[string]string{"app.kubernetes.io/name": "grafana"})
	prometheusAstray = podIn("apps", map[string]string{"app.kubernetes.io/name": "prometheus"})
)

// TestChartKeepsAdminPrivate renders the default values and checks that
// the unauthenticated admin listener (/metrics, /healthz, /readyz, /leases)
// is reachable by Prometheus alone: not through the client Service, and
// through the pods only from the monitoring namespace's Prometheus, while
// the S3 port stays open to every client.
func TestChartKeepsAdminPrivate(t *testing.T) {
	r := render(t, "")
	checkDeployment(t, r)
	admin, s3 := adminPort(t, r), s3Port(t, r)

	clientService := r.service(clientServiceName)
	if len(clientService.Spec.Ports) != 1 || containerPort(t, r, clientService.Spec.Ports[0].TargetPort) != s3 {
		t.Errorf("the client Service has ports %+v, want the S3 port (%d) alone", clientService.Spec.Ports, s3)
	}
	metrics := r.service(metricsServiceName)
	if metrics == nil {
		t.Fatal("no metrics Service: Prometheus has nothing to discover")
	}
	if metrics.Spec.Type != "ClusterIP" || len(metrics.Spec.Ports) != 1 || containerPort(t, r, metrics.Spec.Ports[0].TargetPort) != admin {
		t.Errorf("the metrics Service is %s with ports %+v, want ClusterIP with the admin port (%d) alone", metrics.Spec.Type, metrics.Spec.Ports, admin)
	}
	// Annotation-based scrape configs take the pod's port from prometheus.io/port.
	a := metrics.Annotations
	if a["prometheus.io/scrape"] != "true" || a["prometheus.io/path"] != "/metrics" || a["prometheus.io/port"] != strconv.Itoa(int(admin)) {
		t.Errorf("the metrics Service's annotations %v do not point a scrape at :%d/metrics", a, admin)
	}

	if r.networkPolicy == nil {
		t.Fatal("no NetworkPolicy by default: every pod in the cluster reaches the admin port")
	}
	for _, c := range []struct {
		name string
		from client
		port int32
		want bool
	}{
		{"an S3 client to the S3 port", s3Client, s3, true},
		{"Prometheus to the S3 port", prometheus, s3, true},
		{"an S3 client to the admin port", s3Client, admin, false},
		{"a pod in s3cond's namespace to the admin port", neighbour, admin, false},
		{"Grafana beside Prometheus to the admin port", grafana, admin, false},
		{"a pod labelled prometheus in another namespace to the admin port", prometheusAstray, admin, false},
		{"Prometheus to the admin port", prometheus, admin, true},
		{"Prometheus to a port s3cond does not serve", prometheus, 8080, false},
	} {
		if got := admits(t, r, c.from, c.port); got != c.want {
			t.Errorf("%s: admitted %v, want %v", c.name, got, c.want)
		}
	}
}

// TestChartNetworkPolicyFollowsItsValues checks the documented knobs:
// adminFrom names another Prometheus, an empty adminFrom admits no one
// (not everyone), s3From narrows the S3 port, and enabled: false drops it.
func TestChartNetworkPolicyFollowsItsValues(t *testing.T) {
	r := render(t, "s3cond/ci/fleet-dynamodb-values.yaml")
	observability := podIn("observability", map[string]string{"prometheus": "main"})
	if !admits(t, r, observability, adminPort(t, r)) || admits(t, r, prometheus, adminPort(t, r)) {
		t.Error("adminFrom naming namespace observability, pods prometheus=main: not followed")
	}

	r = render(t, "", "--set-json", "networkPolicy.adminFrom=[]")
	if admits(t, r, prometheus, adminPort(t, r)) || admits(t, r, neighbour, adminPort(t, r)) || !admits(t, r, s3Client, s3Port(t, r)) {
		t.Error("adminFrom: [] must close the admin port to every pod and leave the S3 port open")
	}

	r = render(t, "", "--set-json", `networkPolicy.s3From=[{"namespaceSelector":{"matchLabels":{"team":"data"}}}]`)
	dataTeam := client{namespace: "etl", namespaceLabel: map[string]string{"team": "data"}}
	if admits(t, r, s3Client, s3Port(t, r)) || !admits(t, r, dataTeam, s3Port(t, r)) {
		t.Error("s3From naming namespaces team=data: not followed")
	}

	if r = render(t, "", "--set", "networkPolicy.enabled=false"); r.networkPolicy != nil {
		t.Error("networkPolicy.enabled=false still renders a NetworkPolicy")
	}
}

// TestChartRefusesTheOldAdminPort checks that a values file still setting
// service.adminPort (which put the admin port in the client Service) fails
// loudly rather than silently losing its scrape port.
func TestChartRefusesTheOldAdminPort(t *testing.T) {
	_, stderr, err := helm(t, "template", "s3", "s3cond", "--set", "service.adminPort=9001")
	if err == nil || !strings.Contains(stderr, "service.adminPort is gone") {
		t.Fatalf("helm template with service.adminPort: %v\n%s", err, stderr)
	}
}
