package backendcall;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * One client connection: each request starts a backend call; answers go out in request order
 * (pipelined requests may be answered by the backend out of order), each as soon as it and
 * every one before it are ready.
 */
final class FrontHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
    /** A request's place in line, and its answer once known. */
    private static final class Slot {
        final boolean keepAlive;
        FullHttpResponse response;

        Slot(boolean keepAlive) {
            this.keepAlive = keepAlive;
        }
    }

    private final Backend backend;
    private final ArrayDeque<Slot> inOrder = new ArrayDeque<>();

    FrontHandler(Backend backend) {
        this.backend = backend;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        Slot slot = new Slot(req.decoderResult().isSuccess() && HttpUtil.isKeepAlive(req));
        inOrder.add(slot);
        if (!req.decoderResult().isSuccess()) {
            answer(ctx, slot, text(HttpResponseStatus.BAD_REQUEST, "bad request\n"));
            return;
        }
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        if (!path.equals("/")) {
            answer(ctx, slot, text(HttpResponseStatus.NOT_FOUND, "not found\n"));
            return;
        }
        if (!req.method().equals(HttpMethod.GET)) {
            FullHttpResponse r = text(HttpResponseStatus.METHOD_NOT_ALLOWED, "method not allowed\n");
            r.headers().set(HttpHeaderNames.ALLOW, "GET");
            answer(ctx, slot, r);
            return;
        }
        String id = req.headers().get("X-Request-Id");
        backend.call(ctx.channel().eventLoop(), q < 0 ? null : uri.substring(q + 1), id)
                .addListener(done -> {
                    if (!done.isSuccess()) {
                        answer(ctx, slot, text(HttpResponseStatus.BAD_GATEWAY, "backend failed: " + done.cause() + "\n"));
                        return;
                    }
                    FullHttpResponse from = (FullHttpResponse) done.getNow();
                    if (!from.status().equals(HttpResponseStatus.OK)) {
                        answer(ctx, slot, text(HttpResponseStatus.BAD_GATEWAY, "backend answered " + from.status() + "\n"));
                        from.release();
                        return;
                    }
                    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, from.content());
                    r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
                    String echoed = from.headers().get("X-Request-Id");
                    if (echoed != null) {
                        r.headers().set("X-Request-Id", echoed);
                    }
                    answer(ctx, slot, r); // the body moves over: released when written
                });
    }

    /** Records a request's answer and writes every answer now at the head of the line. */
    private void answer(ChannelHandlerContext ctx, Slot slot, FullHttpResponse response) {
        if (!ctx.channel().isActive()) {
            response.release();
            return;
        }
        HttpUtil.setContentLength(response, response.content().readableBytes());
        slot.response = response;
        boolean wrote = false;
        while (!inOrder.isEmpty() && inOrder.peek().response != null) {
            Slot head = inOrder.poll();
            wrote = true;
            if (head.keepAlive) {
                ctx.write(head.response);
                continue;
            }
            head.response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(head.response).addListener(ChannelFutureListener.CLOSE);
            drop();
            return;
        }
        if (wrote) {
            ctx.flush();
        }
    }

    private static FullHttpResponse text(HttpResponseStatus status, String body) {
        ByteBuf content = Unpooled.copiedBuffer(body, StandardCharsets.UTF_8);
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.TEXT_PLAIN);
        return r;
    }

    /** Frees answers that will never be written (the connection is closing). */
    private void drop() {
        for (Slot s : inOrder) {
            if (s.response != null) {
                s.response.release();
            }
        }
        inOrder.clear();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        drop();
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
