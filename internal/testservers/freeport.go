package testservers

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lowestPickedPort is where FreePort's ports start: above the well-known
// and most registered service ports.
const lowestPickedPort = 10000

// handedOut are the ports FreePort gave this test binary, so no two of its
// servers are handed one port (a server may not have bound its port yet).
var handedOut sync.Map

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. It
// is drawn below the kernel's ephemeral range: a port from that range
// (what a listen on port 0 picks) can be taken by any outgoing connection
// of the machine's busy tests before the server binds it, which made a
// server's start fail with "address already in use".
func FreePort(t testing.TB) int {
	t.Helper()
	if high := ephemeralLow(); high > lowestPickedPort+1000 {
		for range 1000 {
			port := lowestPickedPort + rand.IntN(high-lowestPickedPort)
			if _, taken := handedOut.LoadOrStore(port, true); taken {
				continue
			}
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
			if err != nil {
				continue
			}
			l.Close()
			return port
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ephemeralLow is the first port of the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), or Linux's default where it cannot be read.
func ephemeralLow() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(raw))
	if len(fields) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return low
}
