// The Java side of the classic "coroutine PHP vs Netty" experiment: a Netty 4 HTTP/1.1 server that
// answers every request with "Hello World", either at once (hello) or after a blocking wait in a
// thread pool (sleep), the shape the published comparison used. Built and started by `bin/weft bench`
// (src/Bench/Reference/Netty.php) from Debian's libnetty-java; it is not part of Weft.
//
//   java -cp netty-all.jar:BUILD NettyReference PORT EVENT_LOOP_THREADS SLEEP_MS POOL_THREADS
//
// PORT 0 picks a free port; the server prints "READY <port>" once it listens on 127.0.0.1.
// SLEEP_MS 0: answer on the event loop. Otherwise the handler runs in a pool of POOL_THREADS threads and
// calls Thread.sleep(SLEEP_MS) before answering, so each pool thread serves one request at a time.

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
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
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.util.CharsetUtil;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;

import java.net.InetSocketAddress;

public final class NettyReference {
    private static final byte[] BODY = "Hello World".getBytes(CharsetUtil.US_ASCII);

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int loopThreads = Integer.parseInt(args[1]);
        int sleepMs = Integer.parseInt(args[2]);
        int poolThreads = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup loops = new NioEventLoopGroup(loopThreads);
        EventExecutorGroup pool = sleepMs > 0 ? new DefaultEventExecutorGroup(poolThreads) : null;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            boss.shutdownGracefully();
            loops.shutdownGracefully();
            if (pool != null) {
                pool.shutdownGracefully();
            }
        }));
        ServerBootstrap bootstrap = new ServerBootstrap()
            .group(boss, loops)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_BACKLOG, 4096)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel channel) {
                    channel.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(1 << 20));
                    if (pool != null) {
                        channel.pipeline().addLast(pool, new Handler(sleepMs));
                    } else {
                        channel.pipeline().addLast(new Handler(0));
                    }
                }
            });
        Channel channel = bootstrap.bind("127.0.0.1", port).sync().channel();
        System.out.println("READY " + ((InetSocketAddress) channel.localAddress()).getPort());
        System.out.flush();
        channel.closeFuture().sync();
    }

    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final int sleepMs;

        Handler(int sleepMs) {
            this.sleepMs = sleepMs;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) throws Exception {
            if (sleepMs > 0) {
                Thread.sleep(sleepMs);
            }
            ByteBuf body = Unpooled.wrappedBuffer(BODY);
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            response.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (keepAlive) {
                response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                ctx.writeAndFlush(response);
            } else {
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
