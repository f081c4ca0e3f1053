package dev.tern.nio.agent;

import dev.tern.nio.TernSelectorProvider;

/**
 * What {@code tern exec} does for the classic {@code java.net} sockets. Since JDK 13 {@code Socket} and
 * {@code ServerSocket} run on the JDK's own implementation ({@code SocketImpl.createPlatformSocketImpl}) and, since
 * JDK 15, {@code DatagramSocket} and {@code MulticastSocket} on a {@code DatagramChannel} of the JDK's
 * <em>default</em> provider ({@code sun.nio.ch.DefaultSelectorProvider.get()}), not of the system-wide one: neither
 * passes through a {@code SelectorProvider}. The JDK still has one hook each, deprecated and one per JVM:
 * {@code Socket.setSocketImplFactory}/{@code ServerSocket.setSocketFactory} and
 * {@code DatagramSocket.setDatagramSocketImplFactory}. This installs them (Tern's implementations run on Tern's
 * channels, so the rules apply), unless {@code tern.classic=false}.
 */
public final class ClassicSockets {
    private ClassicSockets() {
    }

    public static void install() {
        if (!"false".equals(System.getProperty("tern.classic"))) {
            TernSelectorProvider.installClassicSockets();
        }
    }
}
