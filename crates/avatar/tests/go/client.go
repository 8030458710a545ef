// A Go net/http client against avatar: redirects not followed, keep-alive reused.
// Run: go run client.go http://127.0.0.1:PORT
package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	base := os.Args[1]
	client := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	reused := 0
	get := func(method, path string) (*http.Response, []byte) {
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			fail("%v", err)
		}
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
			if i.Reused {
				reused++
			}
		}}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		resp, err := client.Do(req)
		if err != nil {
			fail("%s %s: %v", method, path, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			fail("%s %s body: %v", method, path, err)
		}
		return resp, body
	}
	for i := 0; i < 20; i++ {
		resp, _ := get("GET", "/")
		loc := resp.Header.Get("Location")
		if resp.StatusCode != 302 || !strings.HasPrefix(loc, "https://avatar.example/Renard-") {
			fail("GET / = %d %q", resp.StatusCode, loc)
		}
	}
	resp, body := get("GET", "/ff8800.svg")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml; charset=utf-8" || !strings.Contains(string(body), "#ff8800") {
		fail("GET /ff8800.svg = %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, body = get("HEAD", "/ff8800.svg")
	if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength <= 0 {
		fail("HEAD /ff8800.svg = %d len %d", resp.StatusCode, resp.ContentLength)
	}
	resp, _ = get("GET", "/random.svg")
	if resp.StatusCode != 302 || !strings.HasSuffix(resp.Header.Get("Location"), ".svg") {
		fail("GET /random.svg = %d", resp.StatusCode)
	}
	resp, _ = get("POST", "/")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		fail("POST / = %d", resp.StatusCode)
	}
	if reused < 20 {
		fail("only %d of 24 requests reused a connection", reused)
	}
	fmt.Printf("go client ok, %d reused\n", reused)
}
