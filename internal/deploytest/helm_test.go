package deploytest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/s3cond/s3cond/internal/testservers"
)

// helmModule is the Helm test.sh pins; $S3COND_HELM may name a binary of it.
const helmModule = "helm.sh/helm/v3/cmd/helm@v3.22.0"

// helm runs Helm (pinned, through the Go module proxy's cache) in the chart
// directory's parent and returns stdout and stderr.
func helm(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var cmd *exec.Cmd
	if bin := os.Getenv("S3COND_HELM"); bin != "" {
		cmd = exec.Command(bin, args...)
	} else {
		cmd = exec.Command("go", append([]string{"run", helmModule}, args...)...)
	}
	cmd.Dir = filepath.Join(testservers.RepoRoot(t), "deploy", "helm")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// serviceMonitor is the part of prometheus-operator's ServiceMonitor
// (monitoring.coreos.com/v1) the chart renders, decoded strictly: a field
// the chart misspells fails, as the CRD's schema would refuse it.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// rendered is one `helm template` output, decoded by kind.
type rendered struct {
	deployment     *appsv1.Deployment
	services       []*corev1.Service
	secret         *corev1.Secret
	pdb            *policyv1.PodDisruptionBudget
	serviceMonitor *serviceMonitor
	networkPolicy  *networkingv1.NetworkPolicy
	pvc            *corev1.PersistentVolumeClaim
}

// releaseNamespace is the namespace every render installs into.
const releaseNamespace = "storage"

// render runs `helm template` with a values file (none: "") and further
// flags (--set ...).
func render(t *testing.T, valuesFile string, flags ...string) rendered {
	t.Helper()
	args := []string{"template", "s3", "s3cond", "--namespace", releaseNamespace}
	if valuesFile != "" {
		args = append(args, "-f", valuesFile)
	}
	args = append(args, flags...)
	out, stderr, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	var r rendered
	for _, doc := range strings.Split(out, "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		var head metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("manifest without a kind: %v\n%s", err, doc)
		}
		var target any
		switch head.Kind {
		case "Deployment":
			r.deployment = &appsv1.Deployment{}
			target = r.deployment
		case "Service":
			service := &corev1.Service{}
			r.services = append(r.services, service)
			target = service
		case "Secret":
			r.secret = &corev1.Secret{}
			target = r.secret
		case "PodDisruptionBudget":
			r.pdb = &policyv1.PodDisruptionBudget{}
			target = r.pdb
		case "ServiceMonitor":
			r.serviceMonitor = &serviceMonitor{}
			target = r.serviceMonitor
		case "NetworkPolicy":
			r.networkPolicy = &networkingv1.NetworkPolicy{}
			target = r.networkPolicy
		case "PersistentVolumeClaim":
			r.pvc = &corev1.PersistentVolumeClaim{}
			target = r.pvc
		default:
			t.Fatalf("unexpected kind %q", head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), target); err != nil {
			t.Fatalf("%s does not decode strictly: %v\n%s", head.Kind, err, doc)
		}
	}
	if r.deployment == nil || r.service(clientServiceName) == nil {
		t.Fatalf("no Deployment or client Service rendered:\n%s", out)
	}
	return r
}

// The rendered Services' names: the release "s3" of chart s3cond.
const (
	clientServiceName  = "s3-s3cond"
	metricsServiceName = "s3-s3cond-metrics"
)

// service returns the rendered Service of that name, or nil.
func (r rendered) service(name string) *corev1.Service {
	for _, s := range r.services {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// TestChartRendersWorkingManifests renders the chart for each value set
// and checks what users of other gateways' charts found broken: probes on
// the admin port, the config Secret mounted where the args point, a
// ServiceMonitor that selects the Service.
func TestChartRendersWorkingManifests(t *testing.T) {
	for _, values := range []string{"", "s3cond/ci/fleet-dynamodb-values.yaml", "s3cond/ci/etcd-persistent-values.yaml"} {
		t.Run(strings.TrimSuffix(filepath.Base(values+"default"), "-values.yaml"), func(t *testing.T) {
			r := render(t, values)
			checkDeployment(t, r)
			checkServiceMonitor(t, r)
			if r.deployment.Spec.Replicas != nil && *r.deployment.Spec.Replicas > 1 && r.pdb == nil {
				t.Error("several replicas and no PodDisruptionBudget")
			}
			if r.pdb != nil && !selects(r.pdb.Spec.Selector.MatchLabels, r.deployment.Spec.Template.Labels) {
				t.Errorf("the PodDisruptionBudget selects %v, not the pods %v", r.pdb.Spec.Selector.MatchLabels, r.deployment.Spec.Template.Labels)
			}
			if r.networkPolicy != nil && !selects(r.networkPolicy.Spec.PodSelector.MatchLabels, r.deployment.Spec.Template.Labels) {
				t.Error("the NetworkPolicy does not select the pods")
			}
		})
	}
}

func checkDeployment(t *testing.T, r rendered) {
	t.Helper()
	pod := r.deployment.Spec.Template
	for _, service := range r.services {
		if !selects(service.Spec.Selector, pod.Labels) {
			t.Errorf("Service %s selects %v, not the pods %v", service.Name, service.Spec.Selector, pod.Labels)
		}
	}
	c := pod.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["admin"] != 9001 || ports["s3"] != 9000 || env(c, "S3COND_ADMIN_LISTEN") != "0.0.0.0:9001" || env(c, "S3COND_SERVER_LISTEN") != "0.0.0.0:9000" {
		t.Errorf("ports %v do not match the listen addresses %q, %q", ports, env(c, "S3COND_SERVER_LISTEN"), env(c, "S3COND_ADMIN_LISTEN"))
	}
	for name, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != name || probe.HTTPGet.Port.String() != "admin" {
			t.Errorf("probe for %s: %+v, want an HTTP GET on the admin port", name, probe)
		}
	}
	i := slices.Index(c.Args, "--config")
	if i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("args %v name no --config", c.Args)
	}
	checkConfigMounted(t, r, c, c.Args[i+1])
	sc := c.SecurityContext
	if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the pod may run as root or write its root filesystem")
	}
	if !mountedAt(c, env(c, "S3COND_DATA_DIR")) {
		t.Errorf("data_dir %q is not a mounted volume (the root filesystem is read-only)", env(c, "S3COND_DATA_DIR"))
	}
}

// checkConfigMounted follows the config path in the args to a volume mount,
// its Secret volume, and the Secret's key.
func checkConfigMounted(t *testing.T, r rendered, c corev1.Container, path string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		rel, err := filepath.Rel(m.MountPath, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		for _, v := range r.deployment.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			key := rel
			for _, item := range v.Secret.Items {
				if item.Path == rel {
					key = item.Key
				}
			}
			if r.secret == nil || r.secret.Name != v.Secret.SecretName {
				t.Fatalf("volume %s mounts Secret %q, which the chart does not render", v.Name, v.Secret.SecretName)
			}
			if _, ok := r.secret.StringData[key]; !ok {
				t.Fatalf("Secret %s has no key %q for %s", r.secret.Name, key, path)
			}
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(r.secret.StringData[key]), &cfg); err != nil || cfg["backend"] == nil {
				t.Fatalf("the config in the Secret is no s3cond config (%v):\n%s", err, r.secret.StringData[key])
			}
			return
		}
	}
	t.Fatalf("%s, where the args point, is in no Secret volume", path)
}

// checkServiceMonitor follows the ServiceMonitor to the Services it
// selects and their port to the pods' admin port: exactly the metrics
// Service, never the client one (which has no admin port).
func checkServiceMonitor(t *testing.T, r rendered) {
	t.Helper()
	sm := r.serviceMonitor
	if sm == nil {
		return
	}
	if !slices.Contains(sm.Spec.NamespaceSelector.MatchNames, releaseNamespace) {
		t.Errorf("the ServiceMonitor looks in %v, not the release's namespace", sm.Spec.NamespaceSelector.MatchNames)
	}
	var selected []*corev1.Service
	for _, service := range r.services {
		if selects(sm.Spec.Selector.MatchLabels, service.Labels) {
			selected = append(selected, service)
		}
	}
	metrics := r.service(metricsServiceName)
	if len(selected) != 1 || selected[0] != metrics {
		t.Fatalf("the ServiceMonitor selects %v: %d Services, want the metrics Service alone", sm.Spec.Selector.MatchLabels, len(selected))
	}
	for _, e := range sm.Spec.Endpoints {
		port := servicePort(metrics, e.Port)
		if e.Path != "/metrics" || port == nil || containerPort(t, r, port.TargetPort) != adminPort(t, r) {
			t.Errorf("the ServiceMonitor scrapes port %q path %q; the metrics Service has ports %+v", e.Port, e.Path, metrics.Spec.Ports)
		}
	}
}

// TestChartRefusesReplicasOnTheEmbeddedStore checks that several processes
// on the embedded lease store, which would each serialise only their own
// conditional writes, do not render.
func TestChartRefusesReplicasOnTheEmbeddedStore(t *testing.T) {
	_, stderr, err := helm(t, "template", "s3", "s3cond", "-f", "refused/embedded-replicas-values.yaml")
	if err == nil || !strings.Contains(stderr, "replicaCount > 1 needs a shared lease store") {
		t.Fatalf("helm template with 2 replicas on the embedded store: %v\n%s", err, stderr)
	}
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func env(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func mountedAt(c corev1.Container, dir string) bool {
	for _, m := range c.VolumeMounts {
		if m.MountPath == dir && !m.ReadOnly {
			return true
		}
	}
	return false
}
