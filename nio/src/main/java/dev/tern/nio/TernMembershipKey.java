package dev.tern.nio;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.channels.MembershipKey;
import java.nio.channels.MulticastChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A Tern datagram channel's membership of a multicast group: for every source, or ({@link #sourceAddress()} not
 * null) for one source. Blocking a source of an any-source membership turns the socket's filter for the group into
 * EXCLUDE {blocked} (IGMPv3 tells the network); the channel recomputes the group's filter from all its keys on every
 * change ({@link DatagramMemberships}).
 *
 * <p>Thread-safe; changes are serialised on the channel's membership lock.
 */
final class TernMembershipKey extends MembershipKey {
    private final TernDatagramChannel channel;
    private final InetAddress group;
    private final NetworkInterface networkInterface;
    private final InetAddress source;
    private final List<InetAddress> blocked = new ArrayList<>();
    private volatile boolean valid = true;

    TernMembershipKey(TernDatagramChannel channel, InetAddress group, NetworkInterface networkInterface, InetAddress source) {
        this.channel = channel;
        this.group = group;
        this.networkInterface = networkInterface;
        this.source = source;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    void invalidate() {
        valid = false;
    }

    @Override
    public void drop() {
        channel.drop(this);
    }

    @Override
    public MembershipKey block(InetAddress address) throws IOException {
        Objects.requireNonNull(address, "source");
        if (source != null) {
            throw new IllegalStateException("key is source-specific");
        }
        if (address.isMulticastAddress() || address.isAnyLocalAddress() || address.getClass() != group.getClass()) {
            throw new IllegalArgumentException("Source address is different type to group or not a unicast address");
        }
        channel.block(this, address);
        return this;
    }

    @Override
    public MembershipKey unblock(InetAddress address) {
        if (source != null) {
            throw new IllegalStateException("key is source-specific");
        }
        channel.unblock(this, address);
        return this;
    }

    /** The sources this any-source key blocks; guarded by the channel's membership lock. */
    List<InetAddress> blocked() {
        return blocked;
    }

    @Override
    public MulticastChannel channel() {
        return channel;
    }

    @Override
    public InetAddress group() {
        return group;
    }

    @Override
    public NetworkInterface networkInterface() {
        return networkInterface;
    }

    @Override
    public InetAddress sourceAddress() {
        return source;
    }

    @Override
    public String toString() {
        return "<" + group.getHostAddress() + "," + (networkInterface == null ? "tern" : networkInterface.getName())
            + (source == null ? "" : "," + source.getHostAddress()) + ">" + (valid ? "" : " invalid");
    }
}
