package dev.tern.nio;

import dev.tern.stack.UdpSocket;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.channels.MembershipKey;
import java.util.ArrayList;
import java.util.List;

/**
 * The multicast memberships of one Tern datagram channel: its keys, with the JDK's rules between them, and the
 * socket's filter for each group, recomputed from all the group's keys on every change. An IPv4 group (RFC 3376
 * §3.1): an any-source key gives EXCLUDE {its blocked sources}, source-specific keys give INCLUDE {their sources}, none
 * leaves the group. An IPv6 group has any-source keys only (the stack's MLD memberships have no source filters): the
 * socket is joined while a key holds it.
 *
 * <p>Guarded by the channel's state lock: every call holds it.
 */
final class DatagramMemberships {
    private final List<TernMembershipKey> keys = new ArrayList<>();

    /**
     * Joins {@code group} on {@code socket} for every source or ({@code source} not null) for one; returns the key,
     * the existing one where the channel holds it already.
     */
    MembershipKey join(TernDatagramChannel channel, UdpSocket socket, InetAddress group,
                       NetworkInterface networkInterface, InetAddress source) {
        if (source != null && (source.isAnyLocalAddress() || source.isMulticastAddress()
            || source.getClass() != group.getClass())) {
            throw new IllegalArgumentException("Source address is a wildcard, multicast or not of the group's type");
        }
        final boolean six = group instanceof Inet6Address;
        if (six && !socket.ipv6()) {
            throw new IllegalArgumentException("an IPv6 group on a channel whose Tern socket is IPv4 (bound to an IPv4"
                + " address, or a stack without IPv6)");
        }
        if (six && source != null) {
            // As the JDK where the system has no source filtering.
            throw new UnsupportedOperationException("Tern has no source filters for IPv6 groups yet: join "
                + group.getHostAddress() + " for any source");
        }
        for (TernMembershipKey existing : keys) {
            if (existing.group().equals(group)) {
                if (existing.sourceAddress() == null && source == null) {
                    return existing;
                }
                if (existing.sourceAddress() == null) {
                    throw new IllegalStateException("Already a member to receive all packets");
                }
                if (source == null) {
                    throw new IllegalStateException("Already have source-specific membership");
                }
                if (existing.sourceAddress().equals(source)) {
                    return existing;
                }
            }
        }
        final TernMembershipKey key = new TernMembershipKey(channel, group, networkInterface, source);
        keys.add(key);
        apply(socket, group);
        return key;
    }

    /** Drops {@code key}; the socket's filter follows unless the channel is closed ({@code socket} null then). */
    void drop(UdpSocket socket, TernMembershipKey key) {
        if (!key.isValid()) {
            return;
        }
        key.invalidate();
        keys.remove(key);
        if (socket != null) {
            apply(socket, key.group());
        }
    }

    void block(UdpSocket socket, TernMembershipKey key, InetAddress source) {
        requireValid(key);
        if (key.group() instanceof Inet6Address) {
            throw new UnsupportedOperationException("Tern has no source filters for IPv6 groups yet");
        }
        if (!key.blocked().contains(source)) {
            key.blocked().add(source);
            apply(socket, key.group());
        }
    }

    void unblock(UdpSocket socket, TernMembershipKey key, InetAddress source) {
        requireValid(key);
        if (!key.blocked().remove(source)) {
            throw new IllegalStateException("not blocked");
        }
        apply(socket, key.group());
    }

    /** The channel closed: every key is invalid (the socket leaves its groups as it closes). */
    void invalidateAll() {
        for (TernMembershipKey key : keys) {
            key.invalidate();
        }
        keys.clear();
    }

    private static void requireValid(TernMembershipKey key) {
        if (!key.isValid()) {
            throw new IllegalStateException("key is no longer valid");
        }
    }

    /** Sets the socket's filter for {@code group} from the group's keys. */
    private void apply(UdpSocket socket, InetAddress group) {
        if (group instanceof Inet6Address) {
            final dev.tern.core.net.Ipv6Address address = DatagramAddressing.ipv6(group);
            if (keys.stream().anyMatch(key -> key.group().equals(group))) {
                socket.join(address);
            } else {
                socket.leave(address);
            }
            return;
        }
        final int address = Addresses.ipv4(group);
        final List<Integer> sources = new ArrayList<>();
        TernMembershipKey anySource = null;
        for (TernMembershipKey key : keys) {
            if (key.group().equals(group)) {
                if (key.sourceAddress() == null) {
                    anySource = key;
                } else {
                    sources.add(Addresses.ipv4(key.sourceAddress()));
                }
            }
        }
        if (anySource != null) {
            socket.joinExcluding(address, anySource.blocked().stream().mapToInt(Addresses::ipv4).toArray());
        } else if (!sources.isEmpty()) {
            socket.joinSources(address, sources.stream().mapToInt(Integer::intValue).toArray());
        } else {
            socket.leave(address);
        }
    }
}
