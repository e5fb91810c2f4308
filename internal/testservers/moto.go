package testservers

import (
	"net"
	"os"
	"testing"
	"time"
)

// motoSerialServer runs moto's own server application (what moto_server
// runs) behind a lock, one request at a time. moto_server serves requests
// on parallel threads and its conditional writes are check-then-act without
// a lock, so two racing conditional PutItems can both succeed, which
// DynamoDB never allows. Serialising requests restores DynamoDB's atomicity.
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

// MotoPython is the Python that has moto installed: $S3COND_MOTO_PYTHON, else
// python3 on PATH (with pyenv, the one whose moto_server is on PATH).
func MotoPython() string {
	if p := os.Getenv("S3COND_MOTO_PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// StartMoto starts moto (an in-memory emulation of AWS, used here for
// DynamoDB) on a free 127.0.0.1 port, stops it when the test ends and returns
// its endpoint, "http://127.0.0.1:PORT". It serves one request at a time
// (see motoSerialServer). A missing moto fails the test (see Require).
func StartMoto(t testing.TB) string {
	t.Helper()
	addr := FreeAddr(t)
	Start(t, MotoSpec(addr))
	return "http://" + addr
}

// MotoSpec starts the serialised moto on addr ("127.0.0.1:PORT"), for tests
// that stop it and start it again on the same address.
func MotoSpec(addr string) Spec {
	_, port, _ := net.SplitHostPort(addr)
	return Spec{
		Name:  "moto",
		Path:  MotoPython(),
		Needs: "moto",
		Args:  []string{"-c", motoSerialServer, "127.0.0.1", port},
		// Importing moto takes many seconds on a busy 2-core machine.
		Wait: 90 * time.Second,
		Addr: addr,
	}
}
