// A quic-go HTTP/3 server for foxbench's tests: it misbehaves on request, by path.
//
//	go build -o server . && ./server CERT KEY CLOSES
//
// prints the UDP address it listens on (port 0, the kernel's pick), then serves until
// killed. Each connection the client closes with an application error code adds a line
// "closed 0xCODE" to the file CLOSES. Paths:
//
//	/echo/N        200, the body "N": a request's own answer, to match it to its request
//	/status/CODE   CODE at once, no body
//	/slow/MS/N     waits MS milliseconds, then as /echo/N
//	/reset         resets the request stream (H3_INTERNAL_ERROR, quic-go's abort)
//	/reject        the first such request on a connection is reset and stopped with
//	               H3_REQUEST_REJECTED (unprocessed: the client may send it again);
//	               the others as /status/200
//	/badframe      a SETTINGS frame on the request stream, which no client may take
//	               (H3_FRAME_UNEXPECTED, a connection error)
//	/control2      200, after opening a second control stream whose type, SETTINGS and
//	               FIN go in one write (H3_STREAM_CREATION_ERROR, once it is read)
//	/goaway/MS     200 at once; MS milliseconds later the connection's server shuts down
//	               gracefully (GOAWAY), answering what it already took; the listener
//	               goes on serving new connections
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

func main() {
	cert, err := tls.LoadX509KeyPair(os.Args[1], os.Args[2])
	if err != nil {
		panic(err)
	}
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		panic(err)
	}
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	// Its own listener, a server per connection: a GOAWAY ends one connection, and the
	// next is served.
	ln, err := quic.Listen(conn, tlsConf, &quic.Config{MaxIncomingStreams: 100})
	if err != nil {
		panic(err)
	}
	fmt.Println(conn.LocalAddr().String())
	os.Stdout.Sync()
	for {
		qc, err := ln.Accept(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return
		}
		srv := &http3.Server{}
		srv.Handler = handler(srv, qc)
		go srv.ServeQUICConn(qc)
		go logClose(qc, os.Args[3])
	}
}

// Appends "closed 0xCODE" to the file at `path` once the client closed `qc` with an
// application error.
func logClose(qc *quic.Conn, path string) {
	<-qc.Context().Done()
	var ae *quic.ApplicationError
	if !errors.As(context.Cause(qc.Context()), &ae) || !ae.Remote {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "closed 0x%x\n", uint64(ae.ErrorCode))
}

// The paths above, for the connection `srv` serves.
func handler(srv *http3.Server, qc *quic.Conn) http.Handler {
	var once, rejected sync.Once
	mux := http.NewServeMux()
	echo := func(w http.ResponseWriter, n string) {
		w.Header().Set("content-length", strconv.Itoa(len(n)))
		w.WriteHeader(200)
		w.Write([]byte(n))
	}
	mux.HandleFunc("/echo/", func(w http.ResponseWriter, r *http.Request) {
		echo(w, strings.TrimPrefix(r.URL.Path, "/echo/"))
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
		w.Header().Set("content-length", "0")
		w.WriteHeader(code)
	})
	mux.HandleFunc("/slow/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/slow/"), "/", 2)
		ms, _ := strconv.Atoi(parts[0])
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		n := ""
		if len(parts) > 1 {
			n = parts[1]
		}
		echo(w, n)
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/reject", func(w http.ResponseWriter, r *http.Request) {
		reject := false
		rejected.Do(func() { reject = true })
		if reject {
			str := w.(http3.HTTPStreamer).HTTPStream()
			str.CancelRead(quic.StreamErrorCode(0x10b))
			str.CancelWrite(quic.StreamErrorCode(0x10b))
			return
		}
		w.Header().Set("content-length", "0")
		w.WriteHeader(200)
	})
	mux.HandleFunc("/badframe", func(w http.ResponseWriter, r *http.Request) {
		str := w.(http3.HTTPStreamer).HTTPStream().QUICStream()
		str.Write([]byte{0x04, 0x00})
		str.Close()
	})
	mux.HandleFunc("/control2", func(w http.ResponseWriter, r *http.Request) {
		if str, err := qc.OpenUniStream(); err == nil {
			str.Write([]byte{0x00, 0x04, 0x00})
			str.Close()
		}
		w.Header().Set("content-length", "0")
		w.WriteHeader(200)
	})
	mux.HandleFunc("/goaway/", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/goaway/"))
		once.Do(func() {
			go func() {
				time.Sleep(time.Duration(ms) * time.Millisecond)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				srv.Shutdown(ctx)
			}()
		})
		echo(w, "g")
	})
	return mux
}
