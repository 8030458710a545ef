// Command go-sql answers GET /doc/{id} with the JSON document of that id, read by primary
// key from PostgreSQL through database/sql's pool (driver: pgx), SetMaxOpenConns(POOL).
//
//	go-sql PORT PGHOST PGPORT POOL
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

const usage = "usage: go-sql PORT PGHOST PGPORT POOL (PORT 0-65535, PGPORT 1-65535, POOL 1-1000)"

func main() {
	log.SetFlags(0)
	if len(os.Args) != 5 {
		fail(usage)
	}
	_, err1 := strconv.ParseUint(os.Args[1], 10, 16)
	pgport, err2 := strconv.ParseUint(os.Args[3], 10, 16)
	pool, err3 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil || pgport == 0 || err3 != nil || pool < 1 || pool > 1000 {
		fail(usage)
	}

	dsn := fmt.Sprintf("host=%s port=%d user=postgres dbname=postgres sslmode=disable", os.Args[2], pgport)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		fail("go-sql: " + err.Error())
	}
	// The pool under test: at most POOL connections, all kept open once made (the default
	// keeps 2 idle, which would close and reopen connections under load).
	db.SetMaxOpenConns(pool)
	db.SetMaxIdleConns(pool)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err = db.PingContext(ctx)
	cancel()
	if err != nil {
		fail(fmt.Sprintf("go-sql: cannot reach PostgreSQL at %s:%d: %v (is it running?)", os.Args[2], pgport, err))
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /doc/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 32)
		if err != nil || id < 0 || r.PathValue("id")[0] == '+' {
			http.Error(w, "bad id: want a number", http.StatusBadRequest)
			return
		}
		var body []byte
		err = db.QueryRowContext(r.Context(), "SELECT body::text FROM docs WHERE id = $1", id).Scan(&body)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			http.Error(w, "no such document", http.StatusNotFound)
		case err != nil:
			if r.Context().Err() == nil { // not the client going away
				log.Printf("doc %d: %v", id, err)
			}
			http.Error(w, "database error", http.StatusServiceUnavailable)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		}
	})

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", os.Args[1]))
	if err != nil {
		fail("go-sql: " + err.Error())
	}
	fmt.Printf("listening on %s (pool %d)\n", ln.Addr(), pool)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fail("go-sql: " + err.Error())
	}
	db.Close()
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(2)
}
