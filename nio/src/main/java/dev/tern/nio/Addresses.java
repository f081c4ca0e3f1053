package dev.tern.nio;

import dev.tern.core.net.Ipv4Address;

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
