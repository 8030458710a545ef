package backendcall;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.pool.AbstractChannelPoolHandler;
import io.netty.channel.pool.ChannelPool;
import io.netty.channel.pool.FixedChannelPool;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;

import java.io.IOException;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * The backend client: one {@link FixedChannelPool} of keep-alive HTTP/1.1 connections per
 * event loop, each pool's connections registered on that loop, so a front connection's call
 * is written, answered and relayed without leaving its thread.
 */
final class Backend {
    /** The call a pooled connection is serving (HTTP/1.1 without pipelining: one at a time). */
    private static final AttributeKey<Call> CALL = AttributeKey.valueOf("backendcall.call");

    private record Call(Promise<FullHttpResponse> answer, ChannelPool pool) {}

    private final Map<EventExecutor, ChannelPool> pools = new IdentityHashMap<>();
    private final String host;

    Backend(EventLoopGroup loops, String host, int port, int connectionsPerLoop) {
        this.host = host + ":" + port;
        for (EventExecutor loop : loops) {
            Bootstrap b = new Bootstrap()
                    .group((EventLoop) loop)
                    .channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000)
                    .remoteAddress(host, port);
            pools.put(loop, new FixedChannelPool(b, new AbstractChannelPoolHandler() {
                @Override
                public void channelCreated(Channel ch) {
                    ch.pipeline()
                            .addLast(new HttpClientCodec())
                            .addLast(new HttpObjectAggregator(64 * 1024))
                            .addLast(new AnswerHandler());
                }
            }, connectionsPerLoop, Integer.MAX_VALUE)); // calls beyond the pool wait their turn
        }
    }

    /**
     * Calls {@code GET /hello[?query]} on the calling loop's pool. The answer completes on
     * that loop; the caller releases it.
     */
    Future<FullHttpResponse> call(EventLoop loop, String query, String requestId) {
        Promise<FullHttpResponse> answer = loop.newPromise();
        ChannelPool pool = pools.get(loop);
        pool.acquire().addListener((Future<Channel> acquired) -> {
            if (!acquired.isSuccess()) {
                answer.tryFailure(acquired.cause());
                return;
            }
            Channel ch = acquired.getNow();
            FullHttpRequest req = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET,
                    query == null ? "/hello" : "/hello?" + query, Unpooled.EMPTY_BUFFER);
            req.headers().set(HttpHeaderNames.HOST, host);
            if (requestId != null) {
                req.headers().set("X-Request-Id", requestId);
            }
            ch.attr(CALL).set(new Call(answer, pool));
            ch.writeAndFlush(req).addListener(written -> {
                if (!written.isSuccess()) {
                    fail(ch, written.cause());
                    ch.close();
                }
            });
        });
        return answer;
    }

    /** Fails the connection's call, if any, and gives the connection back (closed, it is dropped). */
    private static void fail(Channel ch, Throwable cause) {
        Call call = ch.attr(CALL).getAndSet(null);
        if (call != null) {
            call.pool().release(ch);
            call.answer().tryFailure(cause);
        }
    }

    /** Hands each answer to its call, and the connection back to the pool. */
    private static final class AnswerHandler extends SimpleChannelInboundHandler<FullHttpResponse> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse answer) {
            Call call = ctx.channel().attr(CALL).getAndSet(null);
            if (call == null) { // an answer nobody asked for: the connection is out of step
                ctx.close();
                return;
            }
            if (!HttpUtil.isKeepAlive(answer)) {
                ctx.close();
            }
            // Back in the pool first, so the next call queued on this loop can use it.
            call.pool().release(ctx.channel());
            if (!call.answer().trySuccess(answer.retain())) {
                answer.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            fail(ctx.channel(), new IOException("the backend closed the connection"));
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            fail(ctx.channel(), cause);
            ctx.close();
        }
    }
}
