// An HTTP/3 client (quic-go) against avatar's --h3-listen.
// Run: go run . MODE https://127.0.0.1:PORT CERT.pem [IMAGES]
//
//	routes: every route over one connection, then 50 requests at once.
//	burst N: N requests at once on one connection (past the server's stream limit).
//	slow: a POST whose body is held open until a line comes on stdin.
//	big PATH N SIZE: N GETs of PATH at once, each body SIZE bytes long
//	(with H3_SMALL_WINDOW set, over 64 KiB receive windows).
//	cancel PATH N: N GETs of PATH, each cancelled after its head (STOP_SENDING), then one whole.
//	slowbig PATH SIZE: a GET of PATH whose body is read only after a line comes on stdin.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	mode, base, certFile := os.Args[1], os.Args[2], os.Args[3]
	pem, err := os.ReadFile(certFile)
	if err != nil {
		fail("%v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		fail("no certificate in %s", certFile)
	}
	qc := &quic.Config{MaxIdleTimeout: 30 * time.Second}
	if os.Getenv("H3_SMALL_WINDOW") != "" {
		// A slow reader: 64 KiB per stream and per connection, never grown.
		qc.InitialStreamReceiveWindow = 64 << 10
		qc.MaxStreamReceiveWindow = 64 << 10
		qc.InitialConnectionReceiveWindow = 64 << 10
		qc.MaxConnectionReceiveWindow = 64 << 10
	}
	tr := &http3.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		QUICConfig:      qc,
	}
	defer tr.Close()
	client := &http.Client{
		Transport:     tr,
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	do := func(method, path string, body io.Reader) (*http.Response, []byte) {
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			fail("%v", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			fail("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			fail("%s %s body: %v", method, path, err)
		}
		if resp.Proto != "HTTP/3.0" {
			fail("%s %s came over %s", method, path, resp.Proto)
		}
		return resp, b
	}
	switch mode {
	case "routes":
		images, _ := strconv.Atoi(os.Args[4])
		for i := 0; i < 20; i++ {
			resp, _ := do("GET", "/", nil)
			loc := resp.Header.Get("Location")
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(loc, "https://avatar.example/Renard-"), ".png"))
			if resp.StatusCode != 302 || err != nil || n < 1 || n > images {
				fail("GET / gave %d with Location %q (want 302 and 1..=%d)", resp.StatusCode, loc, images)
			}
		}
		resp, body := do("GET", "/ff8800.svg", nil)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/svg+xml") ||
			!strings.Contains(string(body), "#ff8800") || resp.ContentLength != int64(len(body)) {
			fail("GET /ff8800.svg gave %d %q, %d bytes of %d", resp.StatusCode, resp.Header.Get("Content-Type"), len(body), resp.ContentLength)
		}
		etag := resp.Header.Get("Etag")
		req, _ := http.NewRequest("GET", base+"/ff8800.svg", nil)
		req.Header.Set("If-None-Match", etag)
		if r, err := client.Do(req); err != nil || r.StatusCode != 304 {
			fail("If-None-Match %s: %v %v", etag, r, err)
		}
		if resp, body := do("GET", "/healthz", nil); resp.StatusCode != 200 || len(body) == 0 {
			fail("GET /healthz gave %d %q", resp.StatusCode, body)
		}
		if resp, body := do("HEAD", "/ff8800.svg", nil); resp.StatusCode != 200 || len(body) != 0 {
			fail("HEAD /ff8800.svg gave %d with %d body bytes", resp.StatusCode, len(body))
		}
		if resp, _ := do("GET", "/zz.svg", nil); resp.StatusCode != 404 {
			fail("GET /zz.svg gave %d, want 404", resp.StatusCode)
		}
		if resp, _ := do("POST", "/", strings.NewReader("hello")); resp.StatusCode != 405 {
			fail("POST / gave %d, want 405", resp.StatusCode)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 50)
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(base + "/random.svg")
				if err != nil {
					errs <- err.Error()
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 302 {
					errs <- fmt.Sprintf("status %d", resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			fail("concurrent GET /random.svg: %s", e)
		}
		resp, body = do("GET", "/metrics", nil)
		if resp.StatusCode != 200 {
			fail("GET /metrics gave %d", resp.StatusCode)
		}
		fmt.Printf("go h3 client ok\n%s", body)
	case "burst":
		n, _ := strconv.Atoi(os.Args[4])
		// One connection first, so that every request of the burst shares it.
		do("GET", "/healthz", nil)
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(base + "/")
				if err != nil {
					errs <- err.Error()
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 302 {
					errs <- fmt.Sprintf("status %d", resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			fail("burst: %s", e)
		}
		_, body := do("GET", "/metrics", nil)
		fmt.Printf("go h3 burst ok\n%s", body)
	case "slow":
		pr, pw := io.Pipe()
		req, _ := http.NewRequestWithContext(context.Background(), "POST", base+"/", pr)
		req.ContentLength = 8
		go pw.Write([]byte("half"))
		resp, err := client.Do(req)
		if err != nil {
			fail("slow POST: %v", err)
		}
		// The answer is whole before the request is: read it now, since a connection the
		// server closes once the request ends takes unread response bytes with it.
		if _, err := io.ReadAll(resp.Body); err != nil {
			fail("the response body: %v", err)
		}
		fmt.Printf("answered %d\n", resp.StatusCode)
		bufio.NewReader(os.Stdin).ReadString('\n')
		if _, err := pw.Write([]byte("done")); err != nil {
			fail("the rest of the body: %v", err)
		}
		pw.Close()
		fmt.Println("slow done")
	case "big":
		path := os.Args[4]
		n, _ := strconv.Atoi(os.Args[5])
		size, _ := strconv.Atoi(os.Args[6])
		do("GET", "/healthz", nil)
		var wg sync.WaitGroup
		errs := make(chan string, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(base + path)
				if err != nil {
					errs <- err.Error()
					return
				}
				got, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || got != int64(size) {
					errs <- fmt.Sprintf("status %d, %d bytes of %d: %v", resp.StatusCode, got, size, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			fail("big: %s", e)
		}
		_, body := do("GET", "/metrics", nil)
		fmt.Printf("go h3 big ok\n%s", body)
	case "cancel":
		path := os.Args[4]
		n, _ := strconv.Atoi(os.Args[5])
		do("GET", "/healthz", nil)
		for i := 0; i < n; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
			resp, err := client.Do(req)
			if err != nil {
				fail("cancelled GET %d: %v", i, err)
			}
			// Cancelling a request with its body unread sends STOP_SENDING.
			cancel()
			resp.Body.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/healthz", nil)
		resp, err := client.Do(req)
		if err != nil {
			fail("GET /healthz after %d cancelled: %v", n, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		_, body := do("GET", "/metrics", nil)
		fmt.Printf("go h3 cancel ok\n%s", body)
	case "slowbig":
		path := os.Args[4]
		size, _ := strconv.Atoi(os.Args[5])
		resp, err := client.Get(base + path)
		if err != nil {
			fail("slowbig GET: %v", err)
		}
		fmt.Printf("answered %d\n", resp.StatusCode)
		bufio.NewReader(os.Stdin).ReadString('\n')
		got, err := io.Copy(io.Discard, resp.Body)
		if err != nil || got != int64(size) {
			fail("slowbig body: %d bytes of %d: %v", got, size, err)
		}
		fmt.Println("slowbig done")
	}
}
