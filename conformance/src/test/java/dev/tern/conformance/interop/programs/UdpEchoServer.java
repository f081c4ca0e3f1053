package dev.tern.conformance.interop.programs;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * A UDP echo server knowing nothing of Tern, on the JDK's dual-stack sockets: {@code UdpEchoServer channel PORT}
 * ({@code DatagramChannel.open()}, no family) or {@code UdpEchoServer classic PORT} ({@code new DatagramSocket(PORT)}).
 * Prints "listening on PORT" once bound, then "from ADDRESS" for each new peer. Under {@code tern exec} it serves
 * through Tern.
 */
public final class UdpEchoServer {
    private UdpEchoServer() {
    }

    public static void main(String[] args) throws IOException {
        final int port = Integer.parseInt(args[1]);
        if (args[0].equals("classic")) {
            classic(port);
        } else {
            channel(port);
        }
    }

    private static void channel(int port) throws IOException {
        try (DatagramChannel channel = DatagramChannel.open()) {
            channel.bind(new InetSocketAddress(port));
            listening(((InetSocketAddress) channel.getLocalAddress()).getPort());
            final ByteBuffer buffer = ByteBuffer.allocate(65536);
            SocketAddress last = null;
            while (true) {
                buffer.clear();
                final SocketAddress source = channel.receive(buffer);
                last = announce(source, last);
                buffer.flip();
                channel.send(buffer, source);
            }
        }
    }

    private static void classic(int port) throws IOException {
        try (DatagramSocket socket = new DatagramSocket(port)) {
            listening(socket.getLocalPort());
            final DatagramPacket packet = new DatagramPacket(new byte[65536], 65536);
            SocketAddress last = null;
            while (true) {
                packet.setLength(65536);
                socket.receive(packet);
                last = announce(packet.getSocketAddress(), last);
                socket.send(packet);
            }
        }
    }

    private static void listening(int port) {
        System.out.println("listening on " + port);
        System.out.flush();
    }

    /** Prints a peer the first time it sends (the address as the JDK reports it: IPv4 peers as Inet4Addresses). */
    private static SocketAddress announce(SocketAddress source, SocketAddress last) {
        if (!source.equals(last)) {
            System.out.println("from " + ((InetSocketAddress) source).getAddress().getHostAddress());
            System.out.flush();
        }
        return source;
    }
}
