package frontconn

import (
	"context"
	"net"
	"testing"
	"time"
)

// dialAccept opens a loopback connection and accepts it through l.
func dialAccept(t *testing.T, l net.Listener) *Conn {
	t.Helper()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*Conn)
}

func TestCappedListenerRefusesPastTheCapAndFreesSlotsOnClose(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewCappedListener(inner, Limits{MaxConnections: 2})
	defer l.Close()
	a, b := dialAccept(t, l), dialAccept(t, l)
	over := dialAccept(t, l)
	if a.refused || b.refused || !over.refused {
		t.Fatalf("refused: %v %v %v, want only the third", a.refused, b.refused, over.refused)
	}
	if !Refused(NewContext(context.Background(), over)) || Refused(NewContext(context.Background(), a)) {
		t.Fatal("Refused does not tell the connection past the cap")
	}
	// net/http's 30 s header timeout, or no deadline at all, cannot keep a
	// refused connection open past RefusalDeadline.
	for _, d := range []time.Time{{}, time.Now().Add(time.Hour)} {
		if got := over.clamp(d); got.After(time.Now().Add(RefusalDeadline)) || got.IsZero() {
			t.Fatalf("deadline %v clamped to %v", d, got)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	_ = a.Close() // a second Close gives nothing back twice
	if again := dialAccept(t, l); again.refused {
		t.Fatal("a connection after one closed was refused")
	}
	if again := dialAccept(t, l); !again.refused {
		t.Fatal("the cap counted a connection closed twice as two")
	}
}

func TestCappedListenerWaitsWhenRefusalsAreFullAndCloseUnblocks(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewCappedListener(inner, Limits{MaxConnections: 1})
	dialAccept(t, l)
	for range MaxRefusing {
		dialAccept(t, l)
	}
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	accepted := make(chan error, 1)
	go func() { _, err := l.Accept(); accepted <- err }()
	select {
	case err := <-accepted:
		t.Fatalf("Accept returned (%v) with the cap and the refusals full", err)
	case <-time.After(50 * time.Millisecond): // a wait that cannot end is checked for a moment
	}
	_ = l.Close()
	if err := <-accepted; err == nil {
		t.Fatal("Accept succeeded after Close")
	}
}
