package dev.tern.nio.agent;

/**
 * What {@code tern exec} does for the classic {@code java.net} sockets. Since JDK 13 {@code Socket} and
 * {@code ServerSocket} run on the JDK's own NIO implementation ({@code NioSocketImpl}) and, since JDK 15,
 * {@code DatagramSocket} and {@code MulticastSocket} on a {@code DatagramChannel} of the JDK's <em>default</em>
 * provider, not of the system-wide one: neither passes through a {@code SelectorProvider}, so the classic sockets
 * stay on the kernel under {@code tern exec}. The only hooks left, {@code Socket.setSocketImplFactory} and
 * {@code DatagramSocket.setDatagramSocketImplFactory}, are deprecated, take one factory per JVM (a program or
 * library that sets its own then fails), and would need a {@code SocketImpl} over Tern's TCP that this version does
 * not have. docs/NIO.md says what is covered.
 */
public final class ClassicSockets {
    private ClassicSockets() {
    }

    /** Nothing to install: classic sockets stay on the kernel (see the class comment). */
    public static void install() {
    }
}
