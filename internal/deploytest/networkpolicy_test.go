package deploytest

import (
	"net"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// client is a pod that tries to connect to s3cond's pods: its namespace,
// that namespace's labels and its own.
type client struct {
	namespace      string
	namespaceLabel map[string]string
	podLabels      map[string]string
}

// podIn is a pod with the given labels in a namespace carrying only the
// label Kubernetes puts on every namespace (kubernetes.io/metadata.name).
func podIn(namespace string, podLabels map[string]string) client {
	return client{
		namespace:      namespace,
		namespaceLabel: map[string]string{"kubernetes.io/metadata.name": namespace},
		podLabels:      podLabels,
	}
}

// admits evaluates the rendered NetworkPolicy as a network plugin that
// enforces it would: may c open a TCP connection to port of s3cond's pods?
// No policy, or one that does not select the pods, admits everything.
func admits(t *testing.T, r rendered, c client, port int32) bool {
	t.Helper()
	np := r.networkPolicy
	if np == nil || !matches(t, &np.Spec.PodSelector, r.deployment.Spec.Template.Labels) {
		return true
	}
	for _, rule := range np.Spec.Ingress {
		if rulePortsMatch(t, r, rule.Ports, port) && rulePeersMatch(t, rule.From, c) {
			return true
		}
	}
	return false
}

func rulePortsMatch(t *testing.T, r rendered, ports []networkingv1.NetworkPolicyPort, port int32) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		if p.Port == nil {
			return true
		}
		first := containerPort(t, r, *p.Port)
		last := first
		if p.EndPort != nil {
			last = *p.EndPort
		}
		if first <= port && port <= last {
			return true
		}
	}
	return false
}

func rulePeersMatch(t *testing.T, from []networkingv1.NetworkPolicyPeer, c client) bool {
	if len(from) == 0 {
		return true
	}
	for _, peer := range from {
		if peer.IPBlock != nil {
			// Pod addresses are not modelled: count an ipBlock as admitting
			// every pod, so that no assertion of "refused" passes through one.
			return true
		}
		namespaceOK := c.namespace == releaseNamespace
		if peer.NamespaceSelector != nil {
			namespaceOK = matches(t, peer.NamespaceSelector, c.namespaceLabel)
		}
		podOK := peer.PodSelector == nil || matches(t, peer.PodSelector, c.podLabels)
		if namespaceOK && podOK {
			return true
		}
	}
	return false
}

func matches(t *testing.T, selector *metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		t.Fatalf("label selector %+v: %v", selector, err)
	}
	return s.Matches(labels.Set(set))
}

// containerPort resolves a port number or name to the s3cond container's
// port number (0: no such name).
func containerPort(t *testing.T, r rendered, port intstr.IntOrString) int32 {
	t.Helper()
	if port.Type == intstr.Int {
		return port.IntVal
	}
	for _, p := range r.deployment.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == port.StrVal {
			return p.ContainerPort
		}
	}
	return 0
}

// listenPort is the port s3cond listens on, from the address the chart
// gives it in an S3COND_*_LISTEN variable.
func listenPort(t *testing.T, r rendered, variable string) int32 {
	t.Helper()
	addr := env(r.deployment.Spec.Template.Spec.Containers[0], variable)
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("%s=%q: %v", variable, addr, err)
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Fatalf("%s=%q: %v", variable, addr, err)
	}
	return int32(n)
}

func adminPort(t *testing.T, r rendered) int32 { return listenPort(t, r, "S3COND_ADMIN_LISTEN") }

func s3Port(t *testing.T, r rendered) int32 { return listenPort(t, r, "S3COND_SERVER_LISTEN") }

func servicePort(s *corev1.Service, name string) *corev1.ServicePort {
	for i := range s.Spec.Ports {
		if s.Spec.Ports[i].Name == name {
			return &s.Spec.Ports[i]
		}
	}
	return nil
}
