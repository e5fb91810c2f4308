package frontconn

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// dialFrom opens a loopback connection to l from the address local
// (127.0.0.0/8 is all loopback), for connections of distinct clients.
func dialFrom(t *testing.T, l net.Listener, local string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	client, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// acceptNext accepts the next connection l returns and checks it comes
// from want.
func acceptNext(t *testing.T, l net.Listener, want string) *Conn {
	t.Helper()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if got := Source(c.RemoteAddr().String()); got != want {
		t.Fatalf("accepted a connection from %s, want %s", got, want)
	}
	return c.(*Conn)
}

// closedByServer reports whether the server closed client (it sends the
// client nothing, so a read ends in EOF or a reset, or in the deadline).
func closedByServer(t *testing.T, client net.Conn) bool {
	t.Helper()
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := client.Read(make([]byte, 1))
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func newListener(t *testing.T, limits Limits) *CappedListener {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewCappedListener(inner, limits)
	t.Cleanup(func() { l.Close() })
	return l
}

// One address may hold only its share of connections that have not
// authenticated (issue 32, finding 2); another address is served, and an
// authenticated connection frees its share.
func TestCappedListenerBoundsUnauthenticatedConnectionsPerSource(t *testing.T) {
	var closed []string
	l := newListener(t, Limits{MaxConnections: 10, MaxUnauthenticatedPerSource: 2,
		Closed: func(reason string) { closed = append(closed, reason) }})
	dialFrom(t, l, "127.0.0.2")
	first := acceptNext(t, l, "127.0.0.2")
	dialFrom(t, l, "127.0.0.2")
	second := acceptNext(t, l, "127.0.0.2")
	third := dialFrom(t, l, "127.0.0.2")
	dialFrom(t, l, "127.0.0.1")
	acceptNext(t, l, "127.0.0.1") // the third from 127.0.0.2 was closed, not returned
	if !closedByServer(t, third) {
		t.Fatal("a third unauthenticated connection from one address stayed open")
	}

	Authenticated(NewContext(context.Background(), first))
	dialFrom(t, l, "127.0.0.2")
	acceptNext(t, l, "127.0.0.2")
	_ = first.Close() // authenticated: its share was given back already
	_ = second.Close()
	dialFrom(t, l, "127.0.0.2")
	acceptNext(t, l, "127.0.0.2") // a closed one frees its share
	refused := dialFrom(t, l, "127.0.0.2")
	dialFrom(t, l, "127.0.0.3")
	acceptNext(t, l, "127.0.0.3")
	if !closedByServer(t, refused) {
		t.Fatal("a share was given back twice (authenticated, then closed)")
	}
	if strings.Join(closed, ",") != ClosedAddressCap+","+ClosedAddressCap {
		t.Fatalf("the cap reported %v, want two address_cap closings", closed)
	}
}

// Under the cap, the connection idle longest is closed for a new one
// (issue 32, finding 2: idle keep-alive connections filled the cap); an
// active one never is, and with none idle the new one is refused.
func TestCappedListenerShedsTheOldestIdleConnection(t *testing.T) {
	var closed []string
	l := newListener(t, Limits{MaxConnections: 2, Closed: func(reason string) { closed = append(closed, reason) }})
	aClient, bClient := dialFrom(t, l, "127.0.0.1"), dialFrom(t, l, "127.0.0.1")
	a, b := acceptNext(t, l, "127.0.0.1"), acceptNext(t, l, "127.0.0.1")
	l.ConnState(a, http.StateIdle)
	l.ConnState(b, http.StateIdle)
	dialFrom(t, l, "127.0.0.1")
	if c := acceptNext(t, l, "127.0.0.1"); c.refused {
		t.Fatal("a new connection was refused while idle ones held the cap")
	}
	if !closedByServer(t, aClient) {
		t.Fatal("the connection idle longest was not closed")
	}
	l.ConnState(b, http.StateActive) // its next request arrived
	dialFrom(t, l, "127.0.0.1")
	if c := acceptNext(t, l, "127.0.0.1"); !c.refused {
		t.Fatal("a connection past the cap was not refused with none idle")
	}
	_ = bClient.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := bClient.Read(make([]byte, 1)); !isTimeout(err) {
		t.Fatalf("an active connection was closed: %v", err)
	}
	if strings.Join(closed, ",") != ClosedIdle+","+RefusedPastCap {
		t.Fatalf("the cap reported %v, want idle_shed then refused", closed)
	}
}

func TestSourceGroupsIPv6By64(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.2:5555":             "127.0.0.2",
		"[::ffff:10.0.0.1]:80":       "10.0.0.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"not an address":             "not an address",
	} {
		if got := Source(addr); got != want {
			t.Errorf("Source(%q) = %q, want %q", addr, got, want)
		}
	}
}

// Under TLS, the server's hooks see the *tls.Conn: the book still finds
// the TCP connection beneath, to free its address's share and to shed it
// when idle.
func TestCappedListenerSeesThroughTLS(t *testing.T) {
	l := newListener(t, Limits{MaxConnections: 1, MaxUnauthenticatedPerSource: 1})
	dialFrom(t, l, "127.0.0.2")
	c := acceptNext(t, l, "127.0.0.2")
	wrapped := tls.Server(c, &tls.Config{})
	Authenticated(NewContext(context.Background(), wrapped))
	l.ConnState(wrapped, http.StateIdle)
	if c.unauthenticated || c.idleSince == nil {
		t.Fatalf("through TLS: unauthenticated=%v idle=%v, want authenticated and idle", c.unauthenticated, c.idleSince != nil)
	}
	dialFrom(t, l, "127.0.0.2")
	if next := acceptNext(t, l, "127.0.0.2"); next.refused {
		t.Fatal("the idle TLS connection was not shed for a new one")
	}
}
