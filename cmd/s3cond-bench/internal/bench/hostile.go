package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Hostile describes a run of anonymous slow clients, each sending a POST
// Object form whose first part header is huge and then trickles (issue 23:
// s3cond buffered such headers before authenticating anything).
type Hostile struct {
	// Address is the host:port of the server, loopback only.
	Address, Bucket string
	// Conns is how many connections, HeaderBytes the header line's length
	// sent at once, Trickle the pause between the single bytes after it.
	Conns       int
	HeaderBytes int
	Trickle     time.Duration
	// Hold is how long the clients keep going once all have started.
	Hold time.Duration
	// PID is the server's process, whose memory is read.
	PID int
}

// HostileResult is what the server did with the hostile connections.
type HostileResult struct {
	Conns, DialFailed, StillOpen int
	// Answers counts the answers by "status code" (e.g. "503 SlowDown").
	Answers                  map[string]int
	BaseRSS, PeakRSS, EndRSS int64
}

// RunHostile runs h and samples the server's memory until it ends.
func RunHostile(ctx context.Context, h Hostile) (HostileResult, error) {
	if host, _, err := net.SplitHostPort(h.Address); err != nil || !net.ParseIP(host).IsLoopback() {
		return HostileResult{}, fmt.Errorf("hostile: %q is not a loopback host:port", h.Address)
	}
	res := HostileResult{Conns: h.Conns, Answers: map[string]int{}}
	var err error
	if res.BaseRSS, err = CurrentRSS(h.PID); err != nil {
		return res, err
	}
	if err := ResetPeakRSS(h.PID); err != nil {
		return res, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu               sync.Mutex
		wg               sync.WaitGroup
		dialFailed, open atomic.Int64
	)
	for range h.Conns {
		wg.Go(func() {
			answer, err := hostileConn(ctx, h, &open)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				dialFailed.Add(1)
			case answer != "":
				res.Answers[answer]++
			}
		})
	}
	// Read while the clients still run; then they hang up.
	select {
	case <-ctx.Done():
	case <-time.After(h.Hold):
	}
	res.StillOpen = int(open.Load())
	res.PeakRSS, err = PeakRSS(h.PID)
	if err == nil {
		res.EndRSS, err = CurrentRSS(h.PID)
	}
	cancel()
	wg.Wait()
	if err != nil {
		return res, err
	}
	res.DialFailed = int(dialFailed.Load())
	return res, nil
}

// hostileConn is one client: it sends the form's head and the huge header
// line, then one byte per Trickle until ctx ends or the server answers.
// It returns the answer ("" if none came).
func hostileConn(ctx context.Context, h Hostile, open *atomic.Int64) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", h.Address)
	if err != nil {
		return "", fmt.Errorf("dial: %w", err)
	}
	open.Add(1)
	answered := make(chan string, 1)
	go func() { answered <- readAnswer(conn); open.Add(-1) }()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	defer conn.Close()
	head := "POST /" + h.Bucket + " HTTP/1.1\r\nHost: " + h.Address +
		"\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 1000000000\r\n\r\n" +
		"--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\nX-Filler: "
	if _, err := io.WriteString(conn, head); err == nil {
		chunk := []byte(strings.Repeat("a", 64<<10))
		for sent := 0; sent < h.HeaderBytes && err == nil; sent += len(chunk) {
			_, err = conn.Write(chunk[:min(len(chunk), h.HeaderBytes-sent)])
		}
		for err == nil {
			select {
			case a := <-answered:
				return a, nil
			case <-ctx.Done():
				return "", nil
			case <-time.After(h.Trickle):
				_, err = conn.Write([]byte("a"))
			}
		}
	}
	select {
	case a := <-answered:
		return a, nil
	case <-ctx.Done():
		return "", nil
	}
}

// readAnswer reads the server's answer: its status and S3 error code.
func readAnswer(conn net.Conn) string {
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	code, _, _ := strings.Cut(string(body), "</Code>")
	_, code, _ = strings.Cut(code, "<Code>")
	return fmt.Sprintf("%d %s", resp.StatusCode, code)
}

// WriteHostile prints r as one Markdown table row with its header.
func WriteHostile(w io.Writer, h Hostile, r HostileResult) {
	fmt.Fprintln(w, "| connections | header bytes | held | RSS before | peak RSS | RSS at end | still open | answers | dial failed |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var answers []string
	for a, n := range r.Answers {
		answers = append(answers, fmt.Sprintf("%d × %s", n, a))
	}
	fmt.Fprintf(w, "| %d | %d | %s | %d MiB | %d MiB | %d MiB | %d | %s | %d |\n", r.Conns, h.HeaderBytes, h.Hold,
		r.BaseRSS>>20, r.PeakRSS>>20, r.EndRSS>>20, r.StillOpen, strings.Join(answers, ", "), r.DialFailed)
}
