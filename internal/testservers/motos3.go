package testservers

import (
	"net"
	"testing"
	"time"
)

// motoThreadedServer runs moto's server application as moto_server does:
// threaded, without motoSerialServer's lock, so its S3 emulation meets
// concurrent requests the way clients send them (the probe's races).
const motoThreadedServer = `
import os, signal, sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

host, port = sys.argv[1], int(sys.argv[2])
os.environ.setdefault("MOTO_PORT", str(port))
app = DomainDispatcherApplication(create_backend_app)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
run_simple(host, port, app, threaded=True)
`

// StartMotoS3 starts moto's S3 emulation, threaded as moto_server runs it,
// on a free 127.0.0.1 port and returns its endpoint. Any key is accepted.
func StartMotoS3(t testing.TB) string {
	t.Helper()
	addr := FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	Start(t, Spec{
		Name:  "moto-s3",
		Path:  MotoPython(),
		Needs: "moto",
		Args:  []string{"-c", motoThreadedServer, "127.0.0.1", port},
		Wait:  90 * time.Second,
		Addr:  addr,
	})
	return "http://" + addr
}
