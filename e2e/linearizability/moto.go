package linearizability

import (
	"strconv"
	"testing"
	"time"

	"github.com/s3cond/s3cond/internal/testservers"
)

// motoSerialServer is testservers' serialised moto (see the comment on
// motoSerialServer in internal/testservers/moto.go; moto_server's own
// conditional writes race). It is repeated here because StartMoto hides
// its process, and these tests must stop moto and start it again on the
// same port.
const motoSerialServer = `
import os, signal, sys, threading
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))
app = DomainDispatcherApplication(create_backend_app)
lock = threading.Lock()

def serial(environ, start_response):
    with lock:
        return list(app(environ, start_response))

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
run_simple(host, port, serial, threaded=True)
`

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
	m.process = testservers.Start(t, motoSpec(m.addr))
}

func motoSpec(addr string) testservers.Spec {
	_, port, _ := splitHostPort(addr)
	return testservers.Spec{
		Name: "moto",
		Path: testservers.MotoPython(),
		Args: []string{"-c", motoSerialServer, "127.0.0.1", strconv.Itoa(port)},
		Wait: 90 * time.Second, // importing moto takes many seconds on a busy 2-core machine
		Addr: addr,
	}
}

// Kill stops moto at once, losing its tables.
func (m *Moto) Kill() { m.process.Kill() }
