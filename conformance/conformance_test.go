// Package conformance runs the official Gateway API conformance suite, as released in
// sigs.k8s.io/gateway-api/conformance, against the cluster KUBECONFIG points at. The suite's
// own flags select the GatewayClass, profiles, features and report file (scripts/conformance.sh
// passes them).
package conformance

import (
	"testing"

	"sigs.k8s.io/gateway-api/conformance"
)

func TestConformance(t *testing.T) {
	conformance.RunConformance(t)
}
