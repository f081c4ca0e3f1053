package dev.tern.nio;

import dev.tern.core.net.Ipv6Address;
import dev.tern.stack.NetStack;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;

import java.lang.foreign.MemorySegment;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.UnsupportedAddressTypeException;

/**
 * The two families of one Tern datagram channel: which socket a channel opens, what its binds and connects mean, and
 * its peers' addresses. An {@code INET} channel takes IPv4 addresses only ({@link UnsupportedAddressTypeException}
 * otherwise, as the JDK's {@code Net.checkAddress}); an {@code INET6} one is dual-stack as the JDK's: on a stack with
 * IPv6 its socket is {@link NetStack#openUdpDualStack} unless it is bound to an address, an IPv4 address (also written
 * {@code ::ffff:a.b.c.d}) is IPv4, and an IPv4 peer is reported as an {@code Inet4Address}.
 *
 * <p>Per datagram it decodes a send's target once while the program keeps sending to the same
 * {@link InetSocketAddress} object, and makes a receive's source once while datagrams keep coming from the same peer
 * (the JDK's channel caches its last sender the same way): allocation-free in the steady state. The source half is
 * used under the channel's read lock, the target half under its write lock.
 */
final class DatagramAddressing {
    private final boolean inet6;

    private InetSocketAddress lastSource;
    private boolean lastSourceIpv6;
    private int lastSourceAddress;
    private long lastSourceHigh;
    private long lastSourceLow;
    private int lastSourcePort;

    private InetSocketAddress lastTarget;
    private boolean targetIpv6;
    private int targetAddress;
    private long targetHigh;
    private long targetLow;

    DatagramAddressing(boolean inet6) {
        this.inet6 = inet6;
    }

    /** Whether the channel is {@code INET6}, so dual-stack. */
    boolean inet6() {
        return inet6;
    }

    // ------------------------------------------------------------------------------------------ families (cold)

    /** An IPv6 address proper: neither the wildcard nor IPv4-mapped (which are the IPv4 side's). */
    static boolean isIpv6(InetAddress address) {
        if (!(address instanceof Inet6Address) || address.isAnyLocalAddress()) {
            return false;
        }
        final Ipv6Address six = ipv6(address);
        return !Ipv6Address.isIpv4Mapped(six.high(), six.low());
    }

    static Ipv6Address ipv6(InetAddress address) {
        return Ipv6Address.of(address.getAddress());
    }

    /** The IPv4 address of an {@code Inet4Address}, an IPv4-mapped one, or 0 for a wildcard. */
    static int ipv4(InetAddress address) {
        if (address.isAnyLocalAddress()) {
            return 0;
        }
        if (address instanceof Inet6Address) {
            final Ipv6Address six = ipv6(address);
            if (!Ipv6Address.isIpv4Mapped(six.high(), six.low())) {
                throw new UnsupportedAddressTypeException();
            }
            return (int) six.low();
        }
        return Addresses.ipv4(address);
    }

    /** The JDK's family check: an {@code INET} channel takes no {@code Inet6Address}, the wildcard {@code ::} included. */
    InetSocketAddress checkFamily(InetSocketAddress address) {
        if (!inet6 && address.getAddress() instanceof Inet6Address) {
            throw new UnsupportedAddressTypeException();
        }
        return address;
    }

    /**
     * The socket for a channel the rules gave to Tern, knowing its first bind ({@code bindTo}; null for a connect,
     * send or join first): IPv4 for an {@code INET} channel, on a stack without IPv6, or for a bind to an IPv4
     * address; IPv6 only for a bind to an IPv6 address; else dual-stack.
     */
    UdpSocket open(NetStack stack, InetSocketAddress bindTo) throws TernSocketException {
        if (!inet6 || !stack.udp().hasIpv6()) {
            return stack.openUdp();
        }
        final InetAddress address = bindTo == null ? null : bindTo.getAddress();
        if (address == null || address.isAnyLocalAddress()) {
            return stack.openUdpDualStack();
        }
        return isIpv6(address) ? stack.openUdp6() : stack.openUdp();
    }

    /** Binds {@code s} to {@code address}; returns the local address the channel reports. */
    static InetSocketAddress bind(UdpSocket s, InetSocketAddress address, NetStack stack) throws TernSocketException {
        final InetAddress inet = address.getAddress();
        if (s.ipv6() && (isIpv6(inet) || inet.isAnyLocalAddress() || !s.dualStack())) {
            final Ipv6Address six = inet.isAnyLocalAddress() ? Ipv6Address.UNSPECIFIED : ipv6(inet);
            if (!inet.isAnyLocalAddress() && !isIpv6(inet)) {
                throw new UnsupportedAddressTypeException();
            }
            return Addresses.socket6(six, s.bind(six, address.getPort()));
        }
        final int four = ipv4(inet);
        final int port = s.bind(four, address.getPort());
        return Addresses.socket(four == 0 ? stack.address().address() : four, port);
    }

    /** The local address of a socket bound implicitly (to its family's wildcard) to {@code port}. */
    static InetSocketAddress implicitLocal(UdpSocket s, int port, NetStack stack) {
        return s.ipv6() ? Addresses.socket6(Ipv6Address.UNSPECIFIED, port) : Addresses.socket(stack.address().address(), port);
    }

    /**
     * Connects {@code s} to {@code remote} (the wildcard: this host, as the JDK); returns the local address the channel
     * reports for a socket this connect bound: the source the stack sends from (an IPv6 one by RFC 6724 §5).
     */
    static InetSocketAddress connect(UdpSocket s, InetSocketAddress remote, NetStack stack) throws TernSocketException {
        final InetAddress inet = remote.getAddress();
        if (isIpv6(inet)) {
            if (!s.ipv6()) {
                throw new UnsupportedAddressTypeException();
            }
            final Ipv6Address peer = ipv6(inet);
            s.connect(peer, remote.getPort());
            final int source = stack.call(() -> stack.ipv6().addresses().sourceFor(peer.high(), peer.low()));
            final Ipv6Address local = source < 0 ? Ipv6Address.UNSPECIFIED
                : stack.call(() -> stack.ipv6().addresses().address(source).address());
            return Addresses.socket6(local, s.localPort());
        }
        final int four = ipv4(inet);
        s.connect(four == 0 ? stack.address().address() : four, remote.getPort());
        return Addresses.socket(stack.address().address(), s.localPort());
    }

    // ------------------------------------------------------------------------------------------ per datagram

    /** The last datagram's source, made again only when it differs from the one before. */
    InetSocketAddress source(UdpSocket s) {
        final boolean six = s.lastSourceIpv6();
        final int port = s.lastSourcePort();
        if (six) {
            final long high = s.lastSourceHigh();
            final long low = s.lastSourceLow();
            if (lastSource == null || !lastSourceIpv6 || high != lastSourceHigh || low != lastSourceLow
                || port != lastSourcePort) {
                lastSource = Addresses.socket6(new Ipv6Address(high, low), port);
                lastSourceHigh = high;
                lastSourceLow = low;
            }
        } else {
            final int address = s.lastSourceAddress();
            if (lastSource == null || lastSourceIpv6 || address != lastSourceAddress || port != lastSourcePort) {
                lastSource = Addresses.socket(address, port);
                lastSourceAddress = address;
            }
        }
        lastSourceIpv6 = six;
        lastSourcePort = port;
        return lastSource;
    }

    /** Whether {@code target} is the object the last send decoded. */
    boolean isLastTarget(Object target) {
        return target == lastTarget;
    }

    /**
     * Decodes a send's target for {@code s} (the wildcard: this host); the sends that follow go to it. A new object
     * only: see {@link #isLastTarget}.
     */
    void target(UdpSocket s, InetSocketAddress target, NetStack stack) {
        final InetAddress inet = target.getAddress();
        if (isIpv6(inet)) {
            if (!s.ipv6()) {
                throw new UnsupportedAddressTypeException();
            }
            final Ipv6Address six = ipv6(inet);
            targetHigh = six.high();
            targetLow = six.low();
            targetIpv6 = true;
        } else {
            final int four = ipv4(inet);
            targetAddress = four == 0 ? stack.address().address() : four;
            targetIpv6 = false;
        }
        lastTarget = target;
    }

    /** Queues a datagram to the decoded target; false when the send ring has no room now. */
    boolean sendToTarget(UdpSocket s, MemorySegment data, long offset, int length) throws TernSocketException {
        final int port = lastTarget.getPort();
        return targetIpv6 ? s.sendTo6(targetHigh, targetLow, port, data, offset, length)
            : s.sendTo(targetAddress, port, data, offset, length);
    }
}
