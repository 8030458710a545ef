package avatar;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerExpectContinueHandler;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.util.AsciiString;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The avatar service on Netty's HTTP codec: every request gets a 302 to one of N fox
 * avatars; {@code /<rrggbb>.svg} is crates/avatar's fox in that colour and
 * {@code /random.svg} a 302 to a random colour. Netty's HTTP hello-world example, with
 * avatar's routes as the handler, and HTTP/2 over plain TCP (h2c) on the same port, as
 * Netty's HTTP/2 examples serve it: prior knowledge or the {@code Upgrade: h2c} dance,
 * each stream a child channel that the same handler answers.
 *
 * <p>Usage: {@code java -jar avatar-netty.jar PORT N [TEMPLATE]}
 */
public final class NettyServer {
    private static final String PLACEHOLDER = "{{color}}";

    public static void main(String[] args) throws Exception {
        int port = -1, images = 0;
        try {
            port = Integer.parseInt(args[0]);
            images = Integer.parseInt(args[1]);
        } catch (RuntimeException e) { // missing or non-numeric argument
        }
        if (args.length < 2 || args.length > 3 || port < 0 || port > 65535 || images < 1 || images > 65535) {
            System.err.println("usage: java -jar avatar-netty.jar PORT N [TEMPLATE]   (N in 1..65535, {n} in TEMPLATE)");
            System.exit(2);
        }
        String template = args.length > 2 ? args[2] : "https://avatar.example/Renard-{n}.png";
        Handler handler = new Handler(images, template.split("\\{n}", -1), foxParts());

        // One event loop per CPU (availableProcessors follows the affinity mask), plus
        // the acceptor, as in Netty's examples.
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = new NioEventLoopGroup(Runtime.getRuntime().availableProcessors());
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
                                    .addLast(cleartext(handler))
                                    .addLast(new HttpServerExpectContinueHandler())
                                    .addLast(handler);
                        }
                    });
            var ch = b.bind("127.0.0.1", port).sync().channel();
            System.out.println("listening on " + ch.localAddress().toString().replaceFirst("^/", ""));
            ch.closeFuture().sync();
        } finally {
            boss.shutdownGracefully();
            workers.shutdownGracefully();
        }
    }

    /**
     * HTTP/1.1 and h2c on one connection's pipeline, Netty's cleartext way: the handler
     * reads the first bytes; the HTTP/2 connection preface (prior knowledge) puts the
     * HTTP/2 handlers in its place at once; anything else is HTTP/1, through
     * {@code HttpServerCodec} and {@code HttpServerUpgradeHandler}, which switches to HTTP/2
     * on {@code Upgrade: h2c} (101) and passes every other request on to HANDLER.
     */
    static CleartextHttp2ServerUpgradeHandler cleartext(Handler handler) {
        HttpServerCodec http1 = new HttpServerCodec();
        HttpServerUpgradeHandler.UpgradeCodecFactory upgrades = protocol ->
                AsciiString.contentEquals(Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, protocol)
                        ? new Http2ServerUpgradeCodec(Http2FrameCodecBuilder.forServer().build(), streams(handler))
                        : null;
        // Prior knowledge: the frame codec and the multiplexer take this handler's place,
        // in front of the HTTP/1 handlers (which then see nothing), as the upgrade puts
        // them. A ChannelInitializer would add them at the pipeline's end instead, behind
        // the HTTP/1 handler, which keeps channelReadComplete from them: DATA frames then
        // wait in the flow controller for a flush that never comes.
        ChannelHandler priorKnowledge = new ChannelHandlerAdapter() {
            @Override
            public void handlerAdded(ChannelHandlerContext ctx) {
                // The codec first: the multiplexer looks for it when it is added.
                ctx.pipeline().replace(this, "h2-frames", Http2FrameCodecBuilder.forServer().build())
                        .addAfter("h2-frames", "h2-streams", streams(handler));
            }
        };
        return new CleartextHttp2ServerUpgradeHandler(http1, new HttpServerUpgradeHandler(http1, upgrades),
                priorKnowledge);
    }

    /**
     * One child channel per HTTP/2 stream; its frames become HttpObjects and back, so the
     * HTTP/1 handler answers streams unchanged.
     */
    static Http2MultiplexHandler streams(Handler handler) {
        return new Http2MultiplexHandler(new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel stream) {
                stream.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(true), handler);
            }
        });
    }

    /** avatar's fox (copied into the jar by the build), split at each {{color}}. */
    private static byte[][] foxParts() throws IOException {
        String fox;
        try (InputStream in = NettyServer.class.getResourceAsStream("/fox.svg")) {
            if (in == null) {
                throw new IOException("fox.svg is not in the jar: build it with mvn package");
            }
            fox = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String[] parts = fox.split(java.util.regex.Pattern.quote(PLACEHOLDER), -1);
        byte[][] bytes = new byte[parts.length][];
        for (int i = 0; i < parts.length; i++) {
            bytes[i] = parts[i].getBytes(StandardCharsets.UTF_8);
        }
        return bytes;
    }

    /** avatar's routes; stateless, so one instance serves every connection. */
    @Sharable
    static final class Handler extends SimpleChannelInboundHandler<HttpObject> {
        private static final CharSequence SVG_TYPE = "image/svg+xml; charset=utf-8";
        private static final CharSequence IMMUTABLE = "public, max-age=31536000, immutable";

        private final int images;
        private final String[] location;
        private final byte[][] fox;
        private final int foxLength;

        Handler(int images, String[] location, byte[][] fox) {
            this.images = images;
            this.location = location;
            this.fox = fox;
            int len = 7 * (fox.length - 1);
            for (byte[] part : fox) {
                len += part.length;
            }
            this.foxLength = len;
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush(); // pipelined requests read together are written together
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
            if (!(msg instanceof HttpRequest req)) {
                return; // request bodies (HttpContent) are dropped
            }
            if (req.decoderResult().isFailure()) {
                FullHttpResponse bad = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.BAD_REQUEST);
                bad.headers().set(HttpHeaderNames.CONTENT_LENGTH, 0).set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                ctx.writeAndFlush(bad).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            FullHttpResponse res = respond(ctx, req);
            boolean keepAlive = HttpUtil.isKeepAlive(req);
            if (keepAlive) {
                if (!req.protocolVersion().isKeepAliveDefault()) {
                    res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                }
            } else {
                res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            }
            ChannelFuture f = ctx.write(res);
            if (!keepAlive) {
                f.addListener(ChannelFutureListener.CLOSE);
            }
        }

        private FullHttpResponse respond(ChannelHandlerContext ctx, HttpRequest req) {
            String uri = req.uri();
            int q = uri.indexOf('?');
            String path = q < 0 ? uri : uri.substring(0, q);
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            String color = colorFromPath(path);
            if (color != null) {
                ByteBuf body = ctx.alloc().buffer(foxLength);
                byte[] hash = ("#" + color).getBytes(StandardCharsets.US_ASCII);
                for (int i = 0; i < fox.length; i++) {
                    if (i > 0) {
                        body.writeBytes(hash);
                    }
                    body.writeBytes(fox[i]);
                }
                FullHttpResponse res = new DefaultFullHttpResponse(req.protocolVersion(), HttpResponseStatus.OK, body);
                res.headers()
                        .set(HttpHeaderNames.CONTENT_TYPE, SVG_TYPE)
                        .set(HttpHeaderNames.CACHE_CONTROL, IMMUTABLE)
                        .set("x-content-type-options", "nosniff") // lowercase, as HttpHeaderNames are
                        .setInt(HttpHeaderNames.CONTENT_LENGTH, foxLength);
                return res;
            }
            String target;
            if (path.equals("/random.svg")) {
                target = String.format("/%06x.svg", rnd.nextInt(1 << 24));
            } else if (path.endsWith(".svg")) {
                FullHttpResponse res = new DefaultFullHttpResponse(req.protocolVersion(), HttpResponseStatus.NOT_FOUND,
                        Unpooled.EMPTY_BUFFER);
                res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
                return res;
            } else {
                String pick = Integer.toString(rnd.nextInt(1, images + 1));
                target = String.join(pick, location);
            }
            FullHttpResponse res = new DefaultFullHttpResponse(req.protocolVersion(), HttpResponseStatus.FOUND,
                    Unpooled.EMPTY_BUFFER);
            res.headers()
                    .set(HttpHeaderNames.LOCATION, target)
                    .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
            return res;
        }

        /** The lowercase colour if PATH is exactly / + 6 hex digits (any case) + .svg, as avatar's. */
        static String colorFromPath(String path) {
            if (path.length() != 11 || path.charAt(0) != '/' || !path.endsWith(".svg")) {
                return null;
            }
            for (int i = 1; i < 7; i++) {
                char c = path.charAt(i);
                if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
                    return null;
                }
            }
            return path.substring(1, 7).toLowerCase(java.util.Locale.ROOT);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // resets and the like: nothing to report
        }
    }
}
