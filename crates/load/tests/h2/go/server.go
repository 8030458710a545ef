// An HTTP/2 server from Go's standard library (net/http, h2c with prior knowledge) that
// allows 5 streams per connection and counts what it served: every request, and the most
// requests any one connection had in flight at once. The load engine's tests read
// GET /stats ("MAX_IN_FLIGHT SERVED") after a run.
//
// It answers 400 to a request whose fields did not arrive as foxbench sends them (Host,
// User-Agent, Accept, and an X-Check naming the request's own path when there is one): the
// check that HPACK-indexed fields decode to the right values on every request.
//
//	go run server.go   (prints the address it listens on, then serves until killed)
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

type connKey struct{}

// perConn counts one connection's requests in flight.
type perConn struct{ inFlight atomic.Int64 }

func main() {
	var maxInFlight, served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%d %d", maxInFlight.Load(), served.Load())
	})
	var addr string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		check := r.Header.Get("X-Check")
		if r.Host != addr || !strings.HasPrefix(r.UserAgent(), "foxbench/") ||
			r.Header.Get("Accept") != "*/*" || (check != "" && check != r.URL.RequestURI()) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		c := r.Context().Value(connKey{}).(*perConn)
		n := c.inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		// Long enough that a client keeping more than 5 streams open would be seen.
		time.Sleep(500 * time.Microsecond)
		served.Add(1)
		c.inFlight.Add(-1)
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
	})
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:   mux,
		Protocols: &protocols,
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: 5},
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, &perConn{})
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	addr = ln.Addr().String()
	fmt.Println(addr)
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
