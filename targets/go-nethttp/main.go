// Avatar redirector on the standard library's net/http: every request gets a
// 302 to one of N fox avatars picked at random.
//
// Usage: server PORT N [TEMPLATE]
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 || len(os.Args) > 4 {
		fmt.Fprintln(os.Stderr, "usage: server PORT N [TEMPLATE]")
		os.Exit(2)
	}
	port, err := strconv.ParseUint(os.Args[1], 10, 16)
	if err != nil {
		log.Fatalf("bad PORT %q", os.Args[1])
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil || n < 1 || n > 65535 {
		log.Fatalf("bad N %q: want 1..65535", os.Args[2])
	}
	template := "https://avatar.example/Renard-{n}.png"
	if len(os.Args) == 4 {
		template = os.Args[3]
	}

	// Not http.Redirect: for a GET it adds Content-Type and a small HTML
	// body ("<a href=...>Found</a>."). Writing no body makes net/http send
	// Content-Length: 0, which is what the contract asks for.
	redirect := func(w http.ResponseWriter, r *http.Request) {
		url := strings.ReplaceAll(template, "{n}", strconv.Itoa(rand.IntN(n)+1))
		w.Header().Set("Location", url)
		w.WriteHeader(http.StatusFound)
	}

	// Caught before the port opens, so a SIGTERM right after startup is graceful too.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.FormatUint(port, 10)))
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(redirect),
		ReadHeaderTimeout: 10 * time.Second, // against slowloris; a benchmark never hits it
	}
	fmt.Fprintln(os.Stderr, "listening on", ln.Addr())
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Fatal(err)
		}
	}()

	// SIGTERM: stop accepting, let in-flight requests finish, close the rest.
	<-ctx.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
}
