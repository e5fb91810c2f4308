// Package testkit holds what tests of several packages need alike, so no
// test copies it: waiting for events a component reports (Events) instead
// of sleeping until they have probably happened.
package testkit
