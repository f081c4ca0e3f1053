package dev.tern.nio.examples;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.nio.TernSelectorProvider;
import dev.tern.stack.NetStack;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;

import java.net.InetSocketAddress;
import java.nio.channels.spi.SelectorProvider;

/**
 * A Netty echo server on Tern, with nothing Tern-specific but the provider handed to Netty's NIO transport: the
 * event loop's selector ({@code NioIoHandler.newFactory(provider)}) and the server channel
 * ({@code new NioServerSocketChannel(provider)}, whose accepted children inherit it).
 *
 * <pre>
 *   # as root, with tern0 a veth end without a kernel address (see docs/LINKS.md):
 *   java --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
 *        --sun-misc-unsafe-memory-access=allow -cp ... dev.tern.nio.examples.NettyEchoServer tern0 198.18.0.2/24 7
 * </pre>
 * The same class runs unmodified under {@code tern exec}: {@link #main} with no arguments takes
 * {@code SelectorProvider.provider()}, which {@code tern exec} made Tern's.
 */
public final class NettyEchoServer implements AutoCloseable {
    private final EventLoopGroup group;
    private final Channel channel;

    private NettyEchoServer(EventLoopGroup group, Channel channel) {
        this.group = group;
        this.channel = channel;
    }

    /** Starts an echo server on {@code provider}'s channels, bound to {@code address}; returns once it listens. */
    public static NettyEchoServer start(SelectorProvider provider, InetSocketAddress address) throws InterruptedException {
        final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory(provider));
        try {
            final Channel channel = new ServerBootstrap().group(group)
                .channelFactory(() -> new NioServerSocketChannel(provider))
                // A client that half-closes still gets every byte back: see Echo.userEventTriggered.
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel child) {
                        child.pipeline().addLast(new Echo());
                    }
                })
                .bind(address).sync().channel();
            return new NettyEchoServer(group, channel);
        } catch (InterruptedException | RuntimeException e) {
            group.shutdownGracefully();
            throw e;
        }
    }

    /**
     * Writes back what it reads; flushes once per read batch. When the client half-closes, it closes only after its
     * last echo is written: closing at once would drop what still waits in Netty's outbound buffer (whose size
     * depends on the socket's send buffer, 128 KiB on Tern by default).
     */
    private static final class Echo extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext context, Object event) {
            if (event instanceof ChannelInputShutdownEvent) {
                context.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
            } else {
                context.fireUserEventTriggered(event);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext context, Object message) {
            context.write(message);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext context) {
            context.flush();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext context, Throwable cause) {
            context.close();
        }
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * {@code NettyEchoServer IFACE CIDR PORT}: a stack on AF_PACKET interface IFACE at CIDR, echo on PORT.
     * {@code NettyEchoServer PORT}: on {@code SelectorProvider.provider()} (Tern's under {@code tern exec}).
     */
    public static void main(String[] args) throws Exception {
        final SelectorProvider provider;
        final int port;
        if (args.length == 3) {
            final NetStack stack = NetStack.builder().name("netty-echo")
                .link(AfPacketLink.open(args[0], AfPacketOptions.defaults().rxFrameRing(AfPacketOptions.RX_FRAME_SIZE_AUTO)))
                .address(args[1]).build();
            provider = TernSelectorProvider.open(stack);
            port = Integer.parseInt(args[2]);
        } else {
            provider = SelectorProvider.provider();
            port = args.length == 1 ? Integer.parseInt(args[0]) : 7;
        }
        try (NettyEchoServer server = start(provider, new InetSocketAddress(port))) {
            System.out.println("netty echo on " + server.localAddress() + " via " + provider.getClass().getSimpleName());
            System.out.flush();
            Thread.currentThread().join();
        }
    }
}
