// Package deploytest holds the tests of the deployment artifacts in deploy/
// (the Helm chart's rendered manifests, decoded strictly into the Kubernetes
// API types). It has no production code: its dependencies (k8s.io/api and
// friends) never reach the s3cond binary.
package deploytest
