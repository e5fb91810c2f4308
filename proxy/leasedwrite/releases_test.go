package leasedwrite

import (
	"context"
	"testing"
	"time"
)

func TestWaitForReleasesCoversReleasesStartedWhileWaiting(t *testing.T) {
	p := &Writer{}
	if err := p.WaitForReleases(context.Background()); err != nil {
		t.Fatalf("nothing running: %v", err)
	}
	p.releases.start()
	waited := make(chan error, 1)
	go func() { waited <- p.WaitForReleases(context.Background()) }()
	// A handler cancelled at shutdown starts its release after the wait
	// began; then the first release ends.
	p.releases.start()
	p.releases.done()
	select {
	case err := <-waited:
		t.Fatalf("WaitForReleases returned (%v) with a release still running", err)
	case <-time.After(50 * time.Millisecond):
	}
	p.releases.done()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WaitForReleases did not return once every release had ended")
	}
	// A bounded wait gives up with an error.
	p.releases.start()
	defer p.releases.done()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := p.WaitForReleases(ctx); err == nil {
		t.Fatal("WaitForReleases returned nil with a release running past its deadline")
	}
}
