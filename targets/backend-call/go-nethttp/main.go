// Command server is the backend-call suite's Go front end: a net/http server that answers
// GET / by calling the hello backend once with an http.Client.
//
//	server PORT BACKEND_URL [IDLE]
//
// Without IDLE the client uses http.DefaultTransport as every Go program gets it, whose
// MaxIdleConnsPerHost is 2 (http.DefaultMaxIdleConnsPerHost): beyond 2 concurrent calls,
// each finished backend connection is closed instead of pooled, and MaxConnsPerHost is 0 (no
// limit): one backend connection per call in flight. IDLE sets MaxIdleConnsPerHost,
// MaxIdleConns and MaxConnsPerHost on a clone of the default Transport, the tuned row: at most
// IDLE backend connections, all kept alive; further calls wait for one. Go's runtime raises
// the soft RLIMIT_NOFILE to the hard limit by itself (since Go 1.19).
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

const usage = "usage: server PORT BACKEND_URL [IDLE] (e.g. server 8080 http://127.0.0.1:9090 1000)"

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 {
		fmt.Fprintf(os.Stderr, "server: expected 2 or 3 arguments, got %d; %s\n", len(os.Args)-1, usage)
		os.Exit(2)
	}
	port, err := strconv.ParseUint(os.Args[1], 10, 16)
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: PORT %q is not a port number; %s\n", os.Args[1], usage)
		os.Exit(2)
	}
	client := &http.Client{} // nil Transport: http.DefaultTransport, MaxIdleConnsPerHost 2
	if len(os.Args) == 4 {
		idle, err := strconv.Atoi(os.Args[3])
		if err != nil || idle < 1 {
			fmt.Fprintf(os.Stderr, "server: IDLE %q is not a positive integer; %s\n", os.Args[3], usage)
			os.Exit(2)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = idle
		t.MaxIdleConns = idle
		t.MaxConnsPerHost = idle
		client.Transport = t
	}
	hello := os.Args[2] + "/hello"

	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		url := hello
		if r.URL.RawQuery != "" {
			url += "?" + r.URL.RawQuery
		}
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, url, nil)
		if err != nil {
			http.Error(w, "bad backend request: "+err.Error(), http.StatusBadGateway)
			return
		}
		if id := r.Header.Get("X-Request-Id"); id != "" {
			req.Header.Set("X-Request-Id", id)
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, "backend: "+err.Error(), http.StatusBadGateway)
			return
		}
		// Read to the end and close, so the connection can go back to the pool.
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			http.Error(w, fmt.Sprintf("backend answered %d (%v)", resp.StatusCode, err), http.StatusBadGateway)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/plain")
		if id := resp.Header.Get("X-Request-Id"); id != "" {
			h.Set("X-Request-Id", id)
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})

	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: cannot listen on 127.0.0.1:%d: %v: is the port free?\n", port, err)
		os.Exit(2)
	}
	srv := &http.Server{Handler: mux, ErrorLog: log.New(io.Discard, "", 0)}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		// Idle keep-alive connections close at once; one in-flight call gets a second.
		shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
		srv.Close()
	}()
	fmt.Printf("listening on %s\n", ln.Addr())
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		fmt.Fprintf(os.Stderr, "server: %v\n", err)
		os.Exit(1)
	}
}
