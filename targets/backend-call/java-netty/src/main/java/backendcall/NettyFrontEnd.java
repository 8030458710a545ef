package backendcall;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;

import java.net.URI;

/**
 * The reactive front end: a Netty HTTP server that answers {@code GET /} by calling the
 * backend's {@code /hello} with a Netty HTTP client on the same event loop as the incoming
 * connection, over a keep-alive pool of backend connections per loop. No thread ever waits.
 *
 * <p>Usage: {@code java -jar backend-netty.jar PORT BACKEND_URL [POOL]}
 */
public final class NettyFrontEnd {
    static final String USAGE = "usage: java -jar backend-netty.jar PORT BACKEND_URL [POOL]"
            + "   (BACKEND_URL like http://127.0.0.1:8081; POOL: backend connections per event loop, 1..100000, default 1000)";

    public static void main(String[] args) throws Exception {
        int port = -1, pool = 1000;
        URI backend = null;
        try {
            port = Integer.parseInt(args[0]);
            backend = backendUri(args[1]);
            if (args.length > 2) {
                pool = Integer.parseInt(args[2]);
            }
        } catch (RuntimeException e) { // missing, non-numeric or malformed argument
        }
        if (args.length < 2 || args.length > 3 || port < 0 || port > 65535 || backend == null || pool < 1 || pool > 100_000) {
            System.err.println(USAGE);
            System.exit(2);
        }

        // One event loop per CPU (availableProcessors follows the affinity mask), plus the
        // acceptor, as in Netty's examples. The backend client runs on the same loops.
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = new NioEventLoopGroup(Runtime.getRuntime().availableProcessors());
        Backend client = new Backend(workers, backend.getHost(), backend.getPort(), pool);
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 4096)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast(new HttpServerCodec())
                                    .addLast(new HttpObjectAggregator(64 * 1024))
                                    .addLast(new FrontHandler(client));
                        }
                    });
            Channel ch;
            try {
                ch = b.bind("127.0.0.1", port).sync().channel();
            } catch (Exception e) { // Netty rethrows the bind's checked exception undeclared
                if (!(e instanceof java.net.BindException)) {
                    throw e;
                }
                System.err.println("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage() + " (is another server on that port?)");
                System.exit(2);
                return;
            }
            System.out.println("listening on " + ch.localAddress().toString().replaceFirst("^/", ""));
            ch.closeFuture().sync();
        } finally {
            boss.shutdownGracefully();
            workers.shutdownGracefully();
        }
    }

    /** The backend's base URL: http, a host and a port, nothing after them. */
    static URI backendUri(String s) {
        URI u = URI.create(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
        if (!"http".equals(u.getScheme()) || u.getHost() == null || u.getPort() < 0
                || !(u.getRawPath() == null || u.getRawPath().isEmpty()) || u.getRawQuery() != null) {
            return null;
        }
        return u;
    }
}
