%% avatar: answers every HTTP request with a 302 to one of N fox avatars.
%%
%%   erlc -o OUT avatar.erl
%%   erl -noinput -pa OUT -run avatar main PORT N [TEMPLATE]
%%
%% One acceptor process, one process per connection, and the VM's own HTTP
%% packet decoder ({packet, http_bin}) splits the heads, so there is no
%% parsing here beyond looking at the Connection header.
-module(avatar).
-export([main/1, connection/3]).

-define(TEMPLATE, "https://avatar.example/Renard-{n}.png").

%% -run hands over the command-line arguments as a list of strings.
main([Port, N]) -> main([Port, N, ?TEMPLATE]);
main([PortArg, NArg, Template]) ->
    case {string:to_integer(PortArg), string:to_integer(NArg)} of
        {{Port, ""}, {N, ""}} when Port >= 0, Port =< 65535, N >= 1, N =< 65535 ->
            serve(Port, N, unicode:characters_to_binary(Template));
        _ ->
            usage()
    end;
main(_) -> usage().

usage() ->
    io:format(standard_error, "usage: avatar PORT N [TEMPLATE]~n", []),
    halt(2).

serve(Port, N, Template) ->
    %% Split once; every "{n}" becomes the same fresh number per request.
    Parts = binary:split(Template, <<"{n}">>, [global]),
    Options = [binary, {ip, {127, 0, 0, 1}}, {packet, http_bin}, {packet_size, 8192},
               {active, false}, {reuseaddr, true}, {backlog, 4096}, {nodelay, true}],
    Listen = case gen_tcp:listen(Port, Options) of
                 {ok, L} -> L;
                 {error, Reason} ->
                     io:format(standard_error, "listen on port ~b: ~p~n", [Port, Reason]),
                     halt(1)
             end,
    {ok, Bound} = inet:port(Listen),
    %% OTP turns SIGTERM into init:stop(), an orderly shutdown that takes
    %% about a second even here. There is nothing to tidy, so let the kernel
    %% end the process at once.
    ok = os:set_signal(sigterm, default),
    io:format("listening on 127.0.0.1:~b~n", [Bound]),
    %% Accept in this process, the socket's owner: if it ever crashed, the
    %% exception would end main/1 and so the VM, not leave a deaf server.
    accept(Listen, Parts, N).

accept(Listen, Parts, N) ->
    case gen_tcp:accept(Listen) of
        {ok, Socket} ->
            Pid = spawn(?MODULE, connection, [Socket, Parts, N]),
            %% The socket is passive, so no messages need handing over: the
            %% new process may start receiving at once. Making it the owner
            %% closes the socket when it exits, however it exits.
            _ = gen_tcp:controlling_process(Socket, Pid);
        {error, emfile} ->
            %% Out of fds: wait for some connections to close. Not
            %% timer:sleep/1: loading the timer module needs an fd too.
            receive after 10 -> ok end;
        {error, _} ->
            ok
    end,
    accept(Listen, Parts, N).

%% Per connection: request line, headers, response, and again while the
%% client keeps the connection alive. The decoder keeps whatever follows a
%% head in its buffer, so pipelined requests are answered in order.
connection(Socket, Parts, N) ->
    case gen_tcp:recv(Socket, 0) of
        {ok, {http_request, _Method, _Uri, Version}} ->
            headers(Socket, Parts, N, Version, default);
        _ ->                            % http_error (garbage), closed, reset
            gen_tcp:close(Socket)
    end.

headers(Socket, Parts, N, Version, Conn) ->
    case gen_tcp:recv(Socket, 0) of
        {ok, {http_header, _, 'Connection', _, Value}} ->
            headers(Socket, Parts, N, Version, connection_token(Value));
        {ok, {http_header, _, _, _, _}} ->
            headers(Socket, Parts, N, Version, Conn);
        {ok, http_eoh} ->
            respond(Socket, Parts, N, keep_alive(Version, Conn), Version);
        _ ->
            gen_tcp:close(Socket)
    end.

respond(Socket, Parts, N, KeepAlive, Version) ->
    Location = lists:join(integer_to_binary(rand:uniform(N)), Parts),
    Head = [<<"HTTP/1.1 302 Found\r\nLocation: ">>, Location,
            <<"\r\nContent-Length: 0\r\n">>],
    Tail = case {KeepAlive, Version} of
               {true, {1, 1}} -> <<"\r\n">>;
               {true, _} -> <<"Connection: keep-alive\r\n\r\n">>;
               {false, _} -> <<"Connection: close\r\n\r\n">>
           end,
    case gen_tcp:send(Socket, [Head, Tail]) of
        ok when KeepAlive -> connection(Socket, Parts, N);
        _ -> gen_tcp:close(Socket)
    end.

connection_token(Value) ->
    V = string:lowercase(Value),
    case {binary:match(V, <<"close">>), binary:match(V, <<"keep-alive">>)} of
        {nomatch, nomatch} -> default;
        {nomatch, _} -> keep_alive;
        _ -> close
    end.

%% HTTP/1.1 is persistent unless told otherwise; 1.0 only when asked.
keep_alive({1, 1}, Conn) -> Conn =/= close;
keep_alive(_, Conn) -> Conn =:= keep_alive.
