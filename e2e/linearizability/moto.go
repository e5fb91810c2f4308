package linearizability

import (
	"testing"

	"github.com/s3cond/s3cond/internal/testservers"
)

// Moto is a moto server (standing in for DynamoDB) that a test can stop and
// start again on the same address. It keeps everything in memory: a
// restart loses the lease table.
type Moto struct {
	Endpoint string
	addr     string
	process  *testservers.Process
}

// StartRestartableMoto starts moto on a free port.
func StartRestartableMoto(t testing.TB) *Moto {
	t.Helper()
	m := &Moto{addr: testservers.FreeAddr(t)}
	m.Endpoint = "http://" + m.addr
	m.Start(t)
	return m
}

// Start runs moto (again) on its address.
func (m *Moto) Start(t testing.TB) {
	t.Helper()
	m.process = testservers.Start(t, testservers.MotoSpec(m.addr))
}

// Kill stops moto at once, losing its tables.
func (m *Moto) Kill() { m.process.Kill() }
