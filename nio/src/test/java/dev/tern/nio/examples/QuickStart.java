package dev.tern.nio.examples;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.ethernet.memory.MemoryPipe;
import dev.tern.nio.TernSelectorProvider;
import dev.tern.stack.NetStack;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;

/**
 * The example of docs/JAVA.md (the README's quick start is the in-memory half, as a program of its own). With no
 * arguments: two Tern stacks in this process, joined by an in-memory pipe (no
 * device, no privilege), exchange a UDP datagram and a TCP echo through ordinary NIO channels. With
 * {@code afpacket IFACE PEER}: one Tern stack on AF_PACKET interface IFACE (root; an interface without a kernel
 * address) sends the same datagram and connection to a kernel host PEER (its UDP and TCP echo on port 7).
 */
public final class QuickStart {
    private QuickStart() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 3 && args[0].equals("afpacket")) {
            onAfPacket(args[1], InetAddress.getByName(args[2]));
        } else {
            inMemory();
        }
    }

    /** Two stacks, 198.18.0.1 (server) and 198.18.0.2 (client), each behind its own provider. */
    static void inMemory() throws IOException {
        try (MemoryPipe pipe = MemoryPipe.create(0x0200_0000_0001L, 0x0200_0000_0002L, 1500, 1 << 20, true);
             TernSelectorProvider server = TernSelectorProvider.open(NetStack.builder().name("server")
                 .link(pipe.first()).address("198.18.0.1/24").build());
             TernSelectorProvider client = TernSelectorProvider.open(NetStack.builder().name("client")
                 .link(pipe.second()).address("198.18.0.2/24").build())) {
            final InetAddress serverAddress = InetAddress.getByName("198.18.0.1");

            // UDP: a datagram and its source.
            try (DatagramChannel receiver = server.openDatagramChannel(StandardProtocolFamily.INET);
                 DatagramChannel sender = client.openDatagramChannel(StandardProtocolFamily.INET)) {
                receiver.bind(new InetSocketAddress(serverAddress, 5000));
                sender.send(text("hello over UDP"), new InetSocketAddress(serverAddress, 5000));
                final ByteBuffer buffer = ByteBuffer.allocate(100);
                final SocketAddress source = receiver.receive(buffer);
                System.out.println("udp: '" + string(buffer) + "' from " + source);
            }

            // TCP: connect, accept, echo.
            try (ServerSocketChannel listener = server.openServerSocketChannel();
                 SocketChannel channel = client.openSocketChannel()) {
                listener.bind(new InetSocketAddress(7));
                channel.connect(new InetSocketAddress(serverAddress, 7));
                try (SocketChannel accepted = listener.accept()) {
                    channel.write(text("hello over TCP"));
                    final ByteBuffer buffer = ByteBuffer.allocate(100);
                    accepted.read(buffer);
                    accepted.write(buffer.flip());
                }
                System.out.println("tcp: '" + readAll(channel) + "' echoed by " + channel.getRemoteAddress());
            }
        }
    }

    /** One stack on AF_PACKET, talking to a kernel host's echo services (port 7, UDP and TCP). */
    static void onAfPacket(String device, InetAddress peer) throws IOException {
        final NetStack stack = NetStack.builder().name("quickstart")
            .link(AfPacketLink.open(device, AfPacketOptions.defaults().rxFrameRing(AfPacketOptions.RX_FRAME_SIZE_AUTO)))
            .address("198.18.0.2/24").build();
        try (TernSelectorProvider tern = TernSelectorProvider.open(stack)) {
            exchangeWith(tern, new InetSocketAddress(peer, 7));
        }
    }

    /** A datagram and a connection to {@code echo}: prints what came back. */
    public static void exchangeWith(SelectorProvider provider, InetSocketAddress echo) throws IOException {
        try (DatagramChannel udp = provider.openDatagramChannel(StandardProtocolFamily.INET)) {
            udp.send(text("hello over UDP"), echo);
            final ByteBuffer buffer = ByteBuffer.allocate(100);
            final SocketAddress from = udp.receive(buffer);
            System.out.println("udp: '" + string(buffer) + "' echoed by " + from);
        }
        try (SocketChannel tcp = provider.openSocketChannel()) {
            tcp.connect(echo);
            tcp.write(text("hello over TCP"));
            tcp.shutdownOutput();
            System.out.println("tcp: '" + readAll(tcp) + "' echoed by " + tcp.getRemoteAddress());
        }
    }

    private static ByteBuffer text(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII));
    }

    private static String string(ByteBuffer buffer) {
        return new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
    }

    private static String readAll(SocketChannel channel) throws IOException {
        final ByteBuffer buffer = ByteBuffer.allocate(100);
        while (buffer.position() < 14 && channel.read(buffer) >= 0) {
            Thread.onSpinWait();
        }
        return string(buffer);
    }
}
