# Sourced (bash) by targets/nginx-tls/run.sh and targets/caddy/run.sh: a TLS front (nginx or
# caddy) and, in proxy mode, the app behind it, both children of the script, which stops
# both when either exits or it is signalled (SIGTERM, as foxbench stops a target): nothing
# is left behind. `wait -n` blocks without waking, so the script costs no CPU while
# measured (a polling loop would fork a `sleep` every second into the measured tree).
#
#   supervise PORT SERVER_CMD [ARG...] -- [APP_CMD [ARG...]]
#       starts APP_CMD, if given, with the word APP_PORT in its arguments replaced by
#       $app_port, and waits (60 s at most) until it accepts there; then SERVER_CMD, which
#       serves https://127.0.0.1:PORT; then waits for either to exit, and exits: 0 when
#       signalled, else the app's status if it failed, else the server's.

# Whether something accepts on 127.0.0.1:$1 (python3: a shell cannot connect portably).
accepts() {
    python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()' "$1" 2>/dev/null
}

supervise() {
    local port=$1
    shift
    local server=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do server+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    set +e
    stop= app= server_pid=
    stop_all() {
        # shellcheck disable=SC2086
        kill -TERM $app $server_pid 2>/dev/null
    }
    trap 'stop=1; stop_all' TERM INT HUP
    if [ $# -gt 0 ]; then
        local cmd=$1 args=() a i=0
        shift
        for a in "$@"; do
            [ "$a" = APP_PORT ] && a=$app_port
            args+=("$a")
        done
        "$cmd" "${args[@]}" &
        app=$!
        # Serve only once the app accepts: until then the front would answer 502.
        until accepts "$app_port"; do
            i=$((i + 1))
            if [ -n "$stop" ] || ! kill -0 "$app" 2>/dev/null || [ "$i" -gt 600 ]; then
                echo "run.sh: $cmd is not listening on 127.0.0.1:$app_port (exited, or 60 s passed)" >&2
                stop_all
                wait "$app"
                exit 1
            fi
            sleep 0.1
        done
        echo "app $cmd on 127.0.0.1:$app_port"
    fi
    "${server[@]}" &
    server_pid=$!
    echo "listening on https://127.0.0.1:$port"
    # Either process exiting ends the service; a trapped signal ends the wait early too.
    wait -n
    stop_all
    local status=0 server_status
    if [ -n "$app" ]; then wait "$app"; status=$?; fi
    wait "$server_pid"; server_status=$?
    [ -n "$stop" ] && exit 0
    [ "$status" -ne 0 ] && exit "$status"
    exit "$server_status"
}
