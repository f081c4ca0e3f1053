package dev.tern.nio;

import dev.tern.core.net.Ipv4Address;
import dev.tern.core.net.Ipv6Address;
import dev.tern.stack.TcpConnection;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;

/** Conversions between the JDK's socket addresses and Tern's packed IPv4 {@code int}s. Cold path except where noted. */
final class Addresses {
    private Addresses() {
    }

    static int ipv4(InetAddress address) {
        final byte[] b = address.getAddress();
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
    }

    static InetAddress inet(int address) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (address >>> 24), (byte) (address >>> 16),
                (byte) (address >>> 8), (byte) address});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // four bytes are always a valid address
        }
    }

    static InetSocketAddress socket(int address, int port) {
        return new InetSocketAddress(inet(address), port);
    }

    /** An IPv6 socket address (the JDK makes an {@code Inet6Address} of it). */
    static InetSocketAddress socket6(Ipv6Address address, int port) {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(address.toBytes()), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // sixteen bytes are always a valid address
        }
    }

    /** The remote end of a Tern connection as the JDK reports it: an IPv4 peer as an {@code Inet4Address}. */
    static InetSocketAddress remote(TcpConnection connection) {
        final Ipv6Address six = connection.remoteAddress6();
        return six != null ? socket6(six, connection.remotePort())
            : socket(connection.remoteAddress(), connection.remotePort());
    }

    /** The local end of a Tern connection: over IPv6 its IPv6 address, else the stack's IPv4 address. */
    static InetSocketAddress local(TcpConnection connection, int ipv4Address) {
        final Ipv6Address six = connection.localAddress6();
        return six != null ? socket6(six, connection.localPort()) : socket(ipv4Address, connection.localPort());
    }

    /**
     * The socket address a Tern channel was given, checked as the JDK's channels check it: an
     * {@link InetSocketAddress} ({@link UnsupportedAddressTypeException} otherwise) that is resolved
     * ({@link UnresolvedAddressException}).
     */
    static InetSocketAddress checked(SocketAddress address) {
        if (!(address instanceof InetSocketAddress inet)) {
            throw new UnsupportedAddressTypeException();
        }
        if (inet.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return inet;
    }

    /** The IPv4 address of a resolved socket address; 0 for a wildcard (also "::"). */
    static int ipv4(InetSocketAddress address) {
        final InetAddress inet = address.getAddress();
        if (inet.isAnyLocalAddress()) {
            return 0;
        }
        if (!(inet instanceof Inet4Address)) {
            throw new UnsupportedAddressTypeException();
        }
        return ipv4(inet);
    }

    static String format(int address, int port) {
        return Ipv4Address.format(address) + ":" + port;
    }
}
